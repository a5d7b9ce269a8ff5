import { startLocalExecutor } from "../../../local-client/execution/server.ts";

/**
 * A local executor in a process of its own (the reaping test kills it with SIGKILL): prints
 * its url and token as one JSON line, then runs until killed.
 */
const stateDir = process.argv[2];
if (stateDir === undefined) throw new Error("usage: executor-child.ts STATE_DIR");
const executor = await startLocalExecutor({ stateDir });
process.stdout.write(`${JSON.stringify({ url: executor.url, token: executor.token })}\n`);
setInterval(() => {}, 60_000);
