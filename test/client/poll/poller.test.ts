import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  PollError,
  type PollOptions,
  type PollPhase,
  pollForApprovedExitPlanMode,
} from "../../../local-client/poll/poller.ts";
import type { Session } from "../../../src/protocol/index.ts";
import {
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeClock,
  fakeSession,
  startFakeFeed,
} from "../fake-feed.ts";
import { ev } from "../feed-events.ts";
import {
  errorAnswer,
  type HostileServer,
  hugeBody,
  startHostileServer,
} from "../hostile-server.ts";

let feed: FakeFeed;
let clock: ReturnType<typeof fakeClock>;

beforeEach(async () => {
  feed = await startFakeFeed();
  clock = fakeClock();
});
afterEach(() => feed.close());

const poll = (over: Partial<PollOptions> = {}) =>
  pollForApprovedExitPlanMode({
    server: feed.url,
    token: FAKE_TOKEN,
    sessionId: FAKE_SESSION_ID,
    clock,
    ...over,
  });

async function pollError(p: Promise<unknown>): Promise<PollError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof PollError)) throw new Error(`expected a PollError, got ${String(err)}`);
  return err;
}

const unavailable = () => ({ status: 503 });

describe("pollForApprovedExitPlanMode", () => {
  it("returns the approved plan: kind approved, execution target remote", async () => {
    feed.log.append(ev.init(), ev.exitPlanMode("p1"), ev.approve("p1", "the plan"));
    await expect(poll()).resolves.toEqual({
      kind: "approved",
      plan: "the plan",
      rejectCount: 0,
      executionTarget: "remote",
    });
  });

  it("returns a teleported plan: kind teleport, execution target local, even when the archive follows", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.teleport("p1", "go home"), ev.result("archived"));
    await expect(poll()).resolves.toEqual({
      kind: "teleport",
      plan: "go home",
      rejectCount: 0,
      executionTarget: "local",
    });
  });

  it("sends the bearer token and polls at the 3 s interval", async () => {
    feed.onEventsRequest = (n) => {
      if (n === 3) feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "x"));
    };
    await poll();
    expect(feed.requests.every((r) => r.authorization === `Bearer ${FAKE_TOKEN}`)).toBe(true);
    expect(clock.sleeps).toEqual([3_000, 3_000]);
  });

  it("tolerates 4 consecutive 503s and carries on", async () => {
    feed.eventFaults.push(unavailable(), unavailable(), unavailable(), unavailable());
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "after the outage"));
    await expect(poll()).resolves.toMatchObject({ plan: "after the outage" });
    expect(feed.eventsRequests()).toHaveLength(5);
  });

  it("the 5th consecutive transient failure ends it with network_or_unknown, the server and the last failure", async () => {
    feed.eventFaults.push(
      unavailable(),
      { status: 429 },
      { destroy: true },
      { status: 502, body: "<html>bad gateway</html>", contentType: "text/html" },
      unavailable(),
    );
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "never read"));
    const err = await pollError(poll());
    expect(err.reason).toBe("network_or_unknown");
    expect(err.detail).toEqual({
      reason: "network_or_unknown",
      server: feed.url,
      attempts: 5,
      transient: true,
      status: 503,
      code: "boom",
      lastError: "scripted",
    });
    expect(err.message).toBe(
      `Lost contact with ${feed.url} after 5 failed polls in a row (last: scripted).`,
    );
    expect(feed.eventsRequests()).toHaveLength(5);
  });

  it("a success resets the count of consecutive failures", async () => {
    const four = () => [unavailable(), unavailable(), unavailable(), unavailable()];
    feed.eventFaults.push(...four(), { status: 200, body: emptyPage() }, ...four());
    feed.onEventsRequest = (n) => {
      if (n === 10) feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "made it"));
    };
    const told: string[] = [];
    await expect(
      poll({
        onTransientFailure: (n) => told.push(`failure ${n}`),
        onRecovered: () => told.push("recovered"),
      }),
    ).resolves.toMatchObject({ plan: "made it" });
    expect(feed.eventsRequests()).toHaveLength(10);
    // Each run of failures ends with one "recovered", said once the server answers again.
    expect(told).toEqual([
      ...["failure 1", "failure 2", "failure 3", "failure 4", "recovered"],
      ...["failure 1", "failure 2", "failure 3", "failure 4", "recovered"],
    ]);
  });

  it("respects maxConsecutiveFailures", async () => {
    feed.eventFaults.push(unavailable(), unavailable());
    const err = await pollError(poll({ maxConsecutiveFailures: 2 }));
    expect(err.reason).toBe("network_or_unknown");
    expect(feed.eventsRequests()).toHaveLength(2);
  });

  it("401 ends it after exactly one request", async () => {
    const err = await pollError(poll({ token: "wrong" }));
    expect(err.reason).toBe("network_or_unknown");
    expect(err.detail).toMatchObject({ status: 401, code: "unauthorized", transient: false });
    expect(err.message).toMatch(/refused the token/);
    expect(feed.requests).toHaveLength(1);
  });

  it("404 ends it after exactly one request, naming the session that was not found", async () => {
    const err = await pollError(poll({ sessionId: "ses_01jxnothere000000000000000" }));
    expect(err.reason).toBe("network_or_unknown");
    expect(err.sessionId).toBe("ses_01jxnothere000000000000000");
    expect(err.detail).toMatchObject({ status: 404, code: "not_found", attempts: 1 });
    expect(err.message).toMatch(/ses_01jxnothere000000000000000 was not found/);
    expect(feed.requests).toHaveLength(1);
  });

  it("a malformed body ends it at once", async () => {
    feed.eventFaults.push({ status: 200, body: JSON.stringify({ data: [{ nope: 1 }] }) });
    const err = await pollError(poll());
    expect(err.reason).toBe("network_or_unknown");
    expect(err.message).toMatch(/does not understand/);
    expect(feed.requests).toHaveLength(1);
  });

  it("reads every page within one tick (2,500 events at limit 100)", async () => {
    for (let i = 0; i < 2_499; i += 1) feed.log.append(ev.text(`step ${i}`));
    feed.log.append(ev.exitPlanMode("p1"));
    feed.onEventsRequest = (n) => {
      if (n === 26) feed.log.append(ev.approve("p1", "paged"));
    };
    const phases: PollPhase[] = [];
    const outcome = await poll({ onPhaseChange: (p) => phases.push(p) });
    expect(outcome.plan).toBe("paged");
    // 25 full pages in the first tick, then one more read after a single sleep.
    expect(feed.eventsRequests()).toHaveLength(26);
    expect(clock.sleeps).toEqual([3_000]);
    expect(feed.eventsRequests()[1]?.query.get("after_id")).toBe("evt_0000000000000100");
    expect(phases).toEqual(["plan_ready"]);
  });

  it("stops a tick after 50 pages and reads the rest next tick", async () => {
    for (let i = 0; i < 60; i += 1) feed.log.append(ev.text());
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "late"));
    await expect(poll({ pageSize: 1 })).resolves.toMatchObject({ plan: "late" });
    expect(clock.sleeps).toEqual([3_000]);
    expect(feed.eventsRequests()).toHaveLength(62);
  });

  it("times out with timeout_no_plan when no plan was ever submitted", async () => {
    feed.log.append(ev.init(), ev.text());
    const err = await pollError(poll({ timeoutMs: 60_000 }));
    expect(err.reason).toBe("timeout_no_plan");
    expect(err.message).toMatch(/failed to start.*session id/s);
    expect(clock.t).toBe(60_000);
  });

  it("times out with timeout_pending when a plan waited for review (default 30 minutes)", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.result("success"));
    const err = await pollError(poll());
    expect(err.reason).toBe("timeout_pending");
    expect(err.message).toContain("30m");
    expect(clock.t).toBe(1_800_000);
    // Every tick starts before the deadline (0 s, 3 s, … 1,797 s): none is left without time.
    expect(feed.eventsRequests()).toHaveLength(600);
  });

  it("a rejected plan that is never resubmitted still times out as pending", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.reject("p1"));
    const err = await pollError(poll({ timeoutMs: 9_000 }));
    expect(err.reason).toBe("timeout_pending");
    expect(err.rejectCount).toBe(1);
  });

  it("reports each phase change once: running → needs_input → running → plan_ready", async () => {
    feed.log.append(ev.init(), ev.toolUse("q1", "AskUserQuestion"), ev.result("success"));
    feed.session = fakeSession({ status: "requires_action", phase: "needs_input" });
    feed.onEventsRequest = (n) => {
      if (n === 6) {
        feed.session = fakeSession({ status: "running" });
        feed.log.append(ev.toolResult("q1", "answered", false), ev.text());
      }
      if (n === 10) feed.log.append(ev.exitPlanMode("p1"), ev.result("success"));
      if (n === 15) feed.log.append(ev.approve("p1", "done"));
    };
    const phases: PollPhase[] = [];
    await poll({ onPhaseChange: (p) => phases.push(p) });
    expect(phases).toEqual(["running", "needs_input", "running", "plan_ready"]);
    // The session is read once after each burst of events, not on every quiet tick.
    expect(feed.requests.filter((r) => r.path === `/v1/sessions/${FAKE_SESSION_ID}`)).toHaveLength(
      2,
    );
  });

  it("for a session it just created, reports running first even when the first poll finds the plan", async () => {
    feed.log.append(ev.init(), ev.exitPlanMode("p1"), ev.result("success"));
    feed.onEventsRequest = (n) => {
      if (n === 2) feed.log.append(ev.approve("p1", "quick"));
    };
    const created: PollPhase[] = [];
    await poll({ created: true, onPhaseChange: (p) => created.push(p) });
    expect(created).toEqual(["running", "plan_ready"]);
  });

  it("polls a session it just created every 250 ms until its first plan, then every 3 s", async () => {
    feed.log.append(ev.init());
    feed.onEventsRequest = (n) => {
      if (n === 4) feed.log.append(ev.exitPlanMode("p1"), ev.result("success"));
      if (n === 7) feed.log.append(ev.approve("p1", "quick"));
    };
    await poll({ created: true });
    // Three quick ticks before the plan, then the ordinary interval while it waits for review.
    expect(clock.sleeps).toEqual([250, 250, 250, 3_000, 3_000, 3_000]);
  });

  it("polls quickly for ten seconds at most", async () => {
    feed.log.append(ev.init());
    feed.onEventsRequest = (n) => {
      if (n === 50) feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "slow"));
    };
    await poll({ created: true });
    const quick = clock.sleeps.filter((ms) => ms === 250).length;
    expect(quick).toBe(40);
    expect(clock.sleeps.slice(40).every((ms) => ms === 3_000)).toBe(true);
  });

  it("polls a session it attaches to at the ordinary interval from the start", async () => {
    feed.log.append(ev.init());
    await pollError(poll({ timeoutMs: 9_000 }));
    expect(clock.sleeps).toEqual([3_000, 3_000, 3_000]);
  });

  it("for a session it attaches to, reports only what it finds", async () => {
    feed.log.append(ev.init(), ev.exitPlanMode("p1"), ev.result("success"));
    feed.onEventsRequest = (n) => {
      if (n === 2) feed.log.append(ev.approve("p1", "quick"));
    };
    const attached: PollPhase[] = [];
    await poll({ onPhaseChange: (p) => attached.push(p) });
    expect(attached).toEqual(["plan_ready"]);
  });

  it("reports rejections one by one", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.reject("p1"), ev.exitPlanMode("p2"), ev.reject("p2"));
    feed.log.append(ev.exitPlanMode("p3"), ev.teleport("p3", "third time"));
    const seen: number[] = [];
    const outcome = await poll({ onRejected: (n) => seen.push(n) });
    expect(seen).toEqual([1, 2]);
    expect(outcome).toMatchObject({ rejectCount: 2, executionTarget: "local" });
  });

  it("an ending result is terminated, with the session's message", async () => {
    feed.log.append(ev.text(), ev.result("error_during_execution", "the model API kept failing"));
    const err = await pollError(poll());
    expect(err.reason).toBe("terminated");
    expect(err.message).toContain("the model API kept failing");
  });

  it("an approval without a marker is extract_marker_missing", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.toolResult("p1", "approved!", false));
    const err = await pollError(poll());
    expect(err.reason).toBe("extract_marker_missing");
  });

  it("aborting stops it with reason stopped and the progress so far", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.reject("p1"), ev.text());
    const controller = new AbortController();
    const pending = poll({
      clock: undefined,
      intervalMs: 60_000,
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    const err = await pollError(pending);
    expect(err.reason).toBe("stopped");
    expect(err.rejectCount).toBe(1);
    expect(err.progress.cursor).toBe("evt_0000000000000003");
    expect(err.sessionId).toBe(FAKE_SESSION_ID);
    expect(err.message).toBe("Stopped polling; the remote session keeps running.");
  });

  it("resumes from a saved cursor and scanner state", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.reject("p1"), ev.exitPlanMode("p2"));
    const controller = new AbortController();
    const first = await pollError(
      poll({ signal: controller.signal, onProgress: () => controller.abort() }),
    );
    feed.log.append(ev.approve("p2", "resumed"));
    const outcome = await poll({ resume: first.progress });
    expect(outcome).toMatchObject({ plan: "resumed", rejectCount: 1 });
    expect(feed.eventsRequests().at(-1)?.query.get("after_id")).toBe("evt_0000000000000003");
  });

  it("a timeout that started counting earlier (attach's first read) leaves the poll only the rest", async () => {
    feed.log.append(ev.exitPlanMode("p1"));
    clock.t = 10_000;
    const err = await pollError(poll({ timeoutMs: 12_000, startedAt: 4_000 }));
    expect(err.reason).toBe("timeout_pending");
    expect(err.message).toContain("within 12s");
    expect(clock.t).toBe(16_000);
  });

  it("a page too large for one answer is read again with half as many events, then carries on", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "small pages"));
    const big = await startHostileServer(feed.url, (req, res, path) => {
      const limit = Number(new URL(req.url ?? "/", "http://x").searchParams.get("limit"));
      return path.endsWith("/events") && limit > 20 && hugeBody(res, 40 * 1024 * 1024, true);
    });
    try {
      await expect(poll({ server: big.url })).resolves.toMatchObject({ plan: "small pages" });
      expect(feed.eventsRequests().map((r) => r.query.get("limit"))).toEqual(["13"]);
      expect(big.requests.filter((r) => r.path.endsWith("/events"))).toHaveLength(4);
    } finally {
      await big.close();
    }
  });

  it.each([
    [
      "terminated",
      () => feed.log.append(ev.result("error_max_turns", "too many turns")),
      { reason: "terminated", subtype: "error_max_turns", sessionMessage: "too many turns" },
    ],
    [
      "terminated (archived)",
      () => feed.log.append(ev.result("archived")),
      { reason: "terminated", subtype: "archived" },
    ],
    [
      "timeout_no_plan",
      () => feed.log.append(ev.text()),
      { reason: "timeout_no_plan", waitedMs: 9_000 },
    ],
    [
      "timeout_pending",
      () => feed.log.append(ev.exitPlanMode("p1")),
      { reason: "timeout_pending", waitedMs: 9_000 },
    ],
    [
      "extract_marker_missing",
      () => feed.log.append(ev.exitPlanMode("p1"), ev.toolResult("p1", "yes", false)),
      {
        reason: "extract_marker_missing",
        toolUseId: "p1",
        markers: ["## Approved Plan:", "## Approved Plan (edited by user):"],
      },
    ],
    [
      "network_or_unknown",
      () => feed.eventFaults.push({ status: 400 }),
      {
        reason: "network_or_unknown",
        server: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        attempts: 1,
        transient: false,
        status: 400,
        code: "boom",
        lastError: "scripted",
      },
    ],
  ] as const)(
    "a PollError (%s) carries its data and says what happened, never what to run",
    async (_, script, detail) => {
      script();
      const err = await pollError(poll({ timeoutMs: 9_000 }));
      expect(err.detail).toEqual(detail);
      expect(err.reason).toBe(detail.reason);
      expect(err.sessionId).toBe(FAKE_SESSION_ID);
      expect(err.rejectCount).toBe(err.progress.scanner.rejectCount);
      // The library is not the CLI: no commands, flags or variables of planport in its sentences.
      expect(err.message).not.toMatch(/planport |--[a-z]|PLANPORT_/);
      expect(err.message.length).toBeGreaterThan(10);
    },
  );

  it("reads the server's phase before its status: running and executing are running", async () => {
    const phases: PollPhase[] = [];
    feed.log.append(ev.text());
    feed.session = fakeSession({ status: "requires_action", phase: "executing" });
    feed.onEventsRequest = (n) => {
      if (n === 3) feed.log.append(ev.text());
      if (n === 4) feed.session = fakeSession({ status: "idle", phase: "running" });
    };
    await pollError(poll({ timeoutMs: 15_000, onPhaseChange: (p) => phases.push(p) }));
    // By status alone both quiet reads would have said needs_input.
    expect(phases).toEqual(["running"]);
    expect(feed.requests.filter((r) => r.path === `/v1/sessions/${FAKE_SESSION_ID}`)).toHaveLength(
      2,
    );
  });

  it("a quiet session in phase plan_ready is plan_ready even when the scanner never saw the call", async () => {
    // Resumed past the ExitPlanMode with a state that does not list it (the sidecar was lost).
    feed.log.append(ev.exitPlanMode("p1"), ev.result("success"));
    feed.session = fakeSession({ status: "requires_action", phase: "plan_ready" });
    const phases: PollPhase[] = [];
    const resume = {
      cursor: "evt_0000000000000002",
      scanner: { rejectCount: 0, openPlanCalls: [], everSeenPending: false },
    };
    await pollError(poll({ timeoutMs: 9_000, resume, onPhaseChange: (p) => phases.push(p) }));
    expect(phases).toEqual(["plan_ready"]);
  });

  it("done defers to the status: archived says nothing new, idle is the user's move", async () => {
    const phases: PollPhase[] = [];
    feed.log.append(ev.text());
    feed.session = fakeSession({ status: "archived", phase: "done" });
    feed.onEventsRequest = (n) => {
      if (n === 3) {
        feed.log.append(ev.text());
        feed.session = fakeSession({ status: "idle", phase: "done" });
      }
    };
    await pollError(poll({ timeoutMs: 15_000, onPhaseChange: (p) => phases.push(p) }));
    expect(phases).toEqual(["running", "needs_input"]);
  });

  it("a server that sends no phase is read by its status", async () => {
    const { phase: _phase, ...withoutPhase } = fakeSession({ status: "requires_action" });
    feed.session = withoutPhase as Session;
    feed.log.append(ev.init(), ev.toolUse("q1", "AskUserQuestion"));
    const phases: PollPhase[] = [];
    const err = await pollError(poll({ timeoutMs: 9_000, onPhaseChange: (p) => phases.push(p) }));
    expect(err.reason).toBe("timeout_no_plan");
    expect(phases).toEqual(["running", "needs_input"]);
  });

  it("needs_input only on a quiet tick: while events arrive the phase stays running", async () => {
    feed.session = fakeSession({ status: "requires_action", phase: "needs_input" });
    feed.log.append(ev.text());
    feed.onEventsRequest = (n) => {
      if (n <= 4) feed.log.append(ev.text(`step ${n}`));
    };
    const phases: PollPhase[] = [];
    const ticksAtChange: number[] = [];
    await pollError(
      poll({
        timeoutMs: 21_000,
        onPhaseChange: (p) => {
          phases.push(p);
          ticksAtChange.push(feed.eventsRequests().length);
        },
      }),
    );
    expect(phases).toEqual(["running", "needs_input"]);
    // Events arrived on the first four ticks; the fifth was the first quiet one.
    expect(ticksAtChange).toEqual([1, 5]);
  });

  it("refuses nonsense options with a clear error", async () => {
    await expect(poll({ intervalMs: 0 })).rejects.toThrow(/intervalMs must be a positive/);
  });
});

describe("pollForApprovedExitPlanMode under rate limiting (429 + Retry-After)", () => {
  let limiter: HostileServer;
  /** Answers the next events requests with these Retry-After values (null: no header). */
  let retryAfters: (string | null)[];
  beforeEach(async () => {
    retryAfters = [];
    limiter = await startHostileServer(feed.url, (_req, res, path) => {
      if (!path.endsWith("/events") || retryAfters.length === 0) return false;
      const value = retryAfters.shift();
      const headers: Record<string, string> = value == null ? {} : { "retry-after": value };
      return errorAnswer(res, 429, "rate_limited", "slow down", headers);
    });
  });
  afterEach(() => limiter.close());

  const limited = (over: Partial<PollOptions> = {}) => poll({ server: limiter.url, ...over });

  it("waits at least Retry-After (delta seconds) before the next poll", async () => {
    retryAfters.push("20");
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "after the wait"));
    await expect(limited()).resolves.toMatchObject({ plan: "after the wait" });
    expect(clock.sleeps).toEqual([20_000]);
  });

  it("caps Retry-After at 60 s; a shorter one than the interval keeps the interval; garbage is ignored", async () => {
    retryAfters.push("99999", "1", "soon", "-5");
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "x"));
    await limited();
    expect(clock.sleeps).toEqual([60_000, 3_000, 3_000, 3_000]);
  });

  it("reads the HTTP-date form", async () => {
    retryAfters.push(new Date(Date.now() + 45_000).toUTCString());
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "x"));
    await limited();
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThan(40_000);
    expect(clock.sleeps[0]).toBeLessThanOrEqual(45_000);
  });

  it("each 429 still counts as one of the 5 consecutive transient failures", async () => {
    retryAfters.push("10", "10", "10", "10", "10");
    const err = await pollError(limited());
    expect(err.reason).toBe("network_or_unknown");
    expect(err.message).toContain("5 failed polls in a row");
    expect(clock.sleeps).toEqual([10_000, 10_000, 10_000, 10_000]);
  });

  it("a Retry-After past the poll's deadline is waited out only until the deadline", async () => {
    retryAfters.push("50");
    const err = await pollError(limited({ timeoutMs: 30_000 }));
    expect(err.reason).toBe("timeout_no_plan");
    expect(clock.sleeps).toEqual([30_000]);
    expect(limiter.requests).toHaveLength(1);
  });

  it("over real HTTP and a real clock, the next poll comes no sooner than Retry-After", async () => {
    retryAfters.push("1");
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "x"));
    await limited({ clock: undefined, intervalMs: 50 });
    const [first, second] = limiter.requests.filter((r) => r.path.endsWith("/events"));
    // A lower bound only (timers never fire early by more than a millisecond).
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });
});

function emptyPage(): string {
  return JSON.stringify({ data: [], has_more: false, first_id: null, last_id: null });
}
