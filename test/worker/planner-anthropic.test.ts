import { describe, expect, it } from "vitest";
import { step } from "../../src/planner/loop.ts";
import { ANTHROPIC_VERSION } from "../../src/planner/models/anthropic.ts";
import { toolResultText } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { anthropicLane } from "./planner/anthropic-lane.ts";
import { FAST_RETRY, shopFixture, toolResultsOf } from "./planner/helpers.ts";

/**
 * The anthropic planner against an Anthropic Messages API TEST DOUBLE served over real HTTP
 * (see ./planner/anthropic-lane.ts).
 */

const PLAN = "/plans/bold-eagle.md";
const lane = anthropicLane;

const ok = (
  content: unknown[],
  usage = { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 100 },
) => ({
  status: 200,
  body: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content,
    stop_reason: "tool_use",
    usage,
  },
});

type Body = {
  model: string;
  max_tokens: number;
  system: { type: string; text: string; cache_control?: unknown }[];
  tools: {
    name: string;
    description: string;
    input_schema: { type: string; properties: Record<string, unknown> };
  }[];
  messages: {
    role: string;
    content: {
      type: string;
      id?: string;
      tool_use_id?: string;
      text?: string;
      cache_control?: unknown;
    }[];
  }[];
};

describe("the anthropic planner over HTTP (Messages API test double)", () => {
  it("sends tools with JSON schemas, the plan-mode reminder and cache marks, pairs every tool_result with its tool_use, and retries 429 and 529", async () => {
    const { env, requests } = await lane([
      {
        status: 429,
        headers: { "retry-after": "1" },
        body: { type: "error", error: { type: "rate_limit_error", message: "Slow down" } },
      },
      {
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      },
      ok([
        { type: "text", text: "Let me look at the invoice code." },
        {
          type: "tool_use",
          id: "toolu_01A",
          name: "Read",
          input: { file_path: "src/billing/invoice.ts", limit: 40 },
        },
        {
          type: "tool_use",
          id: "toolu_01B",
          name: "Grep",
          input: { pattern: "taxFor", output_mode: "files_with_matches" },
        },
      ]),
      ok([
        {
          type: "tool_use",
          id: "toolu_02A",
          name: "Write",
          input: { file_path: PLAN, content: "# Plan\n\nRound in invoiceTotal.\n" },
        },
        { type: "tool_use", id: "toolu_02B", name: "ExitPlanMode", input: {} },
      ]),
    ]);
    const port = new MemoryPort({
      files: shopFixture(),
      facts: { planner: "anthropic", prompt: "Round invoice totals to cents" },
    });
    const waited: number[] = [];
    const retry = {
      ...FAST_RETRY,
      maxRetryAfterMs: 60_000,
      sleep: async (ms: number) => void waited.push(ms),
    };

    expect(await step(port, env, { retry })).toEqual({ next: "continue" });
    expect(waited).toEqual([1_000]); // the 429's retry-after, honoured before the retry
    expect(await step(port, env, { retry })).toEqual({ next: "wait" });
    expect(port.pendingWait()).toMatchObject({ kind: "plan", tool_use_id: "toolu_02B" });
    expect(port.readPlan()?.content).toBe("# Plan\n\nRound in invoiceTotal.\n");
    expect(port.usage).toEqual({ input_tokens: 240, output_tokens: 60 });

    const sent = await requests();
    expect(sent).toHaveLength(4); // 429, 529, then two successful calls
    expect(sent[0]!.body).toEqual(sent[2]!.body); // a retry resends the same request

    for (const r of sent) {
      expect(r.headers["x-api-key"]).toBe("sk-test-double");
      expect(r.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
      expect(r.headers["content-type"]).toBe("application/json");
    }
    const first = sent[0]!.body as Body;
    expect(first.model).toBe("claude-test");
    expect(first.max_tokens).toBeGreaterThan(1000);
    expect(first.tools.map((t) => t.name)).toEqual([
      "Read",
      "Glob",
      "Grep",
      "LS",
      "Write",
      "Edit",
      "AskUserQuestion",
      "ExitPlanMode",
    ]);
    for (const t of first.tools) expect(t.input_schema.type).toBe("object");
    expect(
      Object.keys(first.tools.find((t) => t.name === "Grep")!.input_schema.properties),
    ).toContain("output_mode");
    expect(first.system).toEqual([
      {
        type: "text",
        text: expect.stringContaining("planport"),
        cache_control: { type: "ephemeral" },
      },
    ]);
    const opening = first.messages[0]!;
    expect(opening.role).toBe("user");
    expect(opening.content[0]).toEqual({ type: "text", text: "Round invoice totals to cents" });
    expect(opening.content[1]!.text).toContain("<system-reminder>\nPlan mode is active.");
    expect(opening.content[1]!.text).toContain(PLAN);
    expect(opening.content.at(-1)!.cache_control).toEqual({ type: "ephemeral" });

    const second = sent[3]!.body as Body;
    expect(second.system).toEqual(first.system);
    expect(second.tools).toEqual(first.tools);
    expect(second.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(
      second.messages[1]!.content.filter((b) => b.type === "tool_use").map((b) => b.id),
    ).toEqual(["toolu_01A", "toolu_01B"]);
    const results = second.messages[2]!.content;
    expect(results.map((b) => [b.type, b.tool_use_id])).toEqual([
      ["tool_result", "toolu_01A"],
      ["tool_result", "toolu_01B"],
    ]);
    expect(JSON.stringify(results[0])).toContain("export interface InvoiceLine");
    expect(results.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    // Only the newest message carries a cache mark: the earlier prefix stays byte-identical.
    expect(JSON.stringify(second.messages[0])).not.toContain("cache_control");
  });

  it("ends the session with a readable error_during_execution when the API stays overloaded", async () => {
    const overloaded = {
      status: 529,
      body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    };
    const { env, requests } = await lane([overloaded, overloaded, overloaded]);
    const port = new MemoryPort({ files: shopFixture(), facts: { planner: "anthropic" } });
    expect(await step(port, env, { retry: { ...FAST_RETRY, attempts: 3 } })).toEqual({
      next: "idle",
    });
    expect(await requests()).toHaveLength(3);
    expect(port.ended?.subtype).toBe("error_during_execution");
    expect(port.ended?.message).toBe(
      "The anthropic planner failed after 3 attempts: The Anthropic API answered HTTP 529: overloaded_error: Overloaded. The session stopped; start a new session to try again.",
    );
  });

  it("does not retry a refused key and says which setting to check", async () => {
    const { env, requests } = await lane([
      {
        status: 401,
        body: {
          type: "error",
          error: { type: "authentication_error", message: "invalid x-api-key" },
        },
      },
    ]);
    const port = new MemoryPort({ files: shopFixture(), facts: { planner: "anthropic" } });
    await step(port, env, { retry: FAST_RETRY });
    expect(await requests()).toHaveLength(1);
    expect(port.ended?.message).toContain(
      "HTTP 401: authentication_error: invalid x-api-key. Check ANTHROPIC_API_KEY.",
    );
  });

  it("keeps the conversation valid across a question, an answer and text sent while it was open", async () => {
    const { env, requests } = await lane([
      ok([
        {
          type: "tool_use",
          id: "toolu_q",
          name: "AskUserQuestion",
          input: {
            questions: [
              {
                question: "Round half up or to even?",
                header: "Rounding",
                options: [{ label: "Half up" }, { label: "To even" }],
              },
            ],
          },
        },
      ]),
      ok([{ type: "text", text: "Thanks, planning with half up." }]),
    ]);
    const port = new MemoryPort({ files: shopFixture(), facts: { planner: "anthropic" } });
    expect(await step(port, env, { retry: FAST_RETRY })).toEqual({ next: "wait" });
    port.sendText("And keep two decimals.");
    port.answer("toolu_q", { "Round half up or to even?": "Half up" });
    expect(await step(port, env, { retry: FAST_RETRY })).toEqual({ next: "idle" });
    const sent = await requests();
    const last = (sent.at(-1)!.body as Body).messages.at(-1)!;
    expect(last.content.map((b) => b.type)).toEqual(["tool_result", "text"]);
    expect(last.content[0]!.tool_use_id).toBe("toolu_q");
    expect(last.content[1]!.text).toBe("And keep two decimals.");
    expect(toolResultText(toolResultsOf(port.listEvents())[0]!.content)).toContain(
      '"Round half up or to even?"="Half up"',
    );
  });
});
