import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../src/session/session-object.ts";
import { ALICE, api, errorCode, sessionObject } from "../support/worker/sessions.ts";
import {
  drainAlarms,
  eventsOf,
  expectWellFormedLog,
  resultOf,
  resultText,
  settled,
  startRecorded,
  startScripted,
  turn,
  use,
} from "./scenario/support.ts";

/**
 * Clarifying questions on the real session Durable Object: answers go through
 * `POST /v1/sessions/:id/messages`, partial answers are saved without waking the loop, and
 * the AFK timeout (driven by the object's alarm) answers with whatever was saved.
 */

const CURRENCY = "Which currency should totals be rounded in?";
const ROUNDING = "How should half cents round?";

const QUESTIONS = {
  questions: [
    {
      question: CURRENCY,
      header: "Currency",
      options: [
        { label: "EUR", description: "The shop's default" },
        { label: "Per order", description: "The order's own currency" },
      ],
    },
    {
      question: ROUNDING,
      header: "Rounding",
      options: [{ label: "Half up" }, { label: "Half even" }],
    },
  ],
};

const script = [
  turn(use("AskUserQuestion", QUESTIONS)),
  turn(
    use("Write", { file_path: "$PLAN_PATH", content: "# Plan\n\nRound per order currency.\n" }),
    use("ExitPlanMode", {}),
  ),
];

/** The AFK timeout of these sessions: long enough that only a moved clock reaches it. */
const ASK_TIMEOUT_S = 600;

describe("question → answer → plan, in the real session", () => {
  it("saves a partial answer without waking the planner, then continues with all answers to a plan", async () => {
    const { session, requests } = await startRecorded(script);
    const asking = await settled(session.id);
    expect(asking).toMatchObject({ status: "requires_action", phase: "needs_input" });
    expect(asking.pending).toMatchObject({ kind: "question", input: QUESTIONS });
    const questionCall = asking.pending!.tool_use_id;
    expect(requests).toHaveLength(1);

    // One answer of two: saved, the question stays open, the planner is not asked.
    const partial = await api.message(ALICE, session.id, {
      tool_use_id: questionCall,
      answers: { [CURRENCY]: "Per order" },
    });
    expect(partial).toMatchObject({ status: "requires_action", phase: "needs_input" });
    const unknown = await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
      json: { tool_use_id: questionCall, answers: { "Which database?": "Postgres" } },
    });
    expect(unknown.status).toBe(400);
    expect(await errorCode(unknown)).toBe("unknown_question");
    expect((await settled(session.id)).phase).toBe("needs_input");
    expect(requests).toHaveLength(1);

    // The rest: the wait closes, the loop runs, the planner sees both answers and plans.
    await api.message(ALICE, session.id, {
      tool_use_id: questionCall,
      answers: { [ROUNDING]: "Half even" },
    });
    const planned = await settled(session.id);
    expect(planned).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    const events = await eventsOf(planned);
    expectWellFormedLog(events);
    const answered = resultOf(events, questionCall);
    expect(answered.is_error).toBe(false);
    expect(resultText(answered)).toContain(`"${CURRENCY}"="Per order", "${ROUNDING}"="Half even"`);

    expect(requests).toHaveLength(2);
    const seen = requests[1]!.messages.at(-1)!;
    expect(seen.role).toBe("user");
    expect(seen.content[0]).toMatchObject({ type: "tool_result", tool_use_id: questionCall });
    expect(JSON.stringify(seen.content[0])).toContain("Half even");
  });
});

describe("the AFK timeout, in the real session", () => {
  it("answers for an absent user with the partial answers saved through the messages route", async () => {
    const { session } = await startScripted(script, { ask_timeout_s: ASK_TIMEOUT_S });
    const asking = await settled(session.id);
    expect(asking.phase).toBe("needs_input");
    const questionCall = asking.pending!.tool_use_id;
    const deadline = Date.parse(asking.pending!.opened_at) + ASK_TIMEOUT_S * 1000;
    const stub = sessionObject(session.id);
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBe(deadline);

    await api.message(ALICE, session.id, {
      tool_use_id: questionCall,
      answers: { [CURRENCY]: "EUR" },
    });
    const before = await eventsOf(asking);

    // Before the deadline the alarm changes nothing: the user still has time.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await eventsOf(asking)).toEqual(before);
    expect((await api.getSession(ALICE, session.id)).phase).toBe("needs_input");

    // Past it, the alarm answers with the saved answer and the planning goes on.
    await runInDurableObject(stub, (object: SessionObject) => {
      object.clock = () => Date.now() + ASK_TIMEOUT_S * 1000 + 1_000;
    });
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now()));
    await drainAlarms(session.id);
    const planned = await api.getSession(ALICE, session.id);
    expect(planned).toMatchObject({ status: "requires_action", phase: "plan_ready" });

    const events = await eventsOf(planned);
    expectWellFormedLog(events);
    const afk = resultOf(events, questionCall);
    expect(afk.is_error).toBe(false);
    expect(resultText(afk)).toContain("The user did not answer in time and may be away");
    // The same answer as data, stated by the server: the AFK timeout answered with what was saved.
    const carrier = events.find(
      (e) => e.type === "user" && e.answers?.tool_use_id === questionCall,
    );
    expect(carrier).toMatchObject({
      answers: { tool_use_id: questionCall, answers: { [CURRENCY]: "EUR" }, by: "afk" },
    });
    expect(resultText(afk)).toContain(`"${CURRENCY}"="EUR"`);
    expect(resultText(afk)).not.toContain(ROUNDING);
    // Too late for the user now: the question is closed.
    const late = await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
      json: { tool_use_id: questionCall, answers: { [ROUNDING]: "Half up" } },
    });
    expect(late.status).toBe(409);
    expect(await errorCode(late)).toBe("not_pending");
  });
});
