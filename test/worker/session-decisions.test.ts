import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  type Event,
  TELEPORT_SENTINEL,
  toolResultText,
} from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { eventually } from "../support/eventually.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  errorCode,
  openPlan,
  PLAN_CALL,
  sessionObject,
  stepsRun,
  withPort,
} from "../support/worker/sessions.ts";

const PLAN = "# Plan\n\n1. Add the OAuth callback route.\n2. Reuse the session cookie.\n";

/** A scripted session: its planner can execute remotely, so approve is allowed. */
function executableSession() {
  return createDrivenSession(ALICE.token, {
    planner: "scripted",
    script: [{ content: [{ type: "text", text: "unused: the loop is not started" }] }],
  });
}

function decision(id: string, body: Record<string, unknown>): Promise<Response> {
  return api.call("POST", `/v1/sessions/${id}/decision`, ALICE, {
    json: { tool_use_id: PLAN_CALL, ...body },
  });
}

/** The tool results written for a call, in log order. */
async function toolResults(id: string, toolUseId = PLAN_CALL) {
  const events = await api.allEvents(ALICE, id);
  return events.flatMap((e: Event) =>
    e.type === "user" && Array.isArray(e.message.content)
      ? e.message.content.filter((b) => b.type === "tool_result" && b.tool_use_id === toolUseId)
      : [],
  ) as { tool_use_id: string; content: string; is_error?: boolean }[];
}

describe("decisions on a pending ExitPlanMode", () => {
  it("accepts exactly one of 20 concurrent decisions; the other 19 get 409", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    await api.events(ALICE, session.id); // a terminal is polling, so teleports are allowed too
    const kinds = ["approve", "reject", "teleport", "approve"] as const;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        decision(session.id, {
          decision: kinds[i % kinds.length],
          feedback: "Cover the logout path too.",
        }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const res of responses.filter((r) => r.status === 409)) {
      expect(["already_decided", "session_ended", "not_pending"]).toContain(await errorCode(res));
    }
    expect(await toolResults(session.id)).toHaveLength(1);
  });

  it("refuses a second decision on the same call with 409 already_decided", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    expect(
      (await decision(session.id, { decision: "reject", feedback: "Shorter, please." })).status,
    ).toBe(200);
    const again = await decision(session.id, { decision: "approve" });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("already_decided");
  });

  it("refuses a decision when no plan is pending, or for another call, with 409 not_pending", async () => {
    const session = await executableSession();
    const none = await decision(session.id, { decision: "approve" });
    expect(none.status).toBe(409);
    expect(await errorCode(none)).toBe("not_pending");
    await openPlan(session.id, PLAN);
    const other = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: "toolu_other", decision: "approve" },
    });
    expect(other.status).toBe(409);
    expect(await errorCode(other)).toBe("not_pending");
  });

  it("approve answers with the marker and the plan, leaves plan mode and schedules the next step", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    const res = await decision(session.id, { decision: "approve", permission_mode: "acceptEdits" });
    expect(res.status).toBe(200);
    const after = (await res.json()) as Record<string, unknown>;
    expect(after).toMatchObject({
      status: "running",
      phase: "executing",
      permission_mode: "acceptEdits",
      outcome: { kind: "approved", execution_target: "remote" },
    });
    const [result] = await toolResults(session.id);
    expect(result?.is_error).toBe(false);
    expect(toolResultText(result?.content ?? "").endsWith(`${APPROVED_PLAN_MARKER}\n${PLAN}`)).toBe(
      true,
    );
    // The approval woke the loop: its alarm ran the next step.
    await eventually(() => stepsRun(session.id) === 1);
  });

  it("approve with an edited plan replaces the plan file and uses the edited marker", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    const edited = "# Plan\n\nOnly the callback route.\n";
    expect((await decision(session.id, { decision: "approve", plan: edited })).status).toBe(200);
    const plan = await api.plan(ALICE, session.id);
    expect(plan).toMatchObject({ content: edited, revision: 2, edited_by_user: true });
    const [result] = await toolResults(session.id);
    expect(toolResultText(result?.content ?? "")).toContain(
      `${APPROVED_PLAN_EDITED_MARKER}\n${edited}`,
    );
  });

  it("approve of an empty plan is allowed and invents no plan text", async () => {
    const session = await executableSession();
    await openPlan(session.id, "");
    expect((await decision(session.id, { decision: "approve" })).status).toBe(200);
    const [result] = await toolResults(session.id);
    expect(toolResultText(result?.content ?? "").endsWith(`${APPROVED_PLAN_MARKER}\n`)).toBe(true);
  });

  it("refuses approve on the offline planner with 409 cannot_execute_remotely", async () => {
    const session = await createDrivenSession();
    expect(session.can_execute_remotely).toBe(false);
    await openPlan(session.id, PLAN);
    const res = await decision(session.id, { decision: "approve" });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("cannot_execute_remotely");
    expect((await api.getSession(ALICE, session.id)).phase).toBe("plan_ready");
  });

  it("refuses approving a plan over 200,000 characters with 409 plan_too_large", async () => {
    const session = await executableSession();
    await openPlan(session.id, "x".repeat(200_001));
    const res = await decision(session.id, { decision: "approve" });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("plan_too_large");
    expect(
      (await decision(session.id, { decision: "approve", plan: "y".repeat(200_000) })).status,
    ).toBe(200);
  });

  it("refuses a reject without feedback or comments with 400 feedback_required", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    for (const body of [{}, { feedback: "   " }, { comments: [] }]) {
      const res = await decision(session.id, { decision: "reject", ...body });
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("feedback_required");
    }
    expect((await api.getSession(ALICE, session.id)).reject_count).toBe(0);
  });

  it("reject keeps plan mode, counts the rejection and answers with the feedback and quoted comments", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    const res = await decision(session.id, {
      decision: "reject",
      comments: [{ quote: "Reuse the session cookie.", text: "Use a fresh token instead." }],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: "running",
      phase: "running",
      permission_mode: "plan",
      reject_count: 1,
      outcome: null,
    });
    const [result] = await toolResults(session.id);
    expect(result?.is_error).toBe(true);
    expect(toolResultText(result?.content ?? "")).toContain(
      "> Reuse the session cookie.\nUse a fresh token instead.",
    );
  });

  it("keeps each decision as a record the review page reads: feedback and comments as sent, an edited approval", async () => {
    const session = await executableSession();
    await openPlan(session.id, PLAN);
    const feedback = `Cover the ${TELEPORT_SENTINEL} case too.`;
    const rejected = await decision(session.id, {
      decision: "reject",
      feedback,
      comments: [{ quote: "2. Reuse the session cookie.", text: "Rotate it on login." }],
    });
    expect(rejected.status).toBe(200);
    await openPlan(session.id, PLAN, "toolu_plan_2");
    const approved = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: "toolu_plan_2", decision: "approve", plan: `${PLAN}3. Log it.\n` },
    });
    expect(approved.status).toBe(200);

    const page = await exports.default.fetch(new Request(session.review_url));
    const html = await page.text();
    expect(html).toContain("Presented the plan for review → not approved, keep planning");
    // The reviewer's own text, from the record (the model's prose has the marker made inert).
    expect(html).toContain(feedback);
    expect(html).toContain("Rotate it on login.");
    expect(html).toContain("Presented the plan for review → approved (edited by you)");
    const [rejection] = await toolResults(session.id);
    expect(rejection?.content).not.toContain(TELEPORT_SENTINEL);
  });

  it("refuses teleport without a terminal poll in the last 15 s, and accepts it after one", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, PLAN);
    const refused = await decision(session.id, { decision: "teleport" });
    expect(refused.status).toBe(409);
    expect(await errorCode(refused)).toBe("no_terminal");

    await api.events(ALICE, session.id);
    // A poll that is 15 s old or more no longer counts: move the object's clock past the window.
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => {
      object.clock = () => Date.now() + 15_001;
    });
    const stale = await decision(session.id, { decision: "teleport" });
    expect(stale.status).toBe(409);
    expect(await errorCode(stale)).toBe("no_terminal");

    await api.events(ALICE, session.id);
    const accepted = await decision(session.id, { decision: "teleport" });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({
      status: "archived",
      phase: "done",
      outcome: { kind: "teleport", execution_target: "local" },
    });
    const [result] = await toolResults(session.id);
    expect(result?.is_error).toBe(true);
    expect(toolResultText(result?.content ?? "")).toContain(`${TELEPORT_SENTINEL}\n${PLAN}`);
    const events = await api.allEvents(ALICE, session.id);
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "archived" });
  });

  it("lets nothing change a teleported session afterwards", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, PLAN);
    await api.events(ALICE, session.id);
    expect((await decision(session.id, { decision: "teleport" })).status).toBe(200);
    const before = await api.allEvents(ALICE, session.id);
    const message = await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
      json: { text: "go on" },
    });
    expect(message.status).toBe(409);
    expect(await errorCode(message)).toBe("session_ended");
    await expect(
      withPort(session.id, (port) =>
        port.appendEvents([{ type: "user", message: { role: "user", content: "x" } }]),
      ),
    ).rejects.toThrow(/ended/);
    expect(await api.allEvents(ALICE, session.id)).toEqual(before);
  });
});
