/**
 * TEST DOUBLE of the OpenAI Chat Completions API (what vLLM, Ollama, llama.cpp server and the
 * gateways speak), served over real HTTP by a Node `http` server (provider-double.ts). It is
 * not OpenAI: it answers with responses a test scripted in advance, and it checks the request
 * the way the real API rejects a malformed one — a model; tools as `{type: "function",
 * function: {name, parameters: {type: "object"}}}`; messages with known roles, an assistant
 * message with `tool_calls` answered by one `tool` message per call (by `tool_call_id`, before
 * anything else), no `tool` message for a call nobody made, and a last message that is not the
 * assistant's. A violation answers 400 `invalid_request_error`. With `simulate_usage` it
 * reports the usage OpenAI's automatic prompt caching would give (see {@link openaiUsage}).
 *
 *   POST <url>/_double/<lane>/script            queue responses (the shapes of anthropic-double.ts)
 *   GET  <url>/_double/<lane>/requests          what was received
 *   POST <url>/t/<lane>/v1/chat/completions     the API itself (OPENAI_BASE_URL = <url>/t/<lane>/v1)
 */
import type { IncomingMessage } from "node:http";
import {
  type DoubleApi,
  doubleTokens,
  type ProviderDouble,
  prefixHashes,
  startProviderDouble,
} from "./provider-double.ts";

export type { RecordedRequest, ScriptedResponse } from "./anthropic-double-types.ts";

export type OpenaiDouble = ProviderDouble;

/**
 * Starts the double on a free loopback port.
 *
 * @example
 * const double = await startOpenaiDouble();
 * // OPENAI_BASE_URL = `${double.url}/t/my-test/v1`
 */
export function startOpenaiDouble(): Promise<OpenaiDouble> {
  return startProviderDouble(OPENAI_API);
}

/** Numbers the eager model's tool calls (ids must differ). */
let eagerCalls = 0;

const OPENAI_API: DoubleApi = {
  path: "/v1/chat/completions",
  wireProblem: openaiWireProblem,
  error: (type, message) => ({ error: { type, message, code: null } }),
  simulateUsage(cache, body, scripted) {
    const usage = openaiUsage(cache, body, completionTokensOf(scripted));
    const { cached_tokens, ...counts } = usage;
    return {
      body: {
        ...(scripted as object),
        usage: { ...counts, prompt_tokens_details: { cached_tokens } },
      },
      usage,
    };
  },
  eagerToolCall(body, scripted) {
    const b = body as { tools?: { function?: { name?: string } }[]; tool_choice?: unknown };
    const reply = scripted as { choices?: { message?: { tool_calls?: unknown[] | null } }[] };
    const tool = b.tools?.[0]?.function?.name;
    if (tool === undefined || b.tool_choice === "none") return null;
    const first = reply.choices?.[0];
    if ((first?.message?.tool_calls ?? []).length > 0) return null;
    const call = {
      id: `call_eager_${eagerCalls++}`,
      type: "function",
      function: { name: tool, arguments: "{}" },
    };
    return {
      ...reply,
      choices: [
        {
          ...first,
          message: { role: "assistant", content: null, tool_calls: [call] },
          finish_reason: "tool_calls",
        },
      ],
    };
  },
};

type Message = {
  role?: unknown;
  content?: unknown;
  tool_calls?: {
    id?: unknown;
    type?: unknown;
    function?: { name?: unknown; arguments?: unknown };
  }[];
  tool_call_id?: unknown;
};

/** What the real API would refuse in this request, or null. */
export function openaiWireProblem(req: IncomingMessage, body: unknown): string | null {
  if (!String(req.headers["content-type"] ?? "").includes("application/json"))
    return "content-type must be application/json";
  if (typeof body !== "object" || body === null) return "body must be an object";
  const b = body as { model?: unknown; messages?: unknown; tools?: unknown };
  if (typeof b.model !== "string" || b.model === "") return "model is required";
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return "tools must be a list";
    for (const [i, tool] of (b.tools as Record<string, unknown>[]).entries()) {
      const fn = tool.function as { name?: unknown; parameters?: { type?: unknown } } | undefined;
      if (tool.type !== "function" || typeof fn?.name !== "string")
        return `tools.${i}: must be {type: "function", function: {name, …}}`;
      if (fn.parameters !== undefined && fn.parameters.type !== "object")
        return `tools.${i}.function.parameters must be a JSON schema of type object`;
    }
  }
  const choice = (body as { tool_choice?: unknown }).tool_choice;
  if (choice !== undefined) {
    const named = choice as { type?: unknown; function?: { name?: unknown } } | null;
    const valid =
      choice === "none" ||
      choice === "auto" ||
      choice === "required" ||
      (named?.type === "function" && typeof named.function?.name === "string");
    if (!valid)
      return 'tool_choice must be "none", "auto", "required" or {type: "function", function: {name}}';
  }
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    return "messages must be a non-empty list";
  const messages = b.messages as Message[];
  let owed: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (!["system", "developer", "user", "assistant", "tool"].includes(String(m.role)))
      return `messages.${i}.role is not a known role`;
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string" || !owed.includes(m.tool_call_id))
        return `messages.${i}: a tool message must answer a tool call of the assistant message before it (tool_call_id ${String(m.tool_call_id)})`;
      if (typeof m.content !== "string") return `messages.${i}.content must be a string`;
      owed = owed.filter((id) => id !== m.tool_call_id);
      continue;
    }
    if (owed.length > 0)
      return `messages.${i}: tool calls ${owed.join(", ")} must be answered by tool messages first`;
    if (m.role === "assistant") {
      const calls = m.tool_calls ?? [];
      if (!Array.isArray(calls)) return `messages.${i}.tool_calls must be a list`;
      for (const call of calls) {
        if (typeof call.id !== "string" || call.id === "")
          return `messages.${i}: every tool call needs an id`;
        if (call.type !== "function" || typeof call.function?.name !== "string")
          return `messages.${i}: tool calls must be functions with a name`;
        if (typeof call.function.arguments !== "string")
          return `messages.${i}: tool call arguments must be a JSON string`;
      }
      if (calls.length === 0 && (typeof m.content !== "string" || m.content === ""))
        return `messages.${i}: an assistant message needs content or tool_calls`;
      owed = calls.map((c) => c.id as string);
    } else if (typeof m.content !== "string" || m.content.trim() === "") {
      return `messages.${i}.content must be a non-empty string`;
    }
  }
  if (owed.length > 0) return `tool calls ${owed.join(", ")} have no tool message`;
  if (messages.at(-1)?.role === "assistant") return "the last message must not be the assistant's";
  return null;
}

/**
 * The usage OpenAI reports for a request, given the prefixes seen so far: the request is the
 * sequence of its tool definitions, then its messages; `cached_tokens` are the tokens of the
 * longest prefix an earlier request on the lane shared (OpenAI caches every prompt's prefix
 * automatically); `prompt_tokens` counts all input, cached included.
 */
export function openaiUsage(
  cache: Set<string>,
  body: unknown,
  completionTokens: number,
): { prompt_tokens: number; completion_tokens: number; cached_tokens: number } {
  const b = body as { tools?: unknown[]; messages?: unknown[] };
  const blocks = [
    ...(b.tools ?? []).map((t) => `tool:${JSON.stringify(t)}`),
    ...(b.messages ?? []).map((m) => `message:${JSON.stringify(m)}`),
  ];
  const hashes = prefixHashes(blocks);
  const tokens = blocks.map(doubleTokens);
  let cachedBlocks = 0;
  for (let p = hashes.length - 1; p >= 0; p--) {
    if (cache.has(hashes[p]!)) {
      cachedBlocks = p + 1;
      break;
    }
  }
  for (const h of hashes) cache.add(h);
  const sum = (n: number) => tokens.slice(0, n).reduce((a, t) => a + t, 0);
  return {
    prompt_tokens: sum(blocks.length),
    completion_tokens: completionTokens,
    cached_tokens: sum(cachedBlocks),
  };
}

function completionTokensOf(scripted: unknown): number {
  const reply = scripted as { usage?: { completion_tokens?: number }; choices?: unknown };
  return reply.usage?.completion_tokens ?? doubleTokens(JSON.stringify(reply.choices ?? ""));
}
