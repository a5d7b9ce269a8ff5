#!/usr/bin/env node
// The `planport` command: registers tsx so the TypeScript sources run as they are (no build
// step, `npx planport …` works in a clone), then hands over to the CLI.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli.ts");
const code = await main(process.argv);
// Let piped output drain before exiting (open keep-alive sockets must not hold the process).
process.stdout.write("", () => process.exit(code));
