import { describe, expect, it } from "vitest";
import { PollError } from "../../../local-client/poll/error.ts";
import { pollGroupForChosenPlan } from "../../../local-client/poll/group-poller.ts";
import type { Event } from "../../../src/protocol/index.ts";
import { fakeClock, fakeSession } from "../fake-feed.ts";
import { type EventBody, ev, numbered } from "../feed-events.ts";

/**
 * The group poll on its own: several sessions' feeds served by an in-memory fetch double (the
 * single-session poll under it is tested against real HTTP in poller.test.ts). Each session's
 * feed is a list of batches; every poll of it reveals the next batch.
 */

const IDS = [
  "ses_01jxgroup0000000000000000a",
  "ses_01jxgroup0000000000000000b",
  "ses_01jxgroup0000000000000000c",
];

/** A fetch that answers each session's events batch by batch, and its state as running. */
function feeds(batches: Record<string, EventBody[][]>) {
  const logs = new Map<string, Event[]>();
  const polls = new Map<string, number>();
  const fetchDouble: typeof fetch = async (input) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const match = /^\/v1\/sessions\/([^/]+)(\/events)?$/.exec(url.pathname);
    const id = match?.[1] ?? "";
    if (!(id in batches))
      return Response.json({ error: { code: "not_found", message: "no" } }, { status: 404 });
    if (!match?.[2]) return Response.json(fakeSession({ id }));
    const n = polls.get(id) ?? 0;
    polls.set(id, n + 1);
    const log = logs.get(id) ?? [];
    const next = batches[id]?.[n];
    if (next) log.push(...numbered(next, log.length + 1));
    logs.set(id, log);
    const after = url.searchParams.get("after_id") ?? "";
    const data = log.filter((e) => e.id > after);
    return Response.json({
      data,
      has_more: false,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    });
  };
  return { fetch: fetchDouble, polls };
}

const common = { server: "http://planport.test", token: "t", intervalMs: 3_000 };

describe("pollGroupForChosenPlan", () => {
  it("ends with the first session whose plan is teleported, reporting each session's phase", async () => {
    const [a, b, c] = IDS as [string, string, string];
    const { fetch } = feeds({
      [a]: [[ev.init()], [ev.exitPlanMode("pa")], [], [], [ev.result("archived")]],
      [b]: [
        [ev.init()],
        [ev.exitPlanMode("pb")],
        [ev.teleport("pb", "plan of b"), ev.result("archived")],
      ],
      [c]: [[ev.init()], [], [], [ev.result("archived")]],
    });
    const phases: string[] = [];
    const chosen = await pollGroupForChosenPlan({
      ...common,
      sessionIds: IDS,
      fetch,
      clock: fakeClock(),
      onPhaseChange: (id, phase) => phases.push(`${id.slice(-1)}:${phase}`),
    });
    expect(chosen).toMatchObject({
      sessionId: b,
      kind: "teleport",
      plan: "plan of b",
      executionTarget: "local",
    });
    expect(phases).toContain("a:plan_ready");
    expect(phases).toContain("b:plan_ready");
  });

  it("when every session ends without a plan chosen, the group ends terminated", async () => {
    const superseded = [[ev.init()], [ev.result("archived")]];
    const { fetch } = feeds(Object.fromEntries(IDS.map((id) => [id, superseded])));
    const ended: string[] = [];
    const err = await pollGroupForChosenPlan({
      ...common,
      sessionIds: IDS,
      fetch,
      clock: fakeClock(),
      onSessionEnded: (e) => ended.push(e.sessionId),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PollError);
    expect((err as PollError).reason).toBe("terminated");
    expect(ended.sort()).toEqual([...IDS].sort());
  });

  it("a session that cannot be polled does not end the group: another's approval still wins", async () => {
    const [a, b] = IDS as [string, string];
    const { fetch } = feeds({ [b]: [[ev.exitPlanMode("pb")], [ev.approve("pb", "plan of b")]] });
    const ended: PollError[] = [];
    const chosen = await pollGroupForChosenPlan({
      ...common,
      sessionIds: [a, b],
      fetch,
      clock: fakeClock(),
      onSessionEnded: (e) => ended.push(e),
    });
    expect(chosen).toMatchObject({ sessionId: b, kind: "approved", plan: "plan of b" });
    expect(ended.map((e) => [e.sessionId, e.reason])).toEqual([[a, "network_or_unknown"]]);
  });

  it("Ctrl-C stops every poll: the group ends stopped", async () => {
    const { fetch } = feeds(Object.fromEntries(IDS.map((id) => [id, [[ev.init()]]])));
    const controller = new AbortController();
    const clock = fakeClock();
    const sleep = clock.sleep;
    clock.sleep = async (ms, signal) => {
      if (clock.t > 10_000) controller.abort();
      await sleep(ms, signal);
    };
    const err = await pollGroupForChosenPlan({
      ...common,
      sessionIds: IDS,
      fetch,
      clock,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect((err as PollError).reason).toBe("stopped");
  });
});
