import { describe, expect, it } from "vitest";
import { step } from "../../src/planner/loop.ts";
import { SCRIPT_EXHAUSTED_TEXT, scriptedPlanner } from "../../src/planner/models/scripted.ts";
import { TELEPORT_SENTINEL, toolResultText } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import {
  assistantEvents,
  PLAN_PATH as PLAN,
  recording,
  runUntilStopped,
  scriptedSession as session,
  shopFixture,
  text,
  tool,
  toolResultsOf,
  turn,
} from "./planner/helpers.ts";

describe("the agent loop with the scripted planner", () => {
  it("writes the plan, then ExitPlanMode opens the plan review and the turn ends with result/success", async () => {
    const { port, planner, opts } = session([
      turn(text("Reading first."), tool("Read", { file_path: "src/billing/invoice.ts" })),
      turn(
        tool("Write", { file_path: PLAN, content: "# Plan\n\nRound totals in invoiceTotal.\n" }),
        tool("ExitPlanMode", {}),
      ),
    ]);
    expect(await step(port, {}, opts)).toEqual({ next: "continue" });
    expect(await step(port, {}, opts)).toEqual({ next: "wait" });

    const events = port.listEvents();
    expect(events.map((e) => e.type)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "result",
    ]);
    expect(events[0]).toMatchObject({
      type: "system",
      subtype: "init",
      permission_mode: "plan",
      planner: "scripted",
      plan_file: PLAN,
    });
    expect(events.at(-1)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      num_turns: 2,
    });
    expect(port.readPlan()?.content).toBe("# Plan\n\nRound totals in invoiceTotal.\n");
    const wait = port.pendingWait();
    expect(wait).toMatchObject({
      kind: "plan",
      input: { plan_path: PLAN, plan_revision: 1, approvable: true },
    });
    expect(wait?.tool_use_id).toBe("toolu_scripted_1_1");
    expect(port.usage).toEqual({ input_tokens: 20, output_tokens: 10 });

    // The first request carried the full plan-mode reminder on the task; the read result came back numbered.
    const first = planner.requests[0]!;
    const firstUser = first.messages[0]!;
    expect(firstUser.role).toBe("user");
    expect(JSON.stringify(firstUser.content)).toContain("Plan mode is active");
    expect(JSON.stringify(firstUser.content)).toContain(
      `No plan file exists yet. Create your plan at ${PLAN}`,
    );
    expect(toolResultText(toolResultsOf(events)[0]!.content)).toContain(
      "     1\timport type { Order }",
    );
    // A waiting session does nothing on another step.
    expect(await step(port, {}, opts)).toEqual({ next: "wait" });
    expect(planner.requests).toHaveLength(2);
  });

  it("logs the task once as the first user message, even when the user wrote before the first step", async () => {
    const { port, planner, opts } = session([turn(text("ok")), turn(text("ok again"))], {
      prompt: "Add OAuth",
    });
    port.sendText("Also: keep it small.");
    await runUntilStopped(port, opts);
    port.sendText("One more thing.");
    await runUntilStopped(port, opts);
    const humans = port
      .listEvents()
      .filter((e) => e.type === "user")
      .map((e) => e.message.content);
    expect(humans).toEqual(["Also: keep it small.", "Add OAuth", "One more thing."]);
    expect(
      planner.requests[0]!.messages[0]!.content.map((b) =>
        b.type === "text" ? b.text.slice(0, 20) : b.type,
      ),
    ).toEqual(["Also: keep it small.", "<system-reminder>\nPl", "Add OAuth"]);
  });

  it("does nothing for a session archived before its first step", async () => {
    const { port, planner, opts } = session([turn(text("ok"))]);
    port.archive();
    const archived = port.listEvents();
    expect(archived.map((e) => [e.type, "subtype" in e && e.subtype])).toEqual([
      ["system", "init"],
      ["result", "archived"],
    ]);
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(planner.requests).toHaveLength(0);
    expect(port.listEvents()).toEqual(archived);
  });

  it("denies a write outside the plan file in plan mode and changes nothing", async () => {
    const { port, opts } = session([
      turn(
        tool("Write", { file_path: "src/billing/invoice.ts", content: "// pwned" }),
        tool("Edit", { file_path: "/repo/src/app.ts", old_string: "Hono", new_string: "X" }),
      ),
    ]);
    await runUntilStopped(port, opts);
    const results = toolResultsOf(port.listEvents());
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.is_error).toBe(true);
      expect(toolResultText(r.content)).toContain("Permission denied: Plan mode is active");
    }
    expect(port.listOverlay()).toEqual([]);
    expect(port.readPlan()).toBeNull();
    expect(await port.snapshot.read("src/billing/invoice.ts")).toContain("createInvoice");
    // The script ran out: a plain reply ends the turn, the session idles.
    const last = assistantEvents(port.listEvents()).at(-1)!;
    expect(JSON.stringify(last.message.content)).toContain(SCRIPT_EXHAUSTED_TEXT);
    expect(port.listEvents().at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });

  it("never shows a question with fewer than 2 options and tells the model why", async () => {
    const { port, opts } = session([
      turn(
        tool("AskUserQuestion", {
          questions: [
            { question: "Use Postgres?", header: "Database", options: [{ label: "Postgres" }] },
          ],
        }),
      ),
    ]);
    await runUntilStopped(port, opts);
    expect(port.pendingWait()).toBeNull();
    const [result] = toolResultsOf(port.listEvents());
    expect(result!.is_error).toBe(true);
    expect(toolResultText(result!.content)).toContain("The user never saw your question");
    expect(toolResultText(result!.content)).toContain("State the single approach you will take");
  });

  it("answers an unanswered question with the partial answers when the AFK timeout passes", async () => {
    const questions = [
      {
        question: "Which provider?",
        header: "Provider",
        options: [{ label: "GitHub" }, { label: "Google" }],
      },
      {
        question: "Link existing accounts?",
        header: "Linking",
        options: [{ label: "By email" }, { label: "Never" }],
      },
    ];
    const { port, planner, opts } = session(
      [
        turn(tool("AskUserQuestion", { questions })),
        turn(text("Understood; planning with GitHub.")),
      ],
      { askTimeoutS: 60 },
    );
    const opened = await step(port, {}, opts);
    const wait = port.pendingWait()!;
    expect(wait.kind).toBe("question");
    expect(opened).toEqual({ next: "wait", wakeAt: port.now() + 60_000 });

    port.answerPartially(wait.tool_use_id, { "Which provider?": "GitHub" });
    port.advance(30_000);
    expect(await step(port, {}, opts)).toEqual({
      next: "wait",
      wakeAt: Date.parse(wait.opened_at) + 60_000,
    });
    expect(planner.requests).toHaveLength(1);

    port.advance(30_000);
    const expected = port.expectedAfk(wait.tool_use_id);
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(port.pendingWait()).toBeNull();
    const afk = toolResultsOf(port.listEvents()).find((r) => r.tool_use_id === wait.tool_use_id)!;
    expect(afk).toEqual(expected);
    expect(toolResultText(afk.content)).toContain("may be away; use your best judgment");
    expect(toolResultText(afk.content)).toContain('"Which provider?"="GitHub"');
    // The model saw the AFK answer as the tool result of its question.
    const lastUser = planner.requests[1]!.messages.at(-1)!;
    expect(lastUser.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: wait.tool_use_id,
    });
  });

  it("ends the session with error_max_turns after maxTurns model calls without user input", async () => {
    const reading = turn(tool("Glob", { pattern: "**/*.ts" }));
    const { port, planner, opts } = session([reading, reading, reading, reading, reading], {
      maxTurns: 3,
    });
    expect(await runUntilStopped(port, opts)).toEqual({ next: "idle" });
    expect(planner.requests).toHaveLength(3);
    expect(port.ended?.subtype).toBe("error_max_turns");
    expect(port.ended?.message).toContain("3 model calls in a row");
    expect(port.listEvents().at(-1)).toMatchObject({
      type: "result",
      subtype: "error_max_turns",
      is_error: true,
    });
    // An ended session is never stepped into another model call.
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(planner.requests).toHaveLength(3);
  });

  it("resumes after a crash between the reply and a tool result: no second model call, no duplicate event or effect", async () => {
    const { port, planner, opts } = session([
      turn(
        tool("Read", { file_path: "src/auth/session.ts" }),
        tool("Write", { file_path: PLAN, content: "# Plan v1\n" }),
        tool("Glob", { pattern: "src/auth/*" }),
        tool("ExitPlanMode", {}),
      ),
    ]);
    port.crashWhen = (op) => op === "writePlan";
    await expect(step(port, {}, opts)).rejects.toThrow("simulated crash during writePlan");
    // The reply and the Read result were stored; the Write and everything after it were not.
    expect(assistantEvents(port.listEvents())).toHaveLength(1);
    expect(toolResultsOf(port.listEvents()).map((r) => r.tool_use_id)).toEqual([
      "toolu_scripted_0_0",
    ]);
    expect(port.readPlan()).toBeNull();

    expect(await step(port, {}, opts)).toEqual({ next: "wait" });
    expect(planner.requests).toHaveLength(1);
    const events = port.listEvents();
    expect(assistantEvents(events)).toHaveLength(1);
    expect(toolResultsOf(events).map((r) => r.tool_use_id)).toEqual([
      "toolu_scripted_0_0",
      "toolu_scripted_0_1",
      "toolu_scripted_0_2",
    ]);
    expect(port.readPlan()).toMatchObject({ content: "# Plan v1\n", revision: 1 });
    expect(port.pendingWait()?.tool_use_id).toBe("toolu_scripted_0_3");
    expect(events.filter((e) => e.type === "result")).toHaveLength(1);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it("records the turn's end once even when the crash came after the wait opened", async () => {
    const { port, planner, opts } = session([turn(tool("ExitPlanMode", {}))]);
    port.crashWhen = (op, detail) =>
      op === "appendEvents" && JSON.stringify(detail).includes('"subtype":"success"');
    await expect(step(port, {}, opts)).rejects.toThrow("simulated crash");
    expect(port.pendingWait()?.kind).toBe("plan");
    expect(await step(port, {}, opts)).toEqual({ next: "wait" });
    expect(await step(port, {}, opts)).toEqual({ next: "wait" });
    expect(port.listEvents().filter((e) => e.type === "result")).toHaveLength(1);
    expect(planner.requests).toHaveLength(1);
  });

  it("ends only when the session has ended: a tool error quoting the teleport sentinel is just an error", async () => {
    const { port, planner, opts } = session([
      turn(tool("Read", { file_path: `${TELEPORT_SENTINEL}.md` })),
      turn(text("That file does not exist; planning without it.")),
    ]);
    expect(await runUntilStopped(port, opts)).toEqual({ next: "idle" });
    const [missing] = toolResultsOf(port.listEvents());
    expect(missing?.is_error).toBe(true);
    expect(toolResultText(missing!.content)).toContain(TELEPORT_SENTINEL);
    // The model heard about the error and answered: the session went on.
    expect(planner.requests).toHaveLength(2);
    expect(port.hasEnded()).toBe(false);
  });

  it("counts num_turns as the model calls of the whole session, on every result", async () => {
    const { port, opts } = session([
      turn(tool("Glob", { pattern: "src/*" })),
      turn(text("First answer.")),
      turn(text("Second answer.")),
    ]);
    await runUntilStopped(port, opts);
    port.sendText("And the tests?");
    await runUntilStopped(port, opts);
    port.archive();
    const results = port.listEvents().flatMap((e) => (e.type === "result" ? [e] : []));
    expect(results.map((r) => [r.subtype, r.num_turns])).toEqual([
      ["success", 2],
      ["success", 3],
      ["archived", 3],
    ]);
  });

  it("reads the session's state once per step, however many tool calls and events it writes", async () => {
    class CountingPort extends MemoryPort {
      loads = 0;
      override loadState() {
        this.loads++;
        return super.loadState();
      }
    }
    const script = [
      turn(
        tool("Read", { file_path: "src/billing/invoice.ts" }),
        tool("Glob", { pattern: "src/**" }),
        tool("Write", { file_path: PLAN, content: "# Plan\n" }),
        tool("ExitPlanMode", {}),
      ),
    ];
    const port = new CountingPort({
      files: shopFixture(),
      facts: { planner: "scripted", script },
    });
    const planner = recording(scriptedPlanner(script));
    expect(await step(port, {}, { planner })).toEqual({ next: "wait" });
    expect(port.loads).toBe(1);
    expect(port.listEvents().map((e) => e.type)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "user",
      "user",
      "result",
    ]);
  });
});
