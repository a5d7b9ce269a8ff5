import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PollError, pollForApprovedExitPlanMode } from "../../local-client/poll/poller.ts";
import { FAKE_SESSION_ID, FAKE_TOKEN, type FakeFeed, startFakeFeed } from "./fake-feed.ts";
import { ev } from "./feed-events.ts";
import { type HostileServer, neverAnswer, startHostileServer, trickle } from "./hostile-server.ts";
import { type CliRun, isolatedHome, ndjson, startCli } from "./run-cli.ts";

/**
 * `attach --timeout` is a deadline for every request (issue 10, finding 4): a server that sends
 * headers and then trickles its body, or never sends headers at all, cannot hold the CLI past
 * it. Before the fix, the per-request `AbortSignal.any([AbortSignal.timeout(…)])` never fired on
 * Node 20 once the timeout signal was garbage-collected (300 s with no output), and a silent
 * server cost 4 × 30 s before `--timeout` was even looked at.
 */

let feed: FakeFeed;
let slow: HostileServer;
let home: ReturnType<typeof isolatedHome>;
/** The CLI a test started: stopped after it, should a regression leave it hanging. */
let cli: CliRun | null = null;

beforeEach(async () => {
  feed = await startFakeFeed();
  slow = await startHostileServer(feed.url);
  home = isolatedHome();
});
afterEach(async () => {
  if (cli !== null && cli.child.exitCode === null) cli.child.kill("SIGKILL");
  cli = null;
  await slow.close();
  await feed.close();
});

/**
 * Runs `attach` against the slow server. The server never ends its answer by itself (it trickles
 * for ever, or never sends headers): a run that ends with timeout_no_plan / timeout_pending was
 * ended by its deadline. One that did not would hang, and the test's own limit stops it.
 */
async function attachWithTimeout(timeout: string) {
  const run = startCli(
    [
      "attach",
      FAKE_SESSION_ID,
      "--server",
      slow.url,
      "--token",
      FAKE_TOKEN,
      "--json",
      "--interval",
      "100ms",
      "--timeout",
      timeout,
    ],
    { env: home.env },
  );
  cli = run;
  return run.done;
}

/** Room for the CLI process to start (tsx) on a loaded machine, and for a regression to show. */
const TEST_TIMEOUT_MS = 40_000;

describe("attach --timeout against a slow server", { timeout: TEST_TIMEOUT_MS }, () => {
  it("a server that sends headers and then one space every 200 ms ends at the deadline with timeout_no_plan (exit 5)", async () => {
    slow.misbehave = (_req, res) => trickle(res);
    const { code, stdout } = await attachWithTimeout("2s");
    expect(code, stdout).toBe(5);
    expect(ndjson(stdout).at(-1)).toMatchObject({ event: "error", reason: "timeout_no_plan" });
  });

  it("a server that never sends headers ends at the deadline with timeout_no_plan (exit 5)", async () => {
    slow.misbehave = (req) => neverAnswer(req);
    const { code, stdout } = await attachWithTimeout("2s");
    expect(code, stdout).toBe(5);
    expect(ndjson(stdout).at(-1)).toMatchObject({ event: "error", reason: "timeout_no_plan" });
  });

  it("a plan seen pending, then an events answer that trickles: the poll ends at the deadline with timeout_pending (exit 4)", async () => {
    feed.log.append(ev.init(), ev.exitPlanMode("p1"));
    let events = 0;
    slow.misbehave = (_req, res, path) => {
      if (!path.endsWith("/events")) return false;
      events += 1;
      return events > 1 && trickle(res);
    };
    const { code, stdout } = await attachWithTimeout("3s");
    expect(code, stdout).toBe(4);
    const lines = ndjson(stdout);
    expect(lines.map((l) => l.event)).toEqual(["session", "phase", "error"]);
    expect(lines.at(-1)).toMatchObject({ event: "error", reason: "timeout_pending" });
    expect(String(lines.at(-1)?.message)).toContain("within 3s");
    expect(events).toBe(2);
  });
});

describe("pollForApprovedExitPlanMode against a slow server", { timeout: TEST_TIMEOUT_MS }, () => {
  it("a trickling events answer is cut at the poll's deadline, which is a timeout, not a network error", async () => {
    slow.misbehave = (_req, res, path) => path.endsWith("/events") && trickle(res);
    const err = await pollForApprovedExitPlanMode({
      server: slow.url,
      token: FAKE_TOKEN,
      sessionId: FAKE_SESSION_ID,
      timeoutMs: 1_500,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PollError);
    expect((err as PollError).reason).toBe("timeout_no_plan");
  });
});
