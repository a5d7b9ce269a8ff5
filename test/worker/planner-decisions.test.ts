import { describe, expect, it } from "vitest";
import { step } from "../../src/planner/loop.ts";
import {
  APPROVED_PLAN_MARKER,
  TELEPORT_SENTINEL,
  toolResultText,
} from "../../src/protocol/index.ts";
import {
  PLAN_PATH as PLAN,
  runUntilStopped,
  scriptedSession as session,
  text,
  tool,
  toolResultsOf,
  turn,
} from "./planner/helpers.ts";

describe("the agent loop around decisions, answers and messages", () => {
  it("after approval, Write goes to the overlay and a final reply finishes remote execution", async () => {
    const { port, opts } = session([
      turn(
        tool("Write", { file_path: PLAN, content: "# Plan\nAdd rounding.\n" }),
        tool("ExitPlanMode", {}),
      ),
      turn(
        tool("Edit", {
          file_path: "src/billing/invoice.ts",
          old_string: "return subtotal + tax;",
          new_string: "return Math.round((subtotal + tax) * 100) / 100;",
        }),
        tool("Write", {
          file_path: "src/billing/round.ts",
          content: "export const cents = (n: number) => Math.round(n * 100) / 100;\n",
        }),
        tool("Write", { file_path: PLAN, content: "# sneaky rewrite" }),
      ),
      turn(text("Done: totals are rounded to cents.")),
    ]);
    await runUntilStopped(port, opts);
    const wait = port.pendingWait()!;
    port.decide(wait.tool_use_id, { kind: "approve" });
    expect(port.permissionMode()).toBe("default");
    const approved = toolResultsOf(port.listEvents()).find(
      (r) => r.tool_use_id === wait.tool_use_id,
    )!;
    expect(toolResultText(approved.content)).toContain(
      `${APPROVED_PLAN_MARKER}\n# Plan\nAdd rounding.\n`,
    );

    expect(await runUntilStopped(port, opts)).toEqual({ next: "idle" });
    expect(port.readOverlay("src/billing/invoice.ts")).toContain(
      "Math.round((subtotal + tax) * 100) / 100",
    );
    expect(port.readOverlay("src/billing/round.ts")).toContain("export const cents");
    expect(port.readPlan()?.content).toBe("# Plan\nAdd rounding.\n");
    const denied = toolResultsOf(port.listEvents()).at(-1)!;
    expect(denied.is_error).toBe(true);
    expect(toolResultText(denied.content)).toContain("The plan was approved and is now read-only");
    expect(port.finished).toBe(true);
    expect(port.listEvents().at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });

  it("after a rejection the model sees the feedback and the quoted comments, revises and asks again", async () => {
    const { port, planner, opts } = session([
      turn(
        tool("Write", { file_path: PLAN, content: "# Plan\nTouch tax.ts.\n" }),
        tool("ExitPlanMode", {}),
      ),
      turn(
        tool("Edit", {
          file_path: PLAN,
          old_string: "Touch tax.ts.",
          new_string: "Touch currency.ts.",
        }),
        tool("ExitPlanMode", {}),
      ),
    ]);
    await runUntilStopped(port, opts);
    const first = port.pendingWait()!;
    port.decide(first.tool_use_id, {
      kind: "reject",
      feedback: "Leave tax alone.",
      comments: [{ quote: "Touch tax.ts.", text: "Use currency.ts instead." }],
    });
    expect(port.permissionMode()).toBe("plan");
    expect(await runUntilStopped(port, opts)).toEqual({ next: "wait" });
    const seen = JSON.stringify(planner.requests[1]!.messages.at(-1));
    expect(seen).toContain("Leave tax alone.");
    expect(seen).toContain("> Touch tax.ts.");
    expect(seen).toContain('"is_error":true');
    expect(port.readPlan()).toMatchObject({ content: "# Plan\nTouch currency.ts.\n", revision: 2 });
    expect(port.pendingWait()?.tool_use_id).not.toBe(first.tool_use_id);
  });

  it("the in-memory session decides by the session's own rules, refusals included", async () => {
    const { port, opts } = session([
      turn(tool("Write", { file_path: PLAN, content: "# Plan\n" }), tool("ExitPlanMode", {})),
    ]);
    await runUntilStopped(port, opts);
    const id = port.pendingWait()!.tool_use_id;
    expect(() => port.decide(id, { kind: "reject" })).toThrow("feedback_required");
    expect(() => port.decide("toolu_other", { kind: "approve" })).toThrow("not_pending");
    expect(() => port.decide(id, { kind: "approve", plan: "x".repeat(200_001) })).toThrow(
      "plan_too_large",
    );
    port.decide(id, { kind: "reject", comments: [{ quote: "# Plan", text: "Say more." }] });
    expect(() => port.decide(id, { kind: "approve" })).toThrow("already_decided");
    expect(port.rejectCount).toBe(1);
    expect(port.decisions).toMatchObject([
      { tool_use_id: id, kind: "reject", feedback: null, comments: [{ quote: "# Plan" }] },
    ]);
    const answer = port.listEvents().find((e) => e.type === "user" && e.decision !== undefined);
    expect(answer).toMatchObject({ decision: { tool_use_id: id, kind: "reject" } });
  });

  it("after a teleport the session is archived and the model is never called again", async () => {
    const { port, planner, opts } = session([
      turn(tool("Write", { file_path: PLAN, content: "# Plan\n" }), tool("ExitPlanMode", {})),
      turn(tool("Write", { file_path: "src/app.ts", content: "// diverged" })),
    ]);
    await runUntilStopped(port, opts);
    port.decide(port.pendingWait()!.tool_use_id, { kind: "teleport" });
    const result = toolResultsOf(port.listEvents()).at(-1)!;
    expect(toolResultText(result.content)).toContain(`${TELEPORT_SENTINEL}\n# Plan\n`);
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(planner.requests).toHaveLength(1);
    expect(port.listOverlay()).toEqual([]);
  });

  it("delivers text the user sent while a question was open after the question's tool result", async () => {
    const { port, planner, opts } = session([
      turn(
        tool("AskUserQuestion", {
          questions: [
            {
              question: "Which provider?",
              header: "Provider",
              options: [{ label: "GitHub" }, { label: "Google" }],
            },
          ],
        }),
      ),
      turn(text("Thanks.")),
    ]);
    await runUntilStopped(port, opts);
    const wait = port.pendingWait()!;
    port.sendText("Also keep the password login.");
    expect(await step(port, {}, opts)).toEqual({ next: "wait" });
    expect(planner.requests).toHaveLength(1);
    port.answer(wait.tool_use_id, { "Which provider?": "GitHub" });
    await runUntilStopped(port, opts);
    const last = planner.requests[1]!.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: wait.tool_use_id,
      is_error: false,
    });
    expect(last.content[1]).toMatchObject({ type: "text", text: "Also keep the password login." });
  });

  it("refuses ExitPlanMode outside plan mode with a validation error", async () => {
    const { port, opts } = session([
      turn(tool("ExitPlanMode", {})),
      turn(tool("ExitPlanMode", {})),
      turn(text("ok")),
    ]);
    await runUntilStopped(port, opts);
    port.decide(port.pendingWait()!.tool_use_id, { kind: "approve" });
    await runUntilStopped(port, opts);
    const last = toolResultsOf(port.listEvents()).at(-1)!;
    expect(last.is_error).toBe(true);
    expect(toolResultText(last.content)).toContain("You are not in plan mode");
    expect(port.pendingWait()).toBeNull();
  });

  it("opens the review of a plan over 200,000 characters but marks it not approvable", async () => {
    const { port, opts } = session([
      turn(
        tool("Write", { file_path: PLAN, content: "x".repeat(200_001) }),
        tool("ExitPlanMode", {}),
      ),
    ]);
    await runUntilStopped(port, opts);
    expect(port.pendingWait()).toMatchObject({
      kind: "plan",
      input: { plan_chars: 200_001, approvable: false },
    });
  });

  it("lets only one wait open per reply: a second question or plan review in the same reply is refused", async () => {
    const q = {
      questions: [
        { question: "A or B?", header: "Choice", options: [{ label: "A" }, { label: "B" }] },
      ],
    };
    const { port, opts } = session([turn(tool("AskUserQuestion", q), tool("ExitPlanMode", {}))]);
    await runUntilStopped(port, opts);
    expect(port.pendingWait()?.kind).toBe("question");
    const [refused] = toolResultsOf(port.listEvents());
    expect(toolResultText(refused!.content)).toContain(
      "another question or plan review is already waiting",
    );
  });

  it("attaches reminders by the schedule and rebuilds earlier turns identically (a stable prefix)", async () => {
    const script = Array.from({ length: 8 }, (_, i) => turn(text(`reply ${i + 1}`)));
    const { port, planner, opts } = session(script);
    await runUntilStopped(port, opts);
    for (let i = 2; i <= 7; i++) {
      port.sendText(`message ${i}`);
      await runUntilStopped(port, opts);
    }
    const last = planner.requests.at(-1)!;
    const humanTurns = last.messages.filter((m) => m.role === "user");
    const reminders = humanTurns.map((m) => {
      const t = JSON.stringify(m.content);
      return t.includes("Plan mode is active. The user")
        ? "full"
        : t.includes("Plan mode is still active")
          ? "sparse"
          : null;
    });
    expect(reminders).toEqual(["full", null, null, null, null, "sparse", null]);
    // Every earlier request is a prefix of the later ones.
    for (let i = 1; i < planner.requests.length; i++) {
      const before = planner.requests[i - 1]!.messages;
      expect(planner.requests[i]!.messages.slice(0, before.length)).toEqual(before);
    }
    expect(last.system).toBe(planner.requests[0]!.system);
    expect(last.tools).toEqual(planner.requests[0]!.tools);
  });

  it("replaces the workflow with custom instructions but keeps the preamble and the ExitPlanMode footer", async () => {
    const { port, planner, opts } = session([turn(text("ok"))], {
      instructions: "Interview the user before reading code.",
    });
    await runUntilStopped(port, opts);
    const reminder = JSON.stringify(planner.requests[0]!.messages[0]!.content);
    expect(reminder).toContain("Interview the user before reading code.");
    expect(reminder).toContain("Plan mode is active.");
    expect(reminder).toContain("## Finishing");
    expect(reminder).not.toContain("## Workflow\\n1. Understand the request");
  });
});
