import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../src/session/session-object.ts";
import { eventually } from "../support/eventually.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  openPlan,
  PLAN_CALL,
  seedEvents,
  sessionObject,
  stepsRun,
  withPort,
} from "../support/worker/sessions.ts";

describe("a new Durable Object instance", () => {
  it("reads the same session, log, plan, decisions, overlay and usage after the old one is gone", async () => {
    const session = await createDrivenSession(ALICE.token, {
      planner: "scripted",
      script: [{ content: [{ type: "text", text: "unused" }] }],
    });
    await seedEvents(session.id, 25);
    await openPlan(session.id, "# Plan\n\nStep one.\n");
    await withPort(session.id, (port) => {
      port.writeOverlay("src/app.ts", "export const app = 1;\n");
      port.addUsage({ input_tokens: 120, output_tokens: 45 }, 0.0042);
      port.saveEngineState({ turns: 3 });
    });
    await api.events(ALICE, session.id);
    await api.decide(ALICE, session.id, {
      tool_use_id: PLAN_CALL,
      decision: "reject",
      feedback: "Add tests.",
    });
    // The rejection woke the loop; let that step finish so nothing is in flight at the abort.
    await eventually(
      async () =>
        stepsRun(session.id) === 1 && (await api.getSession(ALICE, session.id)).status === "idle",
    );

    const before = {
      session: await api.getSession(ALICE, session.id),
      events: await api.allEvents(ALICE, session.id),
      plan: await api.plan(ALICE, session.id),
      changes: await api.changes(ALICE, session.id),
    };
    const instanceBefore = await runInDurableObject(
      sessionObject(session.id),
      (object: SessionObject) => object,
    );

    await abortAllDurableObjects();

    const instanceAfter = await runInDurableObject(
      sessionObject(session.id),
      (object: SessionObject) => object,
    );
    expect(instanceAfter).not.toBe(instanceBefore);
    expect(await api.getSession(ALICE, session.id)).toEqual(before.session);
    expect(await api.allEvents(ALICE, session.id)).toEqual(before.events);
    expect(await api.plan(ALICE, session.id)).toEqual(before.plan);
    expect(await api.changes(ALICE, session.id)).toBe(before.changes);
    expect(before.changes).toContain("+export const app = 1;");
    expect(before.session).toMatchObject({
      reject_count: 1,
      usage: { input_tokens: 120, output_tokens: 45, cost_usd: 0.0042 },
    });
    expect(await withPort(session.id, (port) => port.loadState().engineState)).toEqual({
      turns: 3,
    });
    // The decision is still recorded: a second one is refused.
    const again = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: PLAN_CALL, decision: "reject", feedback: "Again." },
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe(
      "already_decided",
    );
    // And the list, served by the owner index, still has it.
    expect((await api.listSessions(ALICE, { limit: 100 })).data.map((s) => s.id)).toContain(
      session.id,
    );
  });
});
