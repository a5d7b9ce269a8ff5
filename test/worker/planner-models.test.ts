import { describe, expect, it } from "vitest";
import {
  anthropicRequestBody,
  parseAnthropicResponse,
} from "../../src/planner/models/anthropic.ts";
import { retryAfterMs } from "../../src/planner/models/http.ts";
import { createPlanner } from "../../src/planner/models/index.ts";
import {
  openaiRequestBody,
  parseArguments,
  parseOpenaiResponse,
} from "../../src/planner/models/openai.ts";
import { SCRIPT_EXHAUSTED_TEXT, scriptedPlanner } from "../../src/planner/models/scripted.ts";
import type { ModelRequest } from "../../src/planner/models/types.ts";
import {
  parseWorkersAiResponse,
  WORKERS_AI_MODEL,
  workersAiInputs,
  workersAiPlanner,
} from "../../src/planner/models/workers-ai.ts";
import { TOOL_SPECS } from "../../src/planner/tools/index.ts";
import { MemoryPort } from "../support/memory-port.ts";

const request: ModelRequest = {
  system: "SYSTEM",
  tools: TOOL_SPECS,
  maxOutputTokens: 1000,
  inputs: new Map(),
  context: { sessionId: "s", mode: "plan", planPath: "/plans/x.md", variant: "simple" },
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Do the thing" },
        { type: "text", text: "<system-reminder>\nPlan mode\n</system-reminder>" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "call_1", name: "Read", input: { file_path: "a.ts" } },
        { type: "tool_use", id: "call_2", name: "LS", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: "     1\tx", is_error: false },
        { type: "tool_result", tool_use_id: "call_2", content: "nope", is_error: true },
        { type: "text", text: "also this" },
      ],
    },
  ],
};

describe("the openai planner's wire format", () => {
  it("maps the conversation to Chat Completions with tool calls and tool messages", () => {
    const body = openaiRequestBody("gpt-test", request) as {
      model: string;
      messages: Record<string, unknown>[];
      tools: { type: string; function: { name: string; parameters: { type: string } } }[];
    };
    expect(body.model).toBe("gpt-test");
    expect(body.tools.map((t) => t.function.name)).toEqual(TOOL_SPECS.map((t) => t.name));
    expect(
      body.tools.every((t) => t.type === "function" && t.function.parameters.type === "object"),
    ).toBe(true);
    expect(body.messages).toEqual([
      { role: "system", content: "SYSTEM" },
      { role: "user", content: "Do the thing\n\n<system-reminder>\nPlan mode\n</system-reminder>" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "Read", arguments: '{"file_path":"a.ts"}' },
          },
          { id: "call_2", type: "function", function: { name: "LS", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "     1\tx" },
      { role: "tool", tool_call_id: "call_2", content: "Error: nope" },
      { role: "user", content: "also this" },
    ]);
  });

  it("reads tool calls and usage back, giving id-less calls a stable id", () => {
    const turn = parseOpenaiResponse(
      {
        model: "m",
        choices: [
          {
            message: {
              content: null,
              tool_calls: [
                { id: "", function: { name: "Glob", arguments: '{"pattern":"*"}' } },
                { id: "c2", function: { name: "LS", arguments: "not json" } },
              ],
            },
          },
        ],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 3,
          prompt_tokens_details: { cached_tokens: 8 },
        },
      },
      7,
    );
    expect(turn.content).toEqual([
      { type: "tool_use", id: "call_7_0", name: "Glob", input: { pattern: "*" } },
      { type: "tool_use", id: "c2", name: "LS", input: { _unparsed_arguments: "not json" } },
    ]);
    // prompt_tokens includes the cached ones; input_tokens is the uncached part.
    expect(turn.usage).toEqual({ input_tokens: 2, output_tokens: 3, cache_read_input_tokens: 8 });
    expect(() => parseOpenaiResponse({ choices: [] }, 0)).toThrow("without choices");
    expect(parseArguments({ a: 1 })).toEqual({ a: 1 });
  });
});

describe("the anthropic planner's wire format", () => {
  it("marks the system prompt and the newest block for caching, and drops thinking blocks", () => {
    const body = anthropicRequestBody("claude-x", request) as {
      system: unknown[];
      messages: { content: Record<string, unknown>[] }[];
    };
    expect(body.system).toEqual([
      { type: "text", text: "SYSTEM", cache_control: { type: "ephemeral" } },
    ]);
    expect(body.messages.at(-1)!.content.at(-1)).toEqual({
      type: "text",
      text: "also this",
      cache_control: { type: "ephemeral" },
    });
    const turn = parseAnthropicResponse({
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "" },
        { type: "text", text: "Hi" },
        { type: "tool_use", id: "t1", name: "LS", input: {} },
      ],
      usage: {
        input_tokens: 5,
        output_tokens: 2,
        cache_creation_input_tokens: 4,
        cache_read_input_tokens: null,
      },
    });
    expect(turn.content).toEqual([
      { type: "text", text: "Hi" },
      { type: "tool_use", id: "t1", name: "LS", input: {} },
    ]);
    expect(turn.usage).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      cache_creation_input_tokens: 4,
    });
  });
});

describe("the workers-ai planner", () => {
  it("sends function tools and replays calls as the binding expects", () => {
    const inputs = workersAiInputs(request) as {
      messages: { role: string; content: string; name?: string }[];
      tools: unknown[];
      max_tokens: number;
    };
    // The request's output budget, up to the binding's 4,096.
    expect(inputs.max_tokens).toBe(1000);
    expect(
      (workersAiInputs({ ...request, maxOutputTokens: 16_384 }) as { max_tokens: number })
        .max_tokens,
    ).toBe(4096);
    expect(inputs.tools).toHaveLength(TOOL_SPECS.length);
    expect(inputs.messages.slice(2, 6)).toEqual([
      { role: "assistant", content: "Looking." },
      { role: "assistant", content: '{"name":"Read","arguments":{"file_path":"a.ts"}}' },
      { role: "assistant", content: '{"name":"LS","arguments":{}}' },
      { role: "tool", name: "Read", content: "     1\tx" },
    ]);
  });

  it("runs the model through the AI binding and assigns tool call ids", async () => {
    const calls: { model: string; inputs: Record<string, unknown> }[] = [];
    const aiDouble = {
      async run(model: string, inputs: Record<string, unknown>) {
        calls.push({ model, inputs });
        return {
          response: "",
          tool_calls: [{ name: "LS", arguments: { path: "src" } }],
          usage: { prompt_tokens: 9, completion_tokens: 2 },
        };
      },
    };
    const planner = workersAiPlanner({ AI: aiDouble as unknown as Ai });
    const turn = await planner.next(request);
    expect(calls[0]!.model).toBe(WORKERS_AI_MODEL);
    expect(turn.content).toEqual([
      { type: "tool_use", id: "toolu_wai_3_0", name: "LS", input: { path: "src" } },
    ]);
    expect(parseWorkersAiResponse("just text", 0).content).toEqual([
      { type: "text", text: "just text" },
    ]);
  });

  it("classifies binding failures: capacity is transient, bad input is not", async () => {
    const failing = (message: string) =>
      workersAiPlanner({
        AI: { run: async () => Promise.reject(new Error(message)) } as unknown as Ai,
      });
    await expect(
      failing("3040: Capacity temporarily exceeded").next(request),
    ).rejects.toMatchObject({ transient: true });
    await expect(failing("5006: Invalid input").next(request)).rejects.toMatchObject({
      transient: false,
    });
    await expect(workersAiPlanner({}).next(request)).rejects.toThrow("no Workers AI binding");
  });
});

describe("a request that must be answered in text (a summary request)", () => {
  const textOnly: ModelRequest = { ...request, toolChoice: "none" };

  it("anthropic and openai keep the tools and forbid calling them; a normal request sets no choice", () => {
    const anthropic = anthropicRequestBody("claude-test", textOnly);
    expect(anthropic.tool_choice).toEqual({ type: "none" });
    expect(anthropic.tools).toEqual(anthropicRequestBody("claude-test", request).tools);
    expect(anthropicRequestBody("claude-test", request)).not.toHaveProperty("tool_choice");
    const openai = openaiRequestBody("gpt-test", textOnly);
    expect(openai.tool_choice).toBe("none");
    expect(openai.tools).toEqual(openaiRequestBody("gpt-test", request).tools);
    expect(openaiRequestBody("gpt-test", request)).not.toHaveProperty("tool_choice");
  });

  it("workers-ai offers no tools at all (the binding has no tool choice)", () => {
    const inputs = workersAiInputs(textOnly);
    expect(inputs).not.toHaveProperty("tools");
    // The conversation is the same: earlier calls and results are still replayed.
    expect(inputs.messages).toEqual(workersAiInputs(request).messages);
  });
});

describe("the scripted planner", () => {
  it("replays by the number of replies so far, assigns ids, and ends the turn when the script runs out", async () => {
    const planner = scriptedPlanner([
      {
        content: [
          { type: "tool_use", name: "LS", input: {} },
          { type: "tool_use", id: "mine", name: "LS", input: {} },
        ],
      },
    ]);
    const first = await planner.next({ ...request, messages: [request.messages[0]!] });
    expect(first.content).toEqual([
      { type: "tool_use", id: "toolu_scripted_0_0", name: "LS", input: {} },
      { type: "tool_use", id: "mine", name: "LS", input: {} },
    ]);
    const after = await planner.next(request);
    expect(after.content).toEqual([{ type: "text", text: SCRIPT_EXHAUSTED_TEXT }]);
  });
});

describe("the scripted planner's plan path placeholder", () => {
  it("replaces $PLAN_PATH in tool inputs with this session's plan file", async () => {
    const planner = scriptedPlanner([
      {
        content: [
          {
            type: "tool_use",
            name: "Write",
            input: { file_path: "$PLAN_PATH", content: "see $PLAN_PATH", n: 1 },
          },
        ],
      },
    ]);
    const turn = await planner.next({ ...request, messages: [request.messages[0]!] });
    expect(turn.content[0]).toMatchObject({
      input: { file_path: "/plans/x.md", content: "see /plans/x.md", n: 1 },
    });
  });
});

describe("planner selection and retry-after", () => {
  it("builds the planner the session names", () => {
    const port = new MemoryPort();
    expect(createPlanner({ ...port.facts, planner: "offline" }, {}).canExecuteRemotely).toBe(false);
    for (const name of ["anthropic", "openai", "workers-ai", "scripted"] as const) {
      const planner = createPlanner({ ...port.facts, planner: name }, {});
      expect(planner.name).toBe(name);
      expect(planner.canExecuteRemotely).toBe(true);
    }
  });

  it("reads retry-after in seconds, as a date, and retry-after-ms", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "3" }))).toBe(3_000);
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "3" }))).toBe(250);
    expect(
      retryAfterMs(new Headers({ "retry-after": new Date(Date.now() + 60_000).toUTCString() })),
    ).toBeGreaterThan(50_000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });
});
