import { describe, expect, it } from "vitest";
import { MIN_SUMMARY_TOKENS, SUMMARY_ATTEMPTS, summaryRoom } from "../../src/planner/compaction.ts";
import { summaryTokensFor } from "../../src/planner/context-budget.ts";
import { workersAiPlanner } from "../../src/planner/models/workers-ai.ts";
import { COMPACT_INSTRUCTION } from "../../src/planner/plan-mode/compaction-prompts.ts";
import type { PlannerEnv } from "../../src/planner/port.ts";
import { compactBoundaryOf, type Event, parentToolUseIdOf } from "../../src/protocol/index.ts";
import type { RecordedRequest, ScriptedResponse } from "../client/anthropic-double-types.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { call, type Provider, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import { anthropicLane, openaiLane } from "./planner/anthropic-lane.ts";
import { FAST_RETRY, runUntilStopped, shopFixture } from "./planner/helpers.ts";

/**
 * Context compaction against the Anthropic and OpenAI provider TEST DOUBLES over real HTTP,
 * with a small PLANPORT_CONTEXT_TOKENS. The replies' reported usage is what the engine's
 * estimate starts from (the newest call's usage plus what came after it), so a reply that
 * reports a large input drives the next request past 80 % of the budget.
 */

const PLAN = "/plans/bold-eagle.md";
const DRAFT = "# Plan\n\n1. Round `invoiceTotal` to cents in src/billing/invoice.ts.\n";
/** The summary request is the one that carries the compaction instruction. */
const SUMMARY_REQUEST = "is being compacted";
const LANES = { anthropic: anthropicLane, openai: openaiLane } as const;
const MODEL = { anthropic: "claude-test", openai: "gpt-test" } as const;
const PRICE = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

function envOf(provider: Provider, lane: { env: PlannerEnv }, contextTokens: number): PlannerEnv {
  return {
    ...lane.env,
    PLANPORT_CONTEXT_TOKENS: String(contextTokens),
    PLANPORT_PRICES: JSON.stringify({ [MODEL[provider]]: PRICE }),
  };
}

const boundaries = (events: readonly Event[]) =>
  events.flatMap((e) => {
    const b = compactBoundaryOf(e);
    return b === null ? [] : [b];
  });
const requestText = (r: RecordedRequest) => JSON.stringify(r.body);

/**
 * Two session turns whose second reports 10,000 tokens of input: with a budget of 12,000, the
 * next request is a summary request. `r` shapes each reply for the provider.
 */
function longOpening(r: (x: Parameters<typeof reply>[1]) => ScriptedResponse): ScriptedResponse[] {
  return [
    r({
      match: SESSION_REQUEST,
      usage: { input: 3_000, output: 50 },
      content: [call("toolu_r1", "Read", { file_path: "src/billing/invoice.ts" })],
    }),
    r({
      match: SESSION_REQUEST,
      usage: { input: 2_000, output: 50, cacheRead: 8_000 },
      content: [call("toolu_g1", "Grep", { pattern: "invoiceTotal" })],
    }),
  ];
}

describe.each(["anthropic", "openai"] as const)(
  "compaction on the %s planner (provider double over HTTP)",
  (provider) => {
    it("compacts a long session twice, keeps the plan file in the context, and reaches plan_ready", async () => {
      const r = (x: Parameters<typeof reply>[1]) => reply(provider, x);
      // Budget 12,000 tokens: compaction past 9,600.
      const lane = await LANES[provider]([
        r({
          match: SESSION_REQUEST,
          usage: { input: 3_000, output: 50 },
          content: [
            say("Reading."),
            call("toolu_r1", "Read", { file_path: "src/billing/invoice.ts" }),
          ],
        }),
        // Reports 10,000 tokens of input: the next request would pass 9,600.
        r({
          match: SESSION_REQUEST,
          usage: { input: 2_000, output: 50, cacheRead: 8_000 },
          content: [call("toolu_g1", "Grep", { pattern: "invoiceTotal" })],
        }),
        r({
          match: SUMMARY_REQUEST,
          usage: { input: 9_000, output: 120 },
          content: [
            say("SUMMARY-ONE: invoiceTotal in src/billing/invoice.ts adds tax without rounding."),
          ],
        }),
        r({
          match: SESSION_REQUEST,
          usage: { input: 1_500, output: 80 },
          content: [call("toolu_w", "Write", { file_path: PLAN, content: DRAFT })],
        }),
        r({
          match: SESSION_REQUEST,
          usage: { input: 9_900, output: 40 },
          content: [call("toolu_r2", "Read", { file_path: "test/billing/invoice.test.ts" })],
        }),
        r({
          match: SUMMARY_REQUEST,
          usage: { input: 9_800, output: 110 },
          content: [say("SUMMARY-TWO: the plan is written; the invoice test exists.")],
        }),
        r({
          match: SESSION_REQUEST,
          usage: { input: 1_700, output: 30 },
          content: [call("toolu_exit", "ExitPlanMode", {})],
        }),
      ]);
      const port = new MemoryPort({
        files: shopFixture(),
        facts: { planner: provider, prompt: "Round invoice totals to cents" },
      });

      expect(
        await runUntilStopped(port, { retry: FAST_RETRY }, 30, envOf(provider, lane, 12_000)),
      ).toEqual({ next: "wait" });
      expect(port.pendingWait()).toMatchObject({ kind: "plan", tool_use_id: "toolu_exit" });
      expect(port.ended).toBeNull();

      const events = port.listEvents();
      const found = boundaries(events);
      expect(found).toHaveLength(2);
      for (const b of found) {
        expect(b.compact_metadata.trigger).toBe("auto");
        expect(b.compact_metadata.pre_tokens).toBeGreaterThan(9_600);
        expect(b.compact_metadata.pre_tokens).toBeLessThan(12_000);
      }
      expect(found[0]).toMatchObject({
        summary: expect.stringContaining("SUMMARY-ONE"),
        plan_revision: 0,
      });
      expect(found[1]).toMatchObject({
        summary: expect.stringContaining("SUMMARY-TWO"),
        plan_revision: 1,
      });
      expect(parentToolUseIdOf(found[0] as Event)).toBeNull();

      const sent = await lane.requests();
      expect(sent.map((x) => x.matched)).toEqual([
        SESSION_REQUEST,
        SESSION_REQUEST,
        SUMMARY_REQUEST,
        SESSION_REQUEST,
        SESSION_REQUEST,
        SUMMARY_REQUEST,
        SESSION_REQUEST,
      ]);
      // The summary request is the conversation as it stood, with the instruction last (and tool
      // calls forbidden, the tools still listed: their cached prefix stays).
      const before = sent[1]!.body as { messages: unknown[] };
      const summary = sent[2]!.body as { messages: unknown[] };
      expect(requestText(sent[2]!)).toContain(JSON.stringify(COMPACT_INSTRUCTION).slice(1, 60));
      expect(stripMarks(summary.messages.slice(0, 2))).toEqual(
        stripMarks(before.messages.slice(0, 2)),
      );

      // After the first compaction: one opening message with the summary and the full plan-mode
      // reminder (no plan file yet); the earlier turns are gone from the request.
      const afterFirst = requestText(sent[3]!);
      expect(afterFirst).toContain("SUMMARY-ONE");
      // The request itself is repeated as written, never left to the summary.
      expect(afterFirst).toContain("## The request\\nRound invoice totals to cents");
      expect(afterFirst).toContain("Plan mode is active");
      expect(afterFirst).toContain(`No plan file exists yet. Create your plan at ${PLAN}`);
      expect(afterFirst).not.toContain("toolu_r1");
      // After the second: the plan file, exactly, and the reminder saying it exists.
      const afterSecond = requestText(sent[6]!);
      expect(afterSecond).toContain("SUMMARY-TWO");
      expect(afterSecond).toContain(`A plan file already exists at ${PLAN}`);
      expect(afterSecond).toContain(JSON.stringify(DRAFT).slice(1, -1));
      expect(afterSecond).not.toContain("SUMMARY-ONE");
      // The stable prefix never changes: same system prompt and tools on every request.
      const prefix = (x: RecordedRequest) => {
        const b = x.body as { system?: unknown; tools: unknown; messages: { role: string }[] };
        return JSON.stringify([b.system ?? b.messages[0], b.tools]);
      };
      for (const x of sent) expect(prefix(x)).toBe(prefix(sent[0]!));

      // The compaction calls count in usage and cost.
      const input = 3_000 + 2_000 + 9_000 + 1_500 + 9_900 + 9_800 + 1_700;
      const output = 50 + 50 + 120 + 80 + 40 + 110 + 30;
      expect(port.usage).toEqual({ input_tokens: input, output_tokens: output });
      expect(port.cost).toBeCloseTo((input * 3 + output * 15 + 8_000 * 0.3) / 1e6, 10);
    });

    it("a model that calls a tool whenever it may still writes the summary: the summary request forbids tool calls, keeps the tools, and the session reaches plan_ready", async () => {
      // Every reply comes from an eager model: a request that offers tools it may call gets a
      // tool call, whatever text was scripted (the summary included).
      const r = (x: Parameters<typeof reply>[1]) => ({
        ...reply(provider, x),
        eager_tool_use: true,
      });
      const lane = await LANES[provider]([
        ...longOpening(r),
        r({
          match: SUMMARY_REQUEST,
          usage: { input: 9_000, output: 120 },
          content: [say("SUMMARY-EAGER: invoiceTotal adds tax without rounding.")],
        }),
        r({
          match: SESSION_REQUEST,
          usage: { input: 1_500, output: 80 },
          content: [
            call("toolu_w", "Write", { file_path: PLAN, content: DRAFT }),
            call("toolu_exit", "ExitPlanMode", {}),
          ],
        }),
      ]);
      const port = new MemoryPort({ files: shopFixture(), facts: { planner: provider } });

      const result = await runUntilStopped(
        port,
        { retry: FAST_RETRY },
        20,
        envOf(provider, lane, 12_000),
      );
      expect(port.ended?.message).toBeUndefined();
      expect(result).toEqual({ next: "wait" });
      expect(port.pendingWait()).toMatchObject({ kind: "plan", tool_use_id: "toolu_exit" });
      expect(boundaries(port.listEvents())).toMatchObject([
        { summary: expect.stringContaining("SUMMARY-EAGER") },
      ]);

      const sent = await lane.requests();
      expect(sent.map((x) => x.matched)).toEqual([
        SESSION_REQUEST,
        SESSION_REQUEST,
        SUMMARY_REQUEST,
        SESSION_REQUEST,
      ]);
      expect(sent.some((x) => x.eager_tool_call)).toBe(false);
      const bodies = sent.map((x) => x.body as { tools: unknown; tool_choice?: unknown });
      // Only the summary request forbids tools; it lists the very same tools (cached prefix).
      expect(bodies.map((b) => b.tool_choice)).toEqual([
        undefined,
        undefined,
        provider === "anthropic" ? { type: "none" } : "none",
        undefined,
      ]);
      for (const b of bodies) expect(b.tools).toEqual(bodies[0]!.tools);
    });

    it("asks a text-less summary once more, and ends saying so when the second is text-less too", async () => {
      const r = (x: Parameters<typeof reply>[1]) => reply(provider, x);
      const opening = () => longOpening(r);
      const empty = r({ match: SUMMARY_REQUEST, usage: { input: 9_000, output: 3 }, content: [] });

      const retried = await LANES[provider]([
        ...opening(),
        empty,
        r({
          match: SUMMARY_REQUEST,
          usage: { input: 9_000, output: 100 },
          content: [say("SUMMARY-SECOND-TRY: the invoice code is read.")],
        }),
        r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
      ]);
      const port = new MemoryPort({ files: shopFixture(), facts: { planner: provider } });
      expect(
        await runUntilStopped(port, { retry: FAST_RETRY }, 20, envOf(provider, retried, 12_000)),
      ).toEqual({ next: "wait" });
      expect(boundaries(port.listEvents())).toMatchObject([
        { summary: expect.stringContaining("SUMMARY-SECOND-TRY") },
      ]);
      expect((await retried.requests()).map((x) => x.matched)).toEqual([
        SESSION_REQUEST,
        SESSION_REQUEST,
        SUMMARY_REQUEST,
        SUMMARY_REQUEST,
        SESSION_REQUEST,
      ]);
      // Both summary calls were billed, so both count.
      expect(port.usage.output_tokens).toBe(50 + 50 + 3 + 100 + 20);

      const mute = await LANES[provider]([...opening(), empty, empty]);
      const ended = new MemoryPort({ files: shopFixture(), facts: { planner: provider } });
      expect(
        await runUntilStopped(ended, { retry: FAST_RETRY }, 20, envOf(provider, mute, 12_000)),
      ).toEqual({ next: "idle" });
      expect(ended.ended).toMatchObject({
        subtype: "error_during_execution",
        message: expect.stringContaining(
          `the model answered the summary request without any text ${SUMMARY_ATTEMPTS} times`,
        ),
      });
      expect((await mute.requests()).map((x) => x.matched)).toEqual([
        SESSION_REQUEST,
        SESSION_REQUEST,
        SUMMARY_REQUEST,
        SUMMARY_REQUEST,
      ]);
      expect(boundaries(ended.listEvents())).toEqual([]);
    });

    it("ends with a clear error_during_execution when the session cannot fit even after compaction", async () => {
      const r = (x: Parameters<typeof reply>[1]) => reply(provider, x);
      const bigPlan = `# Plan\n\n${"- a step of a very long plan\n".repeat(230)}`;
      // Budget 6,000 tokens: a 6,700-character plan alone no longer fits beside the instructions.
      const lane = await LANES[provider]([
        r({
          match: SESSION_REQUEST,
          usage: { input: 4_700, output: 100 },
          content: [call("toolu_w", "Write", { file_path: PLAN, content: bigPlan })],
        }),
        r({
          match: SUMMARY_REQUEST,
          usage: { input: 4_800, output: 60 },
          content: [say("SUMMARY: the plan is written.")],
        }),
        r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
      ]);
      const port = new MemoryPort({ files: shopFixture(), facts: { planner: provider } });

      expect(
        await runUntilStopped(port, { retry: FAST_RETRY }, 10, envOf(provider, lane, 6_000)),
      ).toEqual({ next: "idle" });
      expect(port.ended?.subtype).toBe("error_during_execution");
      expect(port.ended?.message).toMatch(
        /^The conversation does not fit the context budget of 6000 tokens even after compaction: the next request would need about \d+ tokens .*more than the 4800 a request may take\. The session stopped; start a new session to try again\.$/,
      );
      // No request past the budget went out: the one after the compaction was never sent.
      expect((await lane.requests()).map((x) => x.matched)).toEqual([
        SESSION_REQUEST,
        SUMMARY_REQUEST,
      ]);
      expect(boundaries(port.listEvents())).toHaveLength(1);
    });
  },
);

describe("compaction on the workers-ai planner (an AI binding double)", () => {
  it("offers no tools in the summary request, so a model that calls a tool whenever it may answers in text", async () => {
    const sent: Record<string, unknown>[] = [];
    const usage = (prompt: number, completion: number) => ({
      prompt_tokens: prompt,
      completion_tokens: completion,
    });
    const replies: Record<string, unknown>[] = [
      {
        tool_calls: [{ name: "Read", arguments: { file_path: "src/billing/invoice.ts" } }],
        usage: usage(3_000, 50),
      },
      // Reports 10,000 tokens of input: the next request would pass 9,600.
      {
        tool_calls: [{ name: "Grep", arguments: { pattern: "invoiceTotal" } }],
        usage: usage(10_000, 50),
      },
      { response: "SUMMARY-WAI: invoiceTotal adds tax without rounding.", usage: usage(9_000, 90) },
      {
        tool_calls: [
          { name: "Write", arguments: { file_path: PLAN, content: DRAFT } },
          { name: "ExitPlanMode", arguments: {} },
        ],
        usage: usage(1_500, 60),
      },
    ];
    // An eager model: offered tools, it calls the first one instead of writing text.
    const ai = {
      async run(_model: string, inputs: Record<string, unknown>) {
        sent.push(inputs);
        const next = replies.shift();
        const tools = inputs.tools as { function: { name: string } }[] | undefined;
        if (next && !next.tool_calls && tools && tools.length > 0) {
          return {
            tool_calls: [{ name: tools[0]!.function.name, arguments: {} }],
            usage: next.usage,
          };
        }
        return next;
      },
    };
    const port = new MemoryPort({ files: shopFixture(), facts: { planner: "workers-ai" } });
    const result = await runUntilStopped(
      port,
      { retry: FAST_RETRY, planner: workersAiPlanner({ AI: ai as unknown as Ai }) },
      20,
      { PLANPORT_CONTEXT_TOKENS: "12000" },
    );
    expect(port.ended?.message).toBeUndefined();
    expect(result).toEqual({ next: "wait" });
    expect(boundaries(port.listEvents())).toMatchObject([
      { summary: expect.stringContaining("SUMMARY-WAI") },
    ]);
    expect(sent.map((inputs) => "tools" in inputs)).toEqual([true, true, false, true]);
    expect(JSON.stringify(sent[2])).toContain(SUMMARY_REQUEST);
  });
});

describe("the summary request", () => {
  it("fits the budget: the summary's room shrinks first, then the tool results are cut", () => {
    expect(summaryRoom(9_000, 12_000)).toEqual({
      summaryTokens: summaryTokensFor(12_000),
      cutChars: 0,
    });
    const tight = summaryRoom(10_300, 12_000);
    expect(tight.cutChars).toBe(0);
    expect(tight.summaryTokens).toBeLessThan(summaryTokensFor(12_000));
    expect(tight.summaryTokens).toBeGreaterThanOrEqual(MIN_SUMMARY_TOKENS);
    const over = summaryRoom(20_000, 12_000);
    expect(over.summaryTokens).toBe(MIN_SUMMARY_TOKENS);
    expect(over.cutChars).toBeGreaterThan((20_000 - 12_000) * 3.5);
  });

  it("cuts a tool result too large for the budget instead of sending it whole", async () => {
    const r = (x: Parameters<typeof reply>[1]) => reply("anthropic", x);
    const big = Array.from(
      { length: 1_500 },
      (_, i) => `export const line${i} = ${i}; // padding`,
    ).join("\n");
    const lane = await anthropicLane([
      r({
        match: SESSION_REQUEST,
        usage: { input: 3_800, output: 40 },
        content: [call("toolu_big", "Read", { file_path: "src/big.ts" })],
      }),
      r({
        match: SUMMARY_REQUEST,
        usage: { input: 9_000, output: 90 },
        content: [say("SUMMARY: src/big.ts is a long list of constants.")],
      }),
      r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
    ]);
    const port = new MemoryPort({
      files: { ...shopFixture(), "src/big.ts": big },
      facts: { planner: "anthropic" },
    });
    expect(
      await runUntilStopped(port, { retry: FAST_RETRY }, 10, {
        ...lane.env,
        PLANPORT_CONTEXT_TOKENS: "12000",
      }),
    ).toEqual({ next: "wait" });
    const sent = await lane.requests();
    const summary = requestText(sent.find((x) => x.matched === SUMMARY_REQUEST)!);
    expect(big.length).toBeGreaterThan(12_000 * 4);
    expect(summary).toMatch(/characters left out of the summary request/);
    expect(summary.length).toBeLessThan(12_000 * 4);
    expect(boundaries(port.listEvents())).toHaveLength(1);
  });
});

describe("a subagent's conversation", () => {
  it("compacts within its share of the budget and reports to its Task", async () => {
    // Budget 20,000: a subagent gets half (10,000, compacting past 8,000).
    const r = (x: Parameters<typeof reply>[1]) => reply("anthropic", x);
    const lane = await anthropicLane([
      r({
        match: SESSION_REQUEST,
        content: [
          call("toolu_task", "Task", {
            description: "Explore billing",
            prompt: "EXPLORE-BILLING: how is the invoice total computed?",
          }),
        ],
      }),
      r({
        match: "EXPLORE-BILLING",
        usage: { input: 8_500, output: 30 },
        content: [call("toolu_sub_read", "Read", { file_path: "src/billing/invoice.ts" })],
      }),
      r({
        match: SUMMARY_REQUEST,
        usage: { input: 8_600, output: 40 },
        content: [say("SUB-SUMMARY: invoice.ts read; invoiceTotal adds tax.")],
      }),
      r({
        match: "EXPLORE-BILLING",
        usage: { input: 900, output: 25 },
        content: [say("BILLING REPORT: invoiceTotal adds tax, no rounding.")],
      }),
      r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
    ]);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", variant: "deep" },
    });
    expect(
      await runUntilStopped(port, { retry: FAST_RETRY }, 20, {
        ...lane.env,
        PLANPORT_CONTEXT_TOKENS: "20000",
      }),
    ).toEqual({ next: "wait" });

    const events = port.listEvents();
    const [boundary] = boundaries(events);
    expect(boundary).toMatchObject({
      parent_tool_use_id: "toolu_task",
      summary: expect.stringContaining("SUB-SUMMARY"),
    });
    expect(boundary!.compact_metadata.pre_tokens).toBeGreaterThan(8_000);
    const sent = await lane.requests();
    // The subagent continued from its task, its reminder and its summary, with its tools only.
    const continued = sent.filter((x) => x.matched === "EXPLORE-BILLING")[1]!;
    const body = continued.body as {
      tools: { name: string }[];
      messages: { content: { text?: string }[] }[];
    };
    expect(body.tools.map((t) => t.name)).toEqual(["Read", "Glob", "Grep", "LS"]);
    expect(body.messages).toHaveLength(1);
    const opening = body.messages[0]!.content.map((b) => b.text ?? "").join("\n");
    expect(opening).toContain("EXPLORE-BILLING: how is the invoice total computed?");
    expect(opening).toContain("You are a read-only subagent");
    expect(opening).toContain("SUB-SUMMARY");
    // Its report is the Task's result; the session's own conversation never compacted.
    expect(JSON.stringify(sent.at(-1)!.body)).toContain(
      "BILLING REPORT: invoiceTotal adds tax, no rounding.",
    );
    expect(boundaries(events).filter((b) => parentToolUseIdOf(b as Event) === null)).toEqual([]);
  });
});

/** Messages without the cache marks (which only move with the newest message). */
function stripMarks(messages: unknown[]): unknown {
  return JSON.parse(JSON.stringify(messages), (key, value) =>
    key === "cache_control" ? undefined : value,
  );
}
