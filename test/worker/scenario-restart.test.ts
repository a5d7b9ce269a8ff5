import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../src/session/session-object.ts";
import { eventually } from "../support/eventually.ts";
import { ALICE, api, sessionObject } from "../support/worker/sessions.ts";
import {
  eventsOf,
  expectWellFormedLog,
  resultOf,
  settled,
  startRecorded,
  toolCalls,
  turn,
  use,
} from "./scenario/support.ts";

/**
 * A restart in the middle of a step, on the real session Durable Object: the object is reset
 * with `ctx.abort()` (as when the runtime restarts or evicts it) while a model call is in
 * flight. The next instance picks the step up again from its SQLite storage: the turn whose
 * reply never arrived is asked again, but nothing that already happened — an event, a plan
 * write — happens twice. (`abortAllDurableObjects()` would do too, but with an alarm in flight
 * it leaves the vitest run hanging at exit; `ctx.abort()` resets just this object.)
 */

const DRAFT = "# Plan\n\nDraft.\n";
const RESTART = "restart in the middle of a step";
const FINAL = "# Plan\n\n1. Round `invoiceTotal` to cents.\n";
/** Long enough for the test to see the call in flight and abort the object during it. */
const MODEL_LATENCY_MS = 1_500;

describe("a restart in the middle of a step, in the real session", () => {
  it("resumes after the object is aborted during a model call: no duplicated event, effect or call", async () => {
    const { session, requests } = await startRecorded([
      turn(
        use("Read", { file_path: "src/billing/invoice.ts" }),
        use("Write", { file_path: "$PLAN_PATH", content: DRAFT }),
      ),
      {
        ...turn(
          use("Edit", { file_path: "$PLAN_PATH", old_string: DRAFT, new_string: FINAL }),
          use("ExitPlanMode", {}),
        ),
        delay_ms: MODEL_LATENCY_MS,
      },
    ]);
    const instanceBefore = await runInDurableObject(
      sessionObject(session.id),
      (o: SessionObject) => o,
    );
    // The second model call is in flight once the spy has seen its request: reset right then.
    await eventually(() => requests.length === 2, { interval: 5 });
    await expect(
      runInDurableObject(sessionObject(session.id), (_o, state) => state.abort(RESTART)),
    ).rejects.toThrow(RESTART);

    // The aborted call left nothing behind: the first turn and its effects only.
    const before = await eventsOf(session);
    expect(before.filter((e) => e.type === "assistant")).toHaveLength(1);
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: DRAFT, revision: 1 });

    // The next instance (started by the reads above) re-arms the alarm for the step still due
    // in SQLite, and the runtime runs it once the failed run is over (workerd's retry backoff
    // makes that a few seconds); the step resumes from what SQLite holds.
    const after = await settled(session.id);
    const instanceAfter = await runInDurableObject(
      sessionObject(session.id),
      (o: SessionObject) => o,
    );
    expect(instanceAfter).not.toBe(instanceBefore);
    expect(after).toMatchObject({ status: "requires_action", phase: "plan_ready" });

    // Wait past the aborted call's latency: its late answer must not land anywhere.
    await new Promise((resolve) => setTimeout(resolve, MODEL_LATENCY_MS));
    const events = await eventsOf(after);
    expectWellFormedLog(events);
    expect(events.slice(0, before.length)).toEqual(before);
    expect(events.filter((e) => e.type === "assistant")).toHaveLength(2);
    expect(events.filter((e) => e.type === "result")).toEqual([
      expect.objectContaining({ subtype: "success", is_error: false }),
    ]);
    const calls = toolCalls(events);
    expect(calls.map((c) => c.name)).toEqual(["Read", "Write", "Edit", "ExitPlanMode"]);
    for (const call of calls.slice(0, 3)) expect(resultOf(events, call.id).is_error).toBe(false);
    // The plan was written once and edited once: revision 2, never a replayed draft.
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: FINAL, revision: 2 });
    expect(after.pending).toMatchObject({ kind: "plan", tool_use_id: calls[3]!.id });
    expect(after.usage).toEqual({ input_tokens: 200, output_tokens: 40, cost_usd: 0 });
  });
});
