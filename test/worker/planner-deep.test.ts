import { describe, expect, it } from "vitest";
import { SUBAGENT_SYSTEM_PROMPT } from "../../src/planner/plan-mode/subagent-prompts.ts";
import type { PlannerEnv } from "../../src/planner/port.ts";
import {
  DEEP_TOOL_NAMES,
  type Event,
  parentToolUseIdOf,
  READ_ONLY_TOOLS,
  toolResultText,
} from "../../src/protocol/index.ts";
import type { RecordedRequest } from "../client/anthropic-double-types.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { call, type Provider, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import { anthropicLane, openaiLane } from "./planner/anthropic-lane.ts";
import { FAST_RETRY, runUntilStopped, shopFixture } from "./planner/helpers.ts";

/**
 * The `deep` variant against the Anthropic and the OpenAI provider TEST DOUBLES over real HTTP:
 * the engine runs the session's conversation and its Task subagents' through the real
 * planners, the doubles answer each request with the reply scripted for it (routed by a marker
 * in the subagent's task) and record when each request arrived and was answered.
 */

const PLAN = "/plans/bold-eagle.md";
const DRAFT = "# Plan\n\n1. Round `invoiceTotal` to cents.\n";
const REVISED = `${DRAFT}2. Test rounding half-cents (critique).\n`;
/** Each explorer's first call is held this long: long enough that sequential calls could not overlap. */
const EXPLORER_LATENCY_MS = 400;
const PRICE = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

const EXPLORERS = [
  { id: "toolu_arch", marker: "EXPLORE-ARCH", description: "Existing code and architecture" },
  { id: "toolu_files", marker: "EXPLORE-FILES", description: "Files to change" },
  { id: "toolu_risks", marker: "EXPLORE-RISKS", description: "Risks, edge cases and tests" },
] as const;

/** The whole deep workflow, scripted: explore ×3 in parallel, plan, critique, revise, exit. */
function deepScript(provider: Provider) {
  const r = (x: Parameters<typeof reply>[1]) => reply(provider, x);
  return [
    // The session launches the three explorers in one message.
    r({
      match: SESSION_REQUEST,
      content: [
        say("Launching three explorers."),
        ...EXPLORERS.map((e) =>
          call(e.id, "Task", {
            description: e.description,
            prompt: `${e.marker}: for "round invoice totals to cents", report on ${e.description.toLowerCase()} in the repository.`,
          }),
        ),
      ],
    }),
    // Explorer 1: reads, tries to write the plan file (refused), then reports.
    r({
      match: EXPLORERS[0].marker,
      delay_ms: EXPLORER_LATENCY_MS,
      usage: { input: 300, output: 40 },
      content: [
        call("toolu_arch_read", "Read", { file_path: "src/billing/invoice.ts" }),
        call("toolu_arch_write", "Write", { file_path: PLAN, content: "# hijacked" }),
      ],
    }),
    r({
      match: EXPLORERS[0].marker,
      usage: { input: 500, output: 60 },
      content: [say("ARCH REPORT: invoiceTotal lives in src/billing/invoice.ts.")],
    }),
    // Explorer 2: greps, then reports.
    r({
      match: EXPLORERS[1].marker,
      delay_ms: EXPLORER_LATENCY_MS,
      usage: { input: 300, output: 40 },
      content: [call("toolu_files_grep", "Grep", { pattern: "invoiceTotal" })],
    }),
    r({
      match: EXPLORERS[1].marker,
      usage: { input: 450, output: 50 },
      content: [say("FILES REPORT: change src/billing/invoice.ts.")],
    }),
    // Explorer 3: reports at once.
    r({
      match: EXPLORERS[2].marker,
      delay_ms: EXPLORER_LATENCY_MS,
      usage: { input: 300, output: 70 },
      content: [say("RISKS REPORT: half-cent rounding; test/billing/invoice.test.ts covers it.")],
    }),
    // Synthesis: the plan file.
    r({
      match: SESSION_REQUEST,
      content: [call("toolu_write", "Write", { file_path: PLAN, content: DRAFT })],
    }),
    // The critique subagent, on the written plan.
    r({
      match: SESSION_REQUEST,
      content: [
        call("toolu_critique", "Task", {
          description: "Critique the plan",
          prompt: `CRITIQUE-PLAN: read the plan file ${PLAN} and report missing steps, risks with mitigations and unverified assumptions.`,
        }),
      ],
    }),
    r({
      match: "CRITIQUE-PLAN",
      usage: { input: 200, output: 20 },
      content: [call("toolu_critique_read", "Read", { file_path: PLAN })],
    }),
    r({
      match: "CRITIQUE-PLAN",
      usage: { input: 260, output: 30 },
      content: [say("CRITIQUE: no test for half-cents.")],
    }),
    // Revise, then present.
    r({
      match: SESSION_REQUEST,
      content: [
        call("toolu_edit", "Edit", { file_path: PLAN, old_string: DRAFT, new_string: REVISED }),
        call("toolu_exit", "ExitPlanMode", {}),
      ],
    }),
  ];
}

const LANES = { anthropic: anthropicLane, openai: openaiLane } as const;

type Body = {
  system?: { text: string }[] | string;
  tools: ({ name?: string; function?: { name: string } } & Record<string, unknown>)[];
  messages: { role: string; content: unknown }[];
};
const toolNames = (r: RecordedRequest) =>
  (r.body as Body).tools.map((t) => t.name ?? t.function?.name);
const systemText = (r: RecordedRequest) => {
  const body = r.body as Body;
  if (Array.isArray(body.system)) return body.system.map((b) => b.text).join("");
  const first = body.messages[0] as { role: string; content: string };
  return first.role === "system" ? first.content : "";
};

describe.each(["anthropic", "openai"] as const)(
  "a deep session on the %s planner (provider double over HTTP)",
  (provider) => {
    it("runs three explorers concurrently with read-only tools, writes the plan, critiques it, revises and presents it", async () => {
      const lane = await LANES[provider](deepScript(provider));
      const env: PlannerEnv = {
        ...lane.env,
        PLANPORT_PRICES: JSON.stringify({
          [provider === "anthropic" ? "claude-test" : "gpt-test"]: PRICE,
        }),
      };
      const port = new MemoryPort({
        files: shopFixture(),
        facts: { planner: provider, prompt: "Round invoice totals to cents", variant: "deep" },
      });

      expect(await runUntilStopped(port, { retry: FAST_RETRY }, 40, env)).toEqual({ next: "wait" });
      expect(port.pendingWait()).toMatchObject({ kind: "plan", tool_use_id: "toolu_exit" });
      expect(port.readPlan()).toMatchObject({ content: REVISED, revision: 2 });

      const sent = await lane.requests();
      expect(sent.every((r) => r.answered_at !== null)).toBe(true);
      const ofTask = (marker: string) => sent.filter((r) => r.matched === marker);

      // The three explorers' first calls overlap in time: each arrived before any was answered.
      const firsts = EXPLORERS.map((e) => ofTask(e.marker)[0]!);
      const lastArrival = Math.max(...firsts.map((r) => r.received_at));
      const firstAnswer = Math.min(...firsts.map((r) => r.answered_at!));
      expect(lastArrival).toBeLessThan(firstAnswer);

      // Subagents are offered the read-only tools only, with their own system prompt; the
      // session's own requests offer Task.
      for (const r of sent.filter((x) => x.matched !== SESSION_REQUEST)) {
        expect(toolNames(r)).toEqual([...READ_ONLY_TOOLS]);
        expect(systemText(r)).toBe(SUBAGENT_SYSTEM_PROMPT);
      }
      for (const r of sent.filter((x) => x.matched === SESSION_REQUEST))
        expect(toolNames(r)).toEqual([...DEEP_TOOL_NAMES]);

      // Every subagent event carries its Task's id; the Task results are top level and are the
      // subagents' final texts.
      const events = port.listEvents();
      const byTask = (id: string) => events.filter((e) => parentToolUseIdOf(e) === id);
      for (const e of EXPLORERS) {
        const own = byTask(e.id);
        expect(own[0]).toMatchObject({
          type: "user",
          message: { content: expect.stringContaining(e.marker) },
        });
        expect(own.filter((x) => x.type === "assistant").length).toBeGreaterThan(0);
      }
      const taskResult = (id: string) => resultOf(events, id);
      expect(taskResult("toolu_arch")).toMatchObject({
        text: "ARCH REPORT: invoiceTotal lives in src/billing/invoice.ts.",
        isError: false,
      });
      expect(parentToolUseIdOf(taskResult("toolu_arch").event)).toBeNull();
      expect(taskResult("toolu_files").text).toBe("FILES REPORT: change src/billing/invoice.ts.");
      expect(taskResult("toolu_risks").text).toContain("RISKS REPORT");
      // The subagent's own tool results carry its Task's id too; its write was refused.
      expect(resultOf(events, "toolu_arch_read")).toMatchObject({
        event: { parent_tool_use_id: "toolu_arch" },
        isError: false,
      });
      expect(resultOf(events, "toolu_arch_write")).toMatchObject({
        event: { parent_tool_use_id: "toolu_arch", permission_denied: true },
        text: expect.stringContaining("A subagent is read-only"),
      });

      // The critique ran after the plan was written: it read the draft from the plan file.
      const written = events.findIndex((e) => findResult([e], "toolu_write") !== null);
      const critiqueCall = events.findIndex(
        (e) =>
          e.type === "assistant" &&
          e.message.content.some((b) => b.type === "tool_use" && b.id === "toolu_critique"),
      );
      expect(written).toBeGreaterThan(-1);
      expect(critiqueCall).toBeGreaterThan(written);
      expect(resultOf(events, "toolu_critique_read").text).toContain(
        "Round `invoiceTotal` to cents",
      );
      expect(taskResult("toolu_critique").text).toBe("CRITIQUE: no test for half-cents.");
      // The session's next request carries the critique as the Task's result.
      const revise = sent.filter((r) => r.matched === SESSION_REQUEST).at(-1)!;
      expect(JSON.stringify(revise.body)).toContain("CRITIQUE: no test for half-cents.");

      // Subagent tokens count in the session's usage and cost: 4 session calls of 100/20, the
      // subagents' calls as scripted.
      const subagentInput = 300 + 500 + 300 + 450 + 300 + 200 + 260;
      const subagentOutput = 40 + 60 + 40 + 50 + 70 + 20 + 30;
      expect(port.usage).toEqual({
        input_tokens: 4 * 100 + subagentInput,
        output_tokens: 4 * 20 + subagentOutput,
      });
      const expectedCost =
        ((4 * 100 + subagentInput) * PRICE.input + (4 * 20 + subagentOutput) * PRICE.output) / 1e6;
      expect(port.cost).toBeCloseTo(expectedCost, 10);
    });
  },
);

/** The tool result answering `toolUseId`, with its event. */
function resultOf(events: readonly Event[], toolUseId: string) {
  const found = findResult(events, toolUseId);
  if (found === null) throw new Error(`no result for ${toolUseId}`);
  return found;
}

function findResult(events: readonly Event[], toolUseId: string) {
  for (const event of events) {
    if (event.type !== "user" || typeof event.message.content === "string") continue;
    const block = event.message.content.find(
      (b) => b.type === "tool_result" && b.tool_use_id === toolUseId,
    );
    if (block?.type === "tool_result")
      return { event, text: toolResultText(block.content), isError: block.is_error === true };
  }
  return null;
}
