import { pollGroupForChosenPlan } from "../../../local-client/poll/group-poller.ts";

/**
 * Run by group-abort.test.ts as its own Node process: polls a best-of-N group against the
 * test's server with Node's real fetch, and awaits the answer at the top level, as
 * `bin/planport.js` awaits `main()`. A poll left awaiting something that no timer or socket
 * keeps alive ends this process with Node's exit code 13 (unsettled top-level await) instead of
 * printing the chosen plan.
 *
 * Usage: node --import tsx group-abort-child.ts <server> <token> <session id>…
 */

const [server, token, ...sessionIds] = process.argv.slice(2);
if (!server || !token || sessionIds.length === 0) {
  throw new Error("usage: group-abort-child.ts <server> <token> <session id>…");
}
const chosen = await pollGroupForChosenPlan({
  server,
  token,
  sessionIds,
  intervalMs: 50,
  timeoutMs: 120_000,
});
process.stdout.write(`${JSON.stringify({ sessionId: chosen.sessionId, kind: chosen.kind })}\n`);
