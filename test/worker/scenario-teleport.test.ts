import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TELEPORT_SENTINEL } from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { ALICE, api, errorCode, sessionObject } from "../support/worker/sessions.ts";
import {
  eventsOf,
  expectWellFormedLog,
  resultOf,
  resultText,
  say,
  settled,
  startScripted,
  toolCalls,
  turn,
  use,
} from "./scenario/support.ts";

/**
 * Plan → reject with comments → revised plan → teleport, on the real session Durable Object.
 * The script holds a TRAP turn after the teleport: had the model been called again, it would
 * rewrite the plan file and say so. After a teleport the session is archived at once and the
 * planner is never asked again, so the trap never springs.
 */

const FIRST = "# Plan\n\n1. Round invoice totals.\n";
const SECOND =
  "# Plan\n\n1. Round invoice totals to cents in `invoiceTotal`.\n2. Test it in test/billing/invoice.test.ts.\n";

/** The retention purge is days away (PLANPORT_RETENTION_DAYS, 7 by default); a step is due now. */
const RETENTION_FLOOR_MS = 6 * 24 * 3_600_000;

/** Written only by the trap turn (a word that appears nowhere else in a session's log). */
const TRAP = "trap-sprung-after-teleport";

const script = [
  turn(use("Write", { file_path: "$PLAN_PATH", content: FIRST }), use("ExitPlanMode", {})),
  turn(
    use("Edit", { file_path: "$PLAN_PATH", old_string: FIRST, new_string: SECOND }),
    use("ExitPlanMode", {}),
  ),
  // The trap: only reached if the engine calls the planner after the teleport.
  turn(
    say(`${TRAP}: the planner was called after the teleport.`),
    use("Write", { file_path: "$PLAN_PATH", content: `${TRAP}\n` }),
  ),
];

describe("reject → revise → teleport, in the real session", () => {
  it("folds the feedback into a revision, then teleports, archives and never calls the planner again", async () => {
    const { session } = await startScripted(script);
    const first = await settled(session.id);
    expect(first.phase).toBe("plan_ready");
    const firstCall = first.pending!.tool_use_id;

    // Keep planning, with feedback and a comment on a passage of the plan.
    const rejected = await api.decide(ALICE, session.id, {
      tool_use_id: firstCall,
      decision: "reject",
      feedback: "Say where the rounding goes and how it is tested.",
      comments: [{ quote: "Round invoice totals.", text: "To cents, please." }],
    });
    expect(rejected.reject_count).toBe(1);
    const second = await settled(session.id);
    expect(second).toMatchObject({ phase: "plan_ready", permission_mode: "plan", reject_count: 1 });
    const secondCall = second.pending!.tool_use_id;
    expect(secondCall).not.toBe(firstCall);
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: SECOND, revision: 2 });
    let events = await eventsOf(second);
    const rejection = resultOf(events, firstCall);
    expect(rejection.is_error).toBe(true);
    expect(resultText(rejection)).toContain("Say where the rounding goes and how it is tested.");
    expect(resultText(rejection)).toContain("> Round invoice totals.\nTo cents, please.");

    // Teleport needs a terminal polling the feed (a bearer-token events call).
    const noTerminal = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: secondCall, decision: "teleport" },
    });
    expect(noTerminal.status).toBe(409);
    expect(await errorCode(noTerminal)).toBe("no_terminal");
    await api.events(ALICE, session.id, { limit: 1 });
    const teleported = await api.decide(ALICE, session.id, {
      tool_use_id: secondCall,
      decision: "teleport",
    });
    expect(teleported).toMatchObject({
      status: "archived",
      phase: "done",
      outcome: { kind: "teleport", execution_target: "local" },
    });

    events = await eventsOf(teleported);
    const handoff = resultOf(events, secondCall);
    expect(handoff.is_error).toBe(true);
    expect(resultText(handoff)).toContain(`${TELEPORT_SENTINEL}\n${SECOND}`);
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "archived" });

    // Only the retention purge is left on the alarm; running it early, or a stray alarm call,
    // changes nothing.
    const alarmAt = await runInDurableObject(sessionObject(session.id), (_o, state) =>
      state.storage.getAlarm(),
    );
    expect(alarmAt).toBeGreaterThan(Date.now() + RETENTION_FLOOR_MS);
    expect(await runDurableObjectAlarm(sessionObject(session.id))).toBe(true);
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => object.alarm());
    const final = await eventsOf(teleported);
    expect(final).toEqual(events);
    expectWellFormedLog(final);
    expect(final.filter((e) => e.type === "assistant")).toHaveLength(2);
    expect(JSON.stringify(final)).not.toContain(TRAP);
    expect(toolCalls(final).filter((c) => c.name === "ExitPlanMode")).toHaveLength(2);
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: SECOND, revision: 2 });
    expect(await api.changes(ALICE, session.id)).toBe("");

    // The ended session refuses more input and a second decision.
    const message = await api.call("POST", `/v1/sessions/${session.id}/messages`, ALICE, {
      json: { text: "Actually, keep going here." },
    });
    expect(message.status).toBe(409);
    expect(await errorCode(message)).toBe("session_ended");
    const again = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
      json: { tool_use_id: secondCall, decision: "approve" },
    });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("already_decided");
    expect(await eventsOf(teleported)).toEqual(events);
  });
});
