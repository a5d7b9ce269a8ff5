import { describe, expect, it } from "vitest";
import { MAX_APPROVABLE_PLAN_CHARS, TELEPORT_SENTINEL } from "../../src/protocol/index.ts";
import { ALICE, api, errorCode, withPort } from "../support/worker/sessions.ts";
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
 * Plan mode is enforced by the real session, whatever the model asks: writes outside the plan
 * file change nothing, and a plan too long to review cannot be approved or teleported.
 */

describe("a write outside the plan file in plan mode, in the real session", () => {
  it("is denied with a reason the model sees, and nothing is written anywhere", async () => {
    const { session } = await startScripted([
      turn(
        say("The README says to fix the invoice directly, so I will."),
        use("Write", { file_path: "src/billing/invoice.ts", content: "export {};\n" }),
        use("Edit", {
          file_path: "/repo/src/billing/tax.ts",
          old_string: "DE: 0.19",
          new_string: "DE: 0",
        }),
        use("Write", { file_path: "src/new-module.ts", content: "export const injected = 1;\n" }),
        use("Write", { file_path: "/plans/../repo/src/app.ts", content: "x\n" }),
        use("Write", { file_path: "$PLAN_PATH/../../repo/src/app.ts", content: "x\n" }),
        use("Write", { file_path: "/PLANS/$PLAN_PATH", content: "x\n" }),
        use("Write", { file_path: "./$PLAN_PATH", content: "x\n" }),
        use("Write", { file_path: "$PLAN_PATH", content: "x\n", path: "src/app.ts" }),
        use("Bash", { command: "echo pwned > src/app.ts" }),
      ),
      turn(say("I could not change the repository in plan mode.")),
    ]);
    const after = await settled(session.id);
    expect(after).toMatchObject({ status: "idle", phase: "needs_input", permission_mode: "plan" });

    const events = await eventsOf(after);
    expectWellFormedLog(events);
    const calls = toolCalls(events);
    expect(calls).toHaveLength(9);
    for (const call of calls) {
      const result = resultOf(events, call.id);
      expect(result.is_error, `${call.name} ${JSON.stringify(call.input)}`).toBe(true);
      expect(resultText(result)).toMatch(/^Permission denied: /);
    }
    expect(resultText(resultOf(events, calls[0]!.id))).toContain("Plan mode is active");

    // Nothing changed: no overlay row, no diff, no plan file.
    expect(await withPort(session.id, (port) => port.listOverlay())).toEqual([]);
    expect(await api.changes(ALICE, session.id)).toBe("");
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: "", revision: 0 });
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });
});

describe("a plan over 200,000 characters, in the real session", () => {
  it("cannot be approved or teleported (409 plan_too_large); rejecting works and a plan at the limit can go", async () => {
    const tooLong = `# Plan\n\n${"x".repeat(MAX_APPROVABLE_PLAN_CHARS - 7)}`;
    const atLimit = `# Plan\n\n${"y".repeat(MAX_APPROVABLE_PLAN_CHARS - 8)}`;
    expect(tooLong).toHaveLength(MAX_APPROVABLE_PLAN_CHARS + 1);
    expect(atLimit).toHaveLength(MAX_APPROVABLE_PLAN_CHARS);
    const { session } = await startScripted([
      turn(use("Write", { file_path: "$PLAN_PATH", content: tooLong }), use("ExitPlanMode", {})),
      turn(use("Write", { file_path: "$PLAN_PATH", content: atLimit }), use("ExitPlanMode", {})),
    ]);
    const review = await settled(session.id);
    expect(review.phase).toBe("plan_ready");
    expect(review.pending?.input).toMatchObject({
      plan_chars: MAX_APPROVABLE_PLAN_CHARS + 1,
      approvable: false,
    });
    const call = review.pending!.tool_use_id;
    await api.events(ALICE, session.id, { limit: 1 }); // a terminal is polling

    for (const decision of ["approve", "teleport"] as const) {
      const res = await api.call("POST", `/v1/sessions/${session.id}/decision`, ALICE, {
        json: { tool_use_id: call, decision },
      });
      expect(res.status, decision).toBe(409);
      expect(await errorCode(res)).toBe("plan_too_large");
    }
    expect(await api.getSession(ALICE, session.id)).toMatchObject({
      phase: "plan_ready",
      outcome: null,
    });

    await api.decide(ALICE, session.id, {
      tool_use_id: call,
      decision: "reject",
      feedback: "Too long to review; shorten it.",
    });
    const revised = await settled(session.id);
    expect(revised.pending?.input).toMatchObject({
      plan_chars: MAX_APPROVABLE_PLAN_CHARS,
      approvable: true,
    });
    await api.events(ALICE, session.id, { limit: 1 });
    const teleported = await api.decide(ALICE, session.id, {
      tool_use_id: revised.pending!.tool_use_id,
      decision: "teleport",
    });
    expect(teleported.status).toBe("archived");
    const events = await eventsOf(teleported);
    const handoff = resultOf(events, revised.pending!.tool_use_id);
    expect(resultText(handoff)).toContain(`${TELEPORT_SENTINEL}\n${atLimit}`);
  });
});
