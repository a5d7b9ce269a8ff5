import { describe, expect, it } from "vitest";
import { SUBAGENT_MAX_TURNS } from "../../src/planner/model-request.ts";
import { fullReminder } from "../../src/planner/plan-mode/prompts.ts";
import { LAST_TURN_NOTE } from "../../src/planner/plan-mode/subagent-prompts.ts";
import {
  DEFAULT_WORKFLOW,
  DIAGRAM_GUIDANCE,
  deepWorkflow,
  VISUAL_WORKFLOW,
} from "../../src/planner/plan-mode/workflows.ts";
import { type Event, parentToolUseIdOf, toolResultText } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { call, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import { anthropicLane } from "./planner/anthropic-lane.ts";
import {
  FAST_RETRY,
  runUntilStopped,
  scriptedSession,
  shopFixture,
  text,
  tool,
  turn,
} from "./planner/helpers.ts";

/** The workflow variants: what each tells the model, and the Task tool's edges. */

const PLAN = "/plans/bold-eagle.md";
const facts = { planPath: PLAN, planExists: false, instructions: null, hasSnapshot: true };

describe("the workflow of each variant", () => {
  it("simple plans as before; visual asks for a mermaid diagram only where the change has structure", () => {
    expect(fullReminder({ ...facts, variant: "simple" })).toContain(DEFAULT_WORKFLOW);
    expect(fullReminder(facts)).toContain(DEFAULT_WORKFLOW);
    const visual = fullReminder({ ...facts, variant: "visual" });
    expect(visual).toContain(VISUAL_WORKFLOW);
    expect(visual).toContain("```mermaid");
    expect(DIAGRAM_GUIDANCE).toMatch(/dependency order or data flow/);
    expect(DIAGRAM_GUIDANCE).toMatch(/When the change is linear .* add no diagram/);
    expect(DEFAULT_WORKFLOW).not.toContain("mermaid");
  });

  it("deep explores in parallel, synthesises, writes the plan, critiques it, revises, then exits", () => {
    const deep = fullReminder({ ...facts, variant: "deep" });
    expect(deep).toContain(deepWorkflow(PLAN));
    const steps = [
      "Explore in parallel. In ONE message, launch three Task calls",
      '"Existing code and architecture"',
      '"Files to change"',
      '"Risks, edge cases and tests"',
      "Synthesise.",
      "Write the plan to the plan file.",
      `Critique. Launch ONE Task whose prompt asks it to read the plan file ${PLAN}`,
      "missing steps, risks with their mitigations, and assumptions the plan makes without having verified them",
      "Revise the plan file",
      "call ExitPlanMode",
    ];
    let at = -1;
    for (const step of steps) {
      const found = deep.indexOf(step, at + 1);
      expect(found, step).toBeGreaterThan(at);
      at = found;
    }
    // Custom instructions replace the workflow of any variant, never the boundaries.
    const custom = fullReminder({ ...facts, variant: "deep", instructions: "Plan in haiku." });
    expect(custom).not.toContain("Explore in parallel");
    expect(custom).toContain("Plan mode is active.");
  });

  it("tells a planner the variant in its request, and the model through the reminder", async () => {
    const { port, planner, opts } = scriptedSession([turn(text("Done."))], { variant: "visual" });
    await runUntilStopped(port, opts);
    expect(planner.requests[0]!.context.variant).toBe("visual");
    expect(JSON.stringify(planner.requests[0]!.messages)).toContain("```mermaid");
  });
});

describe("the Task tool", () => {
  it("is an unknown tool outside deep sessions: refused, nothing started", async () => {
    const { port, opts } = scriptedSession([
      turn(tool("Task", { description: "Explore", prompt: "Look." }, "toolu_t")),
    ]);
    await runUntilStopped(port, opts);
    const events = port.listEvents();
    expect(events.some((e) => parentToolUseIdOf(e) !== null)).toBe(false);
    expect(resultText(events, "toolu_t")).toMatch(
      /^Permission denied: There is no tool named "Task"/,
    );
  });

  it("answers a malformed Task at once; its well-formed siblings run; calls after them wait", async () => {
    const lane = await anthropicLane([
      reply("anthropic", {
        match: SESSION_REQUEST,
        content: [
          call("toolu_bad", "Task", { description: "No prompt" }),
          call("toolu_good", "Task", { description: "Explore", prompt: "EXPLORE-GOOD: look." }),
          call("toolu_exit", "ExitPlanMode", {}),
        ],
      }),
      reply("anthropic", { match: "EXPLORE-GOOD", content: [say("GOOD REPORT.")] }),
    ]);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", variant: "deep" },
    });
    expect(await runUntilStopped(port, { retry: FAST_RETRY }, 10, lane.env)).toEqual({
      next: "wait",
    });
    const events = port.listEvents();
    expect(resultText(events, "toolu_bad")).toMatch(
      /^InputValidationError: Task was called with invalid input/,
    );
    expect(resultText(events, "toolu_good")).toBe("GOOD REPORT.");
    // ExitPlanMode opened its review only after the Task was answered.
    const answered = events.findIndex((e) => resultOf(e, "toolu_good") !== null);
    expect(port.pendingWait()).toMatchObject({ tool_use_id: "toolu_exit" });
    expect(answered).toBeGreaterThan(0);
    expect(events.slice(answered + 1).some((e) => e.type === "assistant")).toBe(false);
  });

  it(`ends a subagent at its limit of ${SUBAGENT_MAX_TURNS} turns, its last turn told to report, with what it said`, async () => {
    const busy = Array.from({ length: SUBAGENT_MAX_TURNS }, (_, i) =>
      reply("anthropic", {
        match: "EXPLORE-FOREVER",
        content: [say(`Looking ${i}.`), call(`toolu_ls_${i}`, "LS", { path: "src" })],
      }),
    );
    const lane = await anthropicLane([
      reply("anthropic", {
        match: SESSION_REQUEST,
        content: [
          call("toolu_forever", "Task", {
            description: "Explore",
            prompt: "EXPLORE-FOREVER: look.",
          }),
        ],
      }),
      ...busy,
      reply("anthropic", { match: SESSION_REQUEST, content: [say("Noted.")] }),
    ]);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", variant: "deep" },
    });
    expect(await runUntilStopped(port, { retry: FAST_RETRY }, 40, lane.env)).toEqual({
      next: "idle",
    });
    const sent = (await lane.requests()).filter((r) => r.matched === "EXPLORE-FOREVER");
    expect(sent).toHaveLength(SUBAGENT_MAX_TURNS);
    expect(JSON.stringify(sent.at(-1)!.body)).toContain(
      JSON.stringify(LAST_TURN_NOTE).slice(1, -1),
    );
    expect(JSON.stringify(sent.at(-2)!.body)).not.toContain("This is your last turn");
    const events = port.listEvents();
    const result = resultOf(
      events.find((e) => resultOf(e, "toolu_forever") !== null)!,
      "toolu_forever",
    )!;
    expect(result.is_error).toBe(true);
    expect(toolResultText(result.content)).toMatch(
      new RegExp(
        `^The subagent used its ${SUBAGENT_MAX_TURNS} model turns without finishing its report\\. What it said along the way:\\n\\nLooking 0\\.`,
      ),
    );
  });
});

function resultOf(event: Event, toolUseId: string) {
  if (event.type !== "user" || typeof event.message.content === "string") return null;
  const block = event.message.content.find(
    (b) => b.type === "tool_result" && b.tool_use_id === toolUseId,
  );
  return block?.type === "tool_result" ? block : null;
}

function resultText(events: readonly Event[], toolUseId: string): string {
  for (const e of events) {
    const r = resultOf(e, toolUseId);
    if (r !== null) return toolResultText(r.content);
  }
  throw new Error(`no result for ${toolUseId}`);
}
