import { setTimeout as delay } from "node:timers/promises";
import { ApiError, createApi } from "../../../local-client/http/api.ts";

/**
 * Run by stale-connection.test.ts as its own Node process, so that it can be busy while the
 * test's server (in the test's process) keeps time: asks the health check (a keep-alive
 * connection opens), works a little asynchronously, then keeps its event loop busy for longer
 * than the server keeps an idle connection, and uploads a 5 MiB snapshot; does the same again
 * and sends a session creation. Prints one JSON line per call: what it answered, or the error's code and sentence.
 *
 * Usage: node --import tsx stale-connection-child.ts <server> <busy ms>
 */

const [server, busyArg] = process.argv.slice(2);
if (!server || !busyArg) throw new Error("usage: stale-connection-child.ts <server> <busy ms>");
const busyMs = Number(busyArg);

const api = createApi({ server, token: "stale-token" });
const ASYNC_WORK_MS = 20;

/** Synchronous work, as a script that ranks files or builds a body with sync calls does. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // nothing: the point is that no timer and no socket event can run
  }
}

async function outcome(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return "answered";
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code}: ${err.message}`;
    return `threw ${String(err)}`;
  }
}

/**
 * An answer, some asynchronous work (the answer's connection goes back to undici's pool), then
 * synchronous work for `busyMs`: the shape of a script's step between two requests.
 */
async function answerThenWork(): Promise<void> {
  await api.healthz();
  await delay(ASYNC_WORK_MS);
  busyFor(busyMs);
}

const lines: Record<string, string> = {};
await answerThenWork();
lines.upload = await outcome(() => api.uploadSnapshot(new Uint8Array(5 * 1024 * 1024)));
await answerThenWork();
lines.create = await outcome(() => api.createSession({ prompt: "plan it" }));
process.stdout.write(`${JSON.stringify(lines)}\n`);
