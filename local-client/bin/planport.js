#!/usr/bin/env node
// The `planport` command. It runs the built CLI (dist/cli/, made by `npm run build`, which
// `npm ci` and `npm pack` run): no TypeScript is transpiled when the command starts.
// A reader that went away (`planport list | head`) is not an error worth a stack trace.
process.stdout.on("error", (err) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
let cli;
try {
  cli = await import("../../dist/cli/planport.js");
} catch (err) {
  if (
    err?.code === "ERR_MODULE_NOT_FOUND" &&
    String(err.message).includes("dist/cli/planport.js")
  ) {
    process.stderr.write(
      "planport: this checkout is not built yet (no dist/); run `npm run build` in it (`npm ci` does)\n",
    );
    process.exit(2);
  }
  throw err;
}
const code = await cli.main(process.argv);
// Let piped output drain before exiting (open keep-alive sockets must not hold the process).
process.stdout.write("", () => process.exit(code));
