import { describe, expect, it } from "vitest";
import { type Event, toolResultText } from "../../src/protocol/index.ts";
import { eventually } from "../support/eventually.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  errorCode,
  openPlan,
  openQuestion,
  QUESTION_CALL,
  stepsRun,
  withPort,
} from "../support/worker/sessions.ts";

const QUESTIONS = ["Which database?", "Keep the old login?"];

function answer(id: string, answers: Record<string, string>): Promise<Response> {
  return api.call("POST", `/v1/sessions/${id}/messages`, ALICE, {
    json: { tool_use_id: QUESTION_CALL, answers },
  });
}

function toolResultsOf(events: Event[]) {
  return events.flatMap((e) =>
    e.type === "user" && Array.isArray(e.message.content)
      ? e.message.content.filter((b) => b.type === "tool_result")
      : [],
  );
}

describe("messages", () => {
  it("an answer covering every question closes the wait with the tool result and wakes the loop", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, QUESTIONS);
    expect((await api.getSession(ALICE, session.id)).phase).toBe("needs_input");
    const res = await answer(session.id, {
      "Which database?": "Postgres",
      "Keep the old login?": "No",
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "running", phase: "running", pending: null });
    const [result] = toolResultsOf(await api.allEvents(ALICE, session.id));
    expect(result).toMatchObject({ tool_use_id: QUESTION_CALL, is_error: false });
    expect(toolResultText(result?.content ?? "")).toContain(
      '"Which database?"="Postgres", "Keep the old login?"="No"',
    );
  });

  it("a partial answer is saved for the AFK timeout and keeps the question open", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, QUESTIONS);
    const res = await answer(session.id, { "Which database?": "SQLite" });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "requires_action", phase: "needs_input" });
    expect(await withPort(session.id, (port) => port.partialAnswers(QUESTION_CALL))).toEqual({
      "Which database?": "SQLite",
    });
    expect(toolResultsOf(await api.allEvents(ALICE, session.id))).toHaveLength(0);
    // The rest completes it, in question order, with the earlier answer kept.
    await answer(session.id, { "Keep the old login?": "Yes" });
    const [result] = toolResultsOf(await api.allEvents(ALICE, session.id));
    expect(toolResultText(result?.content ?? "")).toContain(
      '"Which database?"="SQLite", "Keep the old login?"="Yes"',
    );
  });

  it("the engine can close the question itself (AFK timeout) and then answers are refused", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, QUESTIONS);
    await answer(session.id, { "Which database?": "SQLite" });
    await withPort(session.id, (port) => {
      expect(port.pendingWait()?.tool_use_id).toBe(QUESTION_CALL);
      port.closeWait(QUESTION_CALL);
    });
    const late = await answer(session.id, { "Keep the old login?": "Yes" });
    expect(late.status).toBe(409);
    expect(await errorCode(late)).toBe("not_pending");
  });

  it("refuses answers while a plan (not a question) is pending with 409 not_pending", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    const res = await answer(session.id, { "Which database?": "Postgres" });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("not_pending");
  });

  it("free text is appended as a user event; it wakes an idle session but not one that waits", async () => {
    const idle = await createDrivenSession();
    expect((await api.getSession(ALICE, idle.id)).status).toBe("idle");
    const woke = await api.message(ALICE, idle.id, { text: "Also cover the CLI." });
    expect(woke.status).toBe("running");
    await eventually(() => stepsRun(idle.id) === 1);
    const events = await api.allEvents(ALICE, idle.id);
    expect(events.at(-1)).toMatchObject({
      type: "user",
      message: { role: "user", content: "Also cover the CLI." },
    });

    const waiting = await createDrivenSession();
    await openQuestion(waiting.id, QUESTIONS);
    const still = await api.message(ALICE, waiting.id, { text: "Take your time." });
    expect(still).toMatchObject({ status: "requires_action", phase: "needs_input" });
    expect(stepsRun(waiting.id)).toBe(0);
  });
});

describe("archive", () => {
  it("is idempotent: one result/archived event however often it is asked", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    const first = await api.archive(ALICE, session.id);
    expect(first).toMatchObject({
      status: "archived",
      phase: "done",
      outcome: { kind: "terminated", subtype: "archived" },
      pending: null,
    });
    const again = await Promise.all([
      api.archive(ALICE, session.id),
      api.archive(ALICE, session.id),
    ]);
    for (const s of again) expect(s.status).toBe("archived");
    const archived = (await api.allEvents(ALICE, session.id)).filter(
      (e) => e.type === "result" && e.subtype === "archived",
    );
    expect(archived).toHaveLength(1);
  });

  it("ends the session: messages and decisions are refused with 409 session_ended", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    await api.archive(ALICE, session.id);
    const message = await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
      json: { text: "hi" },
    });
    expect(message.status).toBe(409);
    expect(await errorCode(message)).toBe("session_ended");
    const decided = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: "toolu_plan_1", decision: "reject", feedback: "x" },
    });
    expect(decided.status).toBe(409);
    expect(await errorCode(decided)).toBe("session_ended");
  });
});
