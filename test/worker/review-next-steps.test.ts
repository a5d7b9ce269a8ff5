import { describe, expect, it } from "vitest";
import {
  LONG_RUNNING_MS,
  minutes,
  type NextStep,
  nextSteps,
  SOON_MS,
} from "../../src/review/next-steps.ts";
import { pageTime, sentenceHtml, sentenceText, timeText } from "../../src/review/times.ts";
import type { SessionDeadlines } from "../../src/review/view.ts";
import { fixtureSession, SESSION_ID } from "./review-fixtures.ts";

const T0 = Date.parse("2026-05-01T14:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const none: SessionDeadlines = { ask_timeout_s: null, afk_due_at: null, purge_due_at: null };
const question = {
  kind: "question" as const,
  tool_use_id: "toolu_q",
  input: {},
  opened_at: iso(T0),
};
const texts = (steps: NextStep[]) => steps.map((s) => sentenceText(s.sentence));

describe("nextSteps", () => {
  it("an open question with an ask timeout says when the planner goes on", () => {
    const session = fixtureSession({ phase: "needs_input", pending: question });
    const steps = nextSteps(
      session,
      { ...none, ask_timeout_s: 1920, afk_due_at: iso(T0 + 32 * 60_000) },
      T0,
    );
    expect(steps.map((s) => s.tone)).toEqual(["info"]);
    expect(texts(steps)).toEqual([
      "If nobody answers by 14:32 UTC (in 32 min), the planner goes on with its best judgment.",
    ]);
    // The time is a <time> with the exact moment, for the page script to show in the reader's zone.
    expect(sentenceHtml(steps[0]!.sentence).value).toBe(
      'If nobody answers by <time datetime="2026-05-01T14:32:00.000Z" data-local-time="minute">14:32 UTC</time> (in 32 min), the planner goes on with its best judgment.',
    );
  });

  it("the ask timeout is marked as approaching within five minutes, and as up after it", () => {
    const session = fixtureSession({ phase: "needs_input", pending: question });
    const due = T0 + SOON_MS;
    expect(nextSteps(session, { ...none, afk_due_at: iso(due) }, T0)[0]!.tone).toBe("soon");
    expect(nextSteps(session, { ...none, afk_due_at: iso(due) }, T0 - 1)[0]!.tone).toBe("info");
    expect(texts(nextSteps(session, { ...none, afk_due_at: iso(due) }, due + 1))).toEqual([
      "The time to answer is up: the planner goes on with its best judgment at its next step.",
    ]);
  });

  it("an open question without an ask timeout says it waits for ever", () => {
    const session = fixtureSession({ phase: "needs_input", pending: question });
    for (const deadlines of [none, undefined]) {
      expect(texts(nextSteps(session, deadlines, T0))).toEqual([
        "The planner waits for your answer, with no time limit: nothing happens until you answer or stop the session.",
      ]);
    }
  });

  it("a pending plan without a polling terminal says how to enable send-to-terminal", () => {
    const session = fixtureSession({
      pending: { kind: "plan", tool_use_id: "toolu_p", input: {}, opened_at: iso(T0) },
    });
    expect(texts(nextSteps(session, none, T0 + 1000))).toEqual([
      "The plan waits for your decision, with no time limit: nothing is carried out until you approve it. Keep planning sends it back to the planner with your feedback.",
      `No terminal is polling: start planport attach ${SESSION_ID} to enable send-to-terminal.`,
    ]);
  });

  it("a plan that needs someone else's approval says whose, to each reader", () => {
    const pending = {
      kind: "plan" as const,
      tool_use_id: "toolu_p",
      input: {},
      opened_at: iso(T0),
    };
    const as = (your_role: "requester" | "approver" | "viewer", approvers: string[]) =>
      texts(nextSteps(fixtureSession({ pending, approvers, your_role }), none, T0 + 1000))[0];
    expect(as("requester", ["bob"])).toBe(
      "The plan waits for the approval of bob, with no time limit: nothing is carried out until they approve it. You can still keep planning with your feedback.",
    );
    expect(as("requester", ["bob", "carol"])).toContain("approval of one of bob, carol");
    expect(as("approver", ["bob"])).toContain("waits for your decision");
    expect(as("viewer", ["bob"])).toBe(
      "The plan waits for the approval of bob. This is a share link: you can read along and leave comments, but not decide.",
    );
    expect(as("viewer", [])).toContain("its requester's decision");
  });

  it("a pending plan with a polling terminal says until when send-to-terminal stays offered", () => {
    const session = fixtureSession({
      pending: { kind: "plan", tool_use_id: "toolu_p", input: {}, opened_at: iso(T0) },
      terminal_polled_at: iso(T0 + 5_000),
    });
    expect(texts(nextSteps(session, none, T0 + 10_000))[1]).toBe(
      "A terminal is polling this session: send to terminal is offered while it keeps polling (at the latest by 14:00:20 UTC unless it polls again).",
    );
    // 15 s after the last poll the terminal no longer counts.
    expect(texts(nextSteps(session, none, T0 + 21_000))[1]).toContain("No terminal is polling");
  });

  it("a plan ready for long says since when", () => {
    const session = fixtureSession({
      pending: { kind: "plan", tool_use_id: "toolu_p", input: {}, opened_at: iso(T0) },
    });
    expect(texts(nextSteps(session, none, T0 + LONG_RUNNING_MS - 1))).toHaveLength(2);
    expect(texts(nextSteps(session, none, T0 + 95 * 60_000))[2]).toBe(
      "The plan has been ready for 1 h 35 min (since 14:00 UTC).",
    );
  });

  it("a long-running planner says it goes on by itself; a short one says nothing", () => {
    const running = fixtureSession({
      status: "running",
      phase: "running",
      pending: null,
      created_at: iso(T0),
    });
    expect(nextSteps(running, none, T0 + LONG_RUNNING_MS - 1)).toEqual([]);
    expect(texts(nextSteps(running, none, T0 + 34 * 60_000))).toEqual([
      "The planner has been researching and planning for 34 min (since 14:00 UTC). It goes on by itself: you can close this page and come back, or stop the session below.",
    ]);
    const executing = fixtureSession({ ...running, phase: "executing" });
    expect(texts(nextSteps(executing, none, T0 + LONG_RUNNING_MS))[0]).toContain(
      "carrying out the approved plan for 10 min",
    );
  });

  it("an ended session says when its data is deleted, approaching within a day", () => {
    const done = fixtureSession({ status: "archived", phase: "done", pending: null });
    const purge = T0 + 7 * 24 * 60 * 60_000;
    const steps = nextSteps(done, { ...none, purge_due_at: iso(purge) }, T0);
    expect(steps.map((s) => s.tone)).toEqual(["info"]);
    expect(texts(steps)).toEqual([
      "This session is kept until 2026-05-08 14:00 UTC; then its plan, transcript and changes are deleted for good. Pull or copy what you need before then.",
    ]);
    expect(nextSteps(done, { ...none, purge_due_at: iso(T0 + 60_000) }, T0)[0]!.tone).toBe("soon");
    expect(nextSteps(done, none, T0)).toEqual([]);
  });

  it("an ended session offers no question or plan steps even if a wait is left", () => {
    const done = fixtureSession({ status: "archived", phase: "done", pending: question });
    expect(nextSteps(done, { ...none, afk_due_at: iso(T0 + 60_000) }, T0)).toEqual([]);
  });

  it("a malformed stored time is ignored, not shown as NaN", () => {
    const session = fixtureSession({
      phase: "needs_input",
      pending: { ...question, opened_at: "not a time" },
      created_at: "not a time",
    });
    const steps = nextSteps(session, { ...none, afk_due_at: "garbage" }, T0);
    expect(texts(steps).join(" ")).not.toMatch(/NaN|Invalid/);
  });
});

describe("timeText, pageTime and minutes", () => {
  it("says the date only when it is not today (UTC)", () => {
    expect(timeText(Date.parse("2026-05-01T14:32:10Z"), T0)).toBe("14:32 UTC");
    expect(timeText(Date.parse("2026-05-02T00:05:00Z"), T0)).toBe("2026-05-02 00:05 UTC");
  });

  it("a page time keeps the exact moment beside its UTC text, to the second when asked", () => {
    expect(pageTime(Date.parse("2026-05-01T14:32:10.250Z"), T0, "second")).toEqual({
      iso: "2026-05-01T14:32:10.250Z",
      text: "14:32:10 UTC",
      precision: "second",
    });
    expect(pageTime(Date.parse("2026-05-02T00:05:00Z"), T0).text).toBe("2026-05-02 00:05 UTC");
  });

  it("rounds to whole minutes, at least one, with hours past sixty", () => {
    expect(minutes(0)).toBe("1 min");
    expect(minutes(59 * 60_000)).toBe("59 min");
    expect(minutes(60 * 60_000)).toBe("1 h");
    expect(minutes(125 * 60_000)).toBe("2 h 5 min");
  });
});
