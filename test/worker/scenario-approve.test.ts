import { applyPatch, parsePatch } from "diff";
import { describe, expect, it } from "vitest";
import { APPROVED_PLAN_MARKER } from "../../src/protocol/index.ts";
import { ALICE, api } from "../support/worker/sessions.ts";
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
 * Plan → approve → remote execution, on the real session Durable Object: the alarm-driven loop
 * runs the real engine with the scripted planner, the test approves through the HTTP API, and
 * the remote edits come back from `/changes` as a patch that reproduces them on the original
 * files. (`git apply --check` on a real checkout is the node end-to-end test's job:
 * test/e2e/planner-remote-execution.test.ts.)
 */

const PLAN =
  "# Plan: round invoice totals\n\n1. Round `invoiceTotal` to cents.\n2. Add `roundToCents`.\n";
const ROUNDING =
  "/** Rounds an amount of money to whole cents. */\nexport function roundToCents(amount: number): number {\n  return Math.round(amount * 100) / 100;\n}\n";

const script = [
  turn(
    say("Let me read the invoice code first."),
    use("Read", { file_path: "src/billing/invoice.ts" }),
    use("Grep", { pattern: "invoiceTotal", output_mode: "files_with_matches" }),
  ),
  turn(use("Write", { file_path: "$PLAN_PATH", content: PLAN }), use("ExitPlanMode", {})),
  // After the approval: edit an existing file, create a new one, edit one under /repo/, and try
  // the plan file (read-only once approved).
  turn(
    use("Edit", {
      file_path: "src/billing/invoice.ts",
      old_string: "  return subtotal + tax;",
      new_string: "  return roundToCents(subtotal + tax);",
    }),
    use("Edit", {
      file_path: "src/billing/invoice.ts",
      old_string: 'import { taxFor } from "./tax.js";',
      new_string:
        'import { roundToCents } from "./rounding.js";\nimport { taxFor } from "./tax.js";',
    }),
    use("Write", { file_path: "src/billing/rounding.ts", content: ROUNDING }),
    use("Edit", {
      file_path: "/repo/src/billing/currency.ts",
      old_string: 'currency = "EUR"',
      new_string: 'currency = "USD"',
    }),
    use("Write", { file_path: "$PLAN_PATH", content: "# Rewritten after approval\n" }),
  ),
  turn(say("Done: invoice totals are rounded to cents. Run `npm test` to verify.")),
];

describe("plan → approve → remote edits, in the real session", () => {
  it("plans, waits for the decision, executes the approved plan on the overlay and serves the diff", async () => {
    const { session, files } = await startScripted(script, { permission_mode: "acceptEdits" });

    // Planning: the loop stops at the plan review.
    const review = await settled(session.id);
    expect(review).toMatchObject({
      status: "requires_action",
      phase: "plan_ready",
      permission_mode: "plan",
      planner: "scripted",
      can_execute_remotely: true,
    });
    expect(review.pending).toMatchObject({ kind: "plan", input: { approvable: true } });
    const planCall = review.pending!.tool_use_id;
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: PLAN, revision: 1 });
    expect(await api.changes(ALICE, session.id)).toBe("");
    let events = await eventsOf(review);
    const read = toolCalls(events).find((c) => c.name === "Read")!;
    expect(resultText(resultOf(events, read.id))).toContain("export function invoiceTotal");
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false });

    // The user approves; the loop carries the plan out in the cloud.
    const approved = await api.decide(ALICE, session.id, {
      tool_use_id: planCall,
      decision: "approve",
    });
    expect(approved.outcome).toEqual({ kind: "approved", execution_target: "remote" });
    const done = await settled(session.id);
    expect(done).toMatchObject({
      status: "idle",
      phase: "done",
      permission_mode: "acceptEdits",
      outcome: { kind: "approved", execution_target: "remote" },
      usage: { input_tokens: 400, output_tokens: 80 },
    });

    events = await eventsOf(done);
    expectWellFormedLog(events);
    const approval = resultOf(events, planCall);
    expect(approval.is_error).toBe(false);
    expect(resultText(approval)).toContain(`${APPROVED_PLAN_MARKER}\n${PLAN}`);
    const executed = toolCalls(events).slice(-5);
    expect(executed.slice(0, 4).map((c) => resultOf(events, c.id).is_error)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const planWrite = resultOf(events, executed[4]!.id);
    expect(planWrite.is_error).toBe(true);
    expect(resultText(planWrite)).toContain("read-only");
    expect(await api.plan(ALICE, session.id)).toMatchObject({ content: PLAN, revision: 1 });
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "success", is_error: false });

    // The diff: git headers, a new file, and exactly the edits — applied to the original
    // snapshot files it reproduces the overlay.
    const diff = await api.changes(ALICE, session.id);
    expect(diff).toContain("diff --git a/src/billing/invoice.ts b/src/billing/invoice.ts");
    expect(diff).toContain("new file mode 100644");
    expect(diff).toContain("--- /dev/null\n+++ b/src/billing/rounding.ts");
    const patches = parsePatch(diff);
    expect(patches.map((p) => p.newFileName)).toEqual([
      "b/src/billing/currency.ts",
      "b/src/billing/invoice.ts",
      "b/src/billing/rounding.ts",
    ]);
    const after = Object.fromEntries(
      patches.map((p) => {
        const path = p.newFileName!.slice(2);
        const result = applyPatch(files[path] ?? "", p);
        if (result === false) throw new Error(`the patch of ${path} does not apply`);
        return [path, result];
      }),
    );
    expect(after["src/billing/rounding.ts"]).toBe(ROUNDING);
    expect(after["src/billing/currency.ts"]).toBe(
      files["src/billing/currency.ts"]!.replace('currency = "EUR"', 'currency = "USD"'),
    );
    expect(after["src/billing/invoice.ts"]).toContain(
      'import { roundToCents } from "./rounding.js";\nimport { taxFor } from "./tax.js";',
    );
    expect(after["src/billing/invoice.ts"]).toContain("  return roundToCents(subtotal + tax);");
    expect(after["src/billing/invoice.ts"]).not.toContain("  return subtotal + tax;");
  });
});
