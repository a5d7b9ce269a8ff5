#!/usr/bin/env node
// Starts `planport mcp` for the Claude Code plugin. Which planport: $PLANPORT_BIN when set; the
// installed checkout this plugin sits in (claude --plugin-dir integrations/claude-code in a clone
// after npm install); else a `planport` on PATH. Nothing is downloaded on its own: an unknown
// package must not run with the repository's access. stdout is the MCP transport, so this
// script never writes to it: the child gets this process's stdio as it is.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const checkout = join(root, "local-client", "bin", "planport.js");
// A checkout without its dependencies installed (a marketplace clone) cannot run planport.
const installed = existsSync(join(root, "node_modules", "tsx", "package.json"));
const extra = process.argv.slice(2);

function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

let command;
let args;
if (process.env.PLANPORT_BIN) {
  [command, args] = [process.env.PLANPORT_BIN, ["mcp", ...extra]];
} else if (existsSync(checkout) && installed) {
  [command, args] = [process.execPath, [checkout, "mcp", ...extra]];
} else if (onPath("planport")) {
  [command, args] = ["planport", ["mcp", ...extra]];
} else {
  process.stderr.write(
    "planport plugin: planport is not installed. Put `planport` on PATH (run `npm install && " +
      "npm link` in a planport clone), set PLANPORT_BIN to its path, or load the plugin from an " +
      "installed clone: claude --plugin-dir <clone>/integrations/claude-code\n",
  );
  process.exit(1);
}
const child = spawn(command, args, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("error", (err) => {
  process.stderr.write(`planport plugin: cannot start ${command}: ${err.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
