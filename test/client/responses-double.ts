/**
 * TEST DOUBLE of the OpenAI Responses API — the only API Codex CLI speaks (a model provider
 * with `wire_api = "responses"`) — served over real HTTP by a Node `http` server
 * (provider-double.ts). It is not OpenAI: it answers with responses a test scripted (or a
 * responder function computed), and it checks the request the way the real API refuses a
 * malformed one — a model; `input` a string or a list of typed items; function tools with a
 * name and an object schema, `namespace` tools (how Codex groups an MCP server's tools) with a
 * name and function tools inside; every `function_call_output` answering a `function_call`
 * earlier in the input, and every `function_call` answered ("No tool output found for function
 * call …"). A violation answers 400 `invalid_request_error`.
 *
 *   POST <url>/_double/<lane>/script      queue responses (the shapes of anthropic-double-types.ts)
 *   GET  <url>/_double/<lane>/requests    what was received
 *   POST <url>/t/<lane>/v1/responses      the API itself (a Codex provider's base_url = <url>/t/<lane>/v1)
 *
 * A scripted body is a Response object (`{id, model, output: [items], usage}`, see
 * {@link responseOf}); a request with `"stream": true` (Codex always streams) gets it as the
 * API's server-sent events ({@link responseEvents}).
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

export type ResponsesDouble = ProviderDouble;

/**
 * Starts the double on a free loopback port.
 *
 * @example
 * const double = await startResponsesDouble();
 * // config.toml: [model_providers.double] base_url = `${double.url}/t/my-test/v1`, wire_api = "responses"
 */
export function startResponsesDouble(): Promise<ResponsesDouble> {
  return startProviderDouble(RESPONSES_API);
}

/** One output item of a Response, as the double streams it. */
export type OutputItem =
  | {
      type: "message";
      id: string;
      role: "assistant";
      content: { type: "output_text"; text: string }[];
    }
  | {
      type: "function_call";
      id: string;
      call_id: string;
      name: string;
      /** The namespace tool this function belongs to (Codex: `mcp__<server>`). */
      namespace?: string;
      arguments: string;
    };

let replies = 0;

/**
 * A complete Response with these output items: what a test scripts. Usage is counted from the
 * output at 4 characters a token (input tokens are what the double saw, with `simulate_usage`).
 *
 * @example
 * responseOf([functionCall("plan", { task: "add OAuth" }, "mcp__planport")])
 */
export function responseOf(output: OutputItem[], model = "gpt-double"): Record<string, unknown> {
  replies += 1;
  const outputTokens = doubleTokens(JSON.stringify(output));
  return {
    id: `resp_double_${replies}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "completed",
    model,
    output: output.map((item) => ({ ...item, status: "completed" })),
    usage: {
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1 + outputTokens,
    },
  };
}

let items = 0;

/** An assistant message item. */
export function messageItem(text: string): OutputItem {
  items += 1;
  return {
    type: "message",
    id: `msg_double_${items}`,
    role: "assistant",
    content: [{ type: "output_text", text }],
  };
}

/** A function call item; `namespace` for a tool inside a namespace tool (an MCP server's). */
export function functionCall(name: string, args: unknown, namespace?: string): OutputItem {
  items += 1;
  return {
    type: "function_call",
    id: `fc_double_${items}`,
    call_id: `call_double_${items}`,
    name,
    ...(namespace === undefined ? {} : { namespace }),
    arguments: JSON.stringify(args),
  };
}

/** Numbers the eager model's tool calls (ids must differ). */
let eagerCalls = 0;

const RESPONSES_API: DoubleApi = {
  path: "/v1/responses",
  wireProblem: responsesWireProblem,
  error: (type, message) => ({ error: { type, message, param: null, code: null } }),
  simulateUsage(cache, body, scripted) {
    const reply = scripted as { usage?: { output_tokens?: number } };
    const usage = responsesUsage(cache, body, reply.usage?.output_tokens ?? 1);
    return {
      body: {
        ...(scripted as object),
        usage: {
          input_tokens: usage.input_tokens,
          input_tokens_details: { cached_tokens: usage.cached_tokens },
          output_tokens: usage.output_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input_tokens + usage.output_tokens,
        },
      },
      usage,
    };
  },
  eagerToolCall(body, scripted) {
    const b = body as { tools?: RequestTool[]; tool_choice?: unknown };
    const reply = scripted as { output?: { type: string }[] };
    if (b.tool_choice === "none") return null;
    if ((reply.output ?? []).some((x) => x.type === "function_call")) return null;
    const first = (b.tools ?? []).find((t) => t.type === "function" || t.type === "namespace");
    if (first === undefined) return null;
    const inner = first.type === "namespace" ? first.tools?.[0] : first;
    if (typeof inner?.name !== "string") return null;
    eagerCalls += 1;
    const call: OutputItem = {
      type: "function_call",
      id: `fc_eager_${eagerCalls}`,
      call_id: `call_eager_${eagerCalls}`,
      name: inner.name,
      ...(first.type === "namespace" ? { namespace: String(first.name) } : {}),
      arguments: "{}",
    };
    return { ...reply, output: [{ ...call, status: "completed" }] };
  },
  streamEvents: responseEvents,
};

type RequestTool = {
  type?: unknown;
  name?: unknown;
  parameters?: { type?: unknown };
  tools?: RequestTool[];
};
type InputItem = {
  type?: unknown;
  role?: unknown;
  call_id?: unknown;
  name?: unknown;
  arguments?: unknown;
  output?: unknown;
};

/** What the real API would refuse in this request, or null. */
export function responsesWireProblem(req: IncomingMessage, body: unknown): string | null {
  if (!String(req.headers["content-type"] ?? "").includes("application/json"))
    return "content-type must be application/json";
  if (typeof body !== "object" || body === null) return "body must be an object";
  const b = body as { model?: unknown; input?: unknown; tools?: unknown; stream?: unknown };
  if (typeof b.model !== "string" || b.model === "") return "model is required";
  if (b.stream !== undefined && typeof b.stream !== "boolean") return "stream must be a boolean";
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return "tools must be a list";
    for (const [i, tool] of (b.tools as RequestTool[]).entries()) {
      const problem = toolProblem(tool, `tools.${i}`, true);
      if (problem) return problem;
    }
  }
  if (typeof b.input === "string") return b.input === "" ? "input must not be empty" : null;
  if (!Array.isArray(b.input) || b.input.length === 0)
    return "input must be a string or a non-empty list of items";
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const [i, item] of (b.input as InputItem[]).entries()) {
    if (typeof item !== "object" || item === null) return `input.${i} must be an object`;
    const type = item.type ?? (item.role === undefined ? undefined : "message");
    if (typeof type !== "string") return `input.${i}.type is required`;
    if (type === "message") {
      if (!["user", "assistant", "system", "developer"].includes(String(item.role)))
        return `input.${i}.role is not a known role`;
    } else if (type === "function_call") {
      if (typeof item.call_id !== "string" || item.call_id === "")
        return `input.${i}.call_id is required`;
      if (typeof item.name !== "string" || item.name === "") return `input.${i}.name is required`;
      if (typeof item.arguments !== "string") return `input.${i}.arguments must be a JSON string`;
      calls.add(item.call_id);
    } else if (type === "function_call_output") {
      if (typeof item.call_id !== "string" || !calls.has(item.call_id))
        return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      if (typeof item.output !== "string" && !Array.isArray(item.output))
        return `input.${i}.output must be a string or a list of content items`;
      answered.add(item.call_id);
    }
  }
  for (const id of calls) {
    if (!answered.has(id)) return `No tool output found for function call ${id}.`;
  }
  return null;
}

/** A function tool, or (at the top level) a namespace of them; other built-in tools pass. */
function toolProblem(tool: RequestTool, at: string, topLevel: boolean): string | null {
  if (typeof tool !== "object" || tool === null) return `${at} must be an object`;
  if (tool.type === "function") {
    if (typeof tool.name !== "string" || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name))
      return `${at}.name must be 1–128 letters, digits, _ or -`;
    if (tool.parameters !== undefined && tool.parameters.type !== "object")
      return `${at}.parameters must be a JSON schema of type object`;
    return null;
  }
  if (tool.type === "namespace" && topLevel) {
    if (typeof tool.name !== "string" || tool.name === "") return `${at}.name is required`;
    if (!Array.isArray(tool.tools) || tool.tools.length === 0)
      return `${at}.tools must be a non-empty list of function tools`;
    for (const [j, inner] of tool.tools.entries()) {
      if (inner.type !== "function") return `${at}.tools.${j} must be a function tool`;
      const problem = toolProblem(inner, `${at}.tools.${j}`, false);
      if (problem) return problem;
    }
    return null;
  }
  if (typeof tool.type !== "string") return `${at}.type is required`;
  return topLevel ? null : `${at} must be a function tool`;
}

/**
 * The usage the Responses API reports, given the prefixes seen so far on the lane: the request
 * is its tools, then its input items; `cached_tokens` are those of the longest prefix an earlier
 * request shared (OpenAI caches prompt prefixes automatically).
 */
export function responsesUsage(
  cache: Set<string>,
  body: unknown,
  outputTokens: number,
): { input_tokens: number; output_tokens: number; cached_tokens: number } {
  const b = body as { tools?: unknown[]; input?: unknown };
  const input = Array.isArray(b.input) ? b.input : [b.input];
  const blocks = [
    ...(b.tools ?? []).map((t) => `tool:${JSON.stringify(t)}`),
    ...input.map((item) => `input:${JSON.stringify(item)}`),
  ];
  const hashes = prefixHashes(blocks);
  const tokens = blocks.map(doubleTokens);
  let cachedBlocks = 0;
  for (let p = hashes.length - 1; p >= 0; p--) {
    if (cache.has(hashes[p] as string)) {
      cachedBlocks = p + 1;
      break;
    }
  }
  for (const h of hashes) cache.add(h);
  const sum = (n: number) => tokens.slice(0, n).reduce((a, t) => a + t, 0);
  return {
    input_tokens: sum(blocks.length),
    output_tokens: outputTokens,
    cached_tokens: sum(cachedBlocks),
  };
}

/**
 * A Response as the server-sent events the API streams for it: `response.created` (no output
 * yet), then per output item `response.output_item.added`, its text
 * (`response.content_part.added`, `response.output_text.delta`, `…done`,
 * `response.content_part.done`) or its arguments (`response.function_call_arguments.delta`,
 * `…done`), `response.output_item.done` with the whole item; then `response.completed` with
 * the whole Response. Every event carries its `sequence_number`.
 *
 * @example
 * responseEvents(responseOf([messageItem("hi")]))
 * // → "event: response.created\ndata: {…}\n\nevent: response.output_item.added\n…"
 */
export function responseEvents(reply: unknown): string {
  const r = reply as { id?: string; output?: (OutputItem & { status?: string })[] };
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => {
    const line = JSON.stringify({ type, sequence_number: sequence, ...data });
    sequence += 1;
    return `event: ${type}\ndata: ${line}\n\n`;
  };
  const output = r.output ?? [];
  let text = event("response.created", {
    response: { ...(reply as object), status: "in_progress", output: [], usage: null },
  });
  for (const [index, item] of output.entries()) {
    const at = { item_id: item.id, output_index: index };
    if (item.type === "message") {
      text += event("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", content: [] },
      });
      for (const [part, content] of item.content.entries()) {
        const where = { ...at, content_index: part };
        text += event("response.content_part.added", {
          ...where,
          part: { type: "output_text", text: "", annotations: [] },
        });
        // Two deltas, so a client that only reads the final item is not what passes.
        const half = Math.ceil(content.text.length / 2);
        for (const delta of [content.text.slice(0, half), content.text.slice(half)]) {
          if (delta !== "") text += event("response.output_text.delta", { ...where, delta });
        }
        text += event("response.output_text.done", { ...where, text: content.text });
        text += event("response.content_part.done", {
          ...where,
          part: { type: "output_text", text: content.text, annotations: [] },
        });
      }
    } else {
      text += event("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      text += event("response.function_call_arguments.delta", { ...at, delta: item.arguments });
      text += event("response.function_call_arguments.done", {
        ...at,
        arguments: item.arguments,
      });
    }
    text += event("response.output_item.done", {
      output_index: index,
      item: { ...item, status: "completed" },
    });
  }
  text += event("response.completed", { response: { ...(reply as object), status: "completed" } });
  return text;
}
