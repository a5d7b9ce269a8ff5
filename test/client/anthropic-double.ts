/**
 * TEST DOUBLE of the Anthropic Messages API, served over real HTTP by a Node `http` server
 * (provider-double.ts). It is not Anthropic: it answers with responses a test scripted in
 * advance, and it checks the request the way the real API would reject a malformed one — tools
 * need a name, a description and an object `input_schema`; roles alternate starting with
 * `user`; every `tool_use` is answered by a `tool_result` with its id at the start of the next
 * user message, and no result names an id that was not asked for. A violation answers 400
 * `invalid_request_error`, so a wire-format bug fails the test that caused it. With
 * `simulate_usage` it reports the usage Anthropic's prompt cache would give (see
 * {@link anthropicUsage}).
 *
 * Each test gets its own lane (`/t/<lane>` in the base URL), so tests can run in parallel:
 *
 *   POST <url>/_double/<lane>/script    body: [{status, headers?, body, raw?, delay_ms?, match?, simulate_usage?}]
 *                                       queue responses (raw: a malformed body; delay_ms: a hang;
 *                                       match: answer only requests containing this text)
 *   GET  <url>/_double/<lane>/requests  → [{headers, body, received_at, answered_at, matched}]
 *   POST <url>/t/<lane>/v1/messages     the Messages API itself
 *
 * A request with `"stream": true` (Claude Code's own) gets its successful reply as the Messages
 * API's server-sent events (see {@link messageEvents}); an in-process test can also answer a
 * lane's requests with a function (`respond`), for turns that depend on what a tool returned.
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

export type AnthropicDouble = ProviderDouble;

/**
 * Starts the double on a free loopback port.
 *
 * @example
 * const double = await startAnthropicDouble();
 * // ANTHROPIC_BASE_URL = `${double.url}/t/my-test`
 * await double.close();
 */
export function startAnthropicDouble(): Promise<AnthropicDouble> {
  return startProviderDouble(ANTHROPIC_API);
}

/** Numbers the eager model's tool calls (ids must differ). */
let eagerCalls = 0;

const ANTHROPIC_API: DoubleApi = {
  path: "/v1/messages",
  wireProblem,
  error: apiError,
  simulateUsage(cache, body, scripted) {
    const usage = anthropicUsage(cache, body, outputTokensOf(scripted));
    const reply = scripted as { usage?: Record<string, number> };
    return { body: { ...reply, usage }, usage };
  },
  eagerToolCall(body, scripted) {
    const b = body as { tools?: { name?: string }[]; tool_choice?: { type?: string } };
    const reply = scripted as { content?: { type: string }[] };
    const tool = b.tools?.[0]?.name;
    if (tool === undefined || b.tool_choice?.type === "none") return null;
    if ((reply.content ?? []).some((x) => x.type === "tool_use")) return null;
    return {
      ...reply,
      content: [{ type: "tool_use", id: `toolu_eager_${eagerCalls++}`, name: tool, input: {} }],
      stop_reason: "tool_use",
    };
  },
  streamEvents: messageEvents,
};

/** One content block of a Messages reply, as the double streams it. */
type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature?: string };

/**
 * A Messages API reply (`{id, model, content, stop_reason, usage}`) as the server-sent events
 * the API streams for it: `message_start` (the message without content), then per block
 * `content_block_start`, one `content_block_delta` (`text_delta`, `input_json_delta` or
 * `thinking_delta`) and `content_block_stop`, then `message_delta` (stop reason, output
 * tokens) and `message_stop`.
 *
 * @example
 * messageEvents({ id: "msg_1", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn" })
 * // → "event: message_start\ndata: {…}\n\nevent: content_block_start\n…"
 */
export function messageEvents(reply: unknown): string {
  const r = reply as {
    id?: string;
    model?: string;
    content?: ReplyBlock[];
    stop_reason?: string;
    usage?: Record<string, number>;
  };
  const usage = { input_tokens: 1, output_tokens: 1, ...r.usage };
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: r.id ?? "msg_double",
          type: "message",
          role: "assistant",
          model: r.model ?? "claude-double",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
    ],
  ];
  (r.content ?? []).forEach((block, index) => {
    const [start, delta] = streamedBlock(block);
    events.push([
      "content_block_start",
      { type: "content_block_start", index, content_block: start },
    ]);
    events.push(["content_block_delta", { type: "content_block_delta", index, delta }]);
    if (block.type === "thinking") {
      const signature = { type: "signature_delta", signature: block.signature ?? "double" };
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: signature },
      ]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: r.stop_reason ?? "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

function streamedBlock(block: ReplyBlock): [unknown, unknown] {
  switch (block.type) {
    case "text":
      return [
        { type: "text", text: "" },
        { type: "text_delta", text: block.text },
      ];
    case "tool_use":
      return [
        { type: "tool_use", id: block.id, name: block.name, input: {} },
        { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      ];
    case "thinking":
      return [
        { type: "thinking", thinking: "" },
        { type: "thinking_delta", thinking: block.thinking },
      ];
  }
}

/** How far before a cache mark Anthropic looks for an earlier cached prefix (in blocks). */
const CACHE_LOOKBACK_BLOCKS = 20;

/**
 * The usage Anthropic reports for a request, given the prefixes cached so far: the request is
 * the sequence tools → system blocks → message blocks; each `cache_control` mark writes the
 * prefix ending at it; a request reads the longest cached prefix that ends at most
 * {@link CACHE_LOOKBACK_BLOCKS} blocks before one of its marks; a change of `tool_choice` keeps
 * the tools and system blocks cached but not the messages. `input_tokens` is what is neither
 * read nor written.
 */
export function anthropicUsage(
  cache: Set<string>,
  body: unknown,
  outputTokens: number,
): Record<string, number> {
  const b = body as {
    tools?: Record<string, unknown>[];
    system?: Record<string, unknown>[] | string;
    messages?: { role: string; content: Record<string, unknown>[] | string }[];
    tool_choice?: unknown;
  };
  // A different tool_choice leaves the tools and the system prompt cached, not the messages.
  const choice =
    b.tool_choice === undefined ? "" : `[tool_choice ${JSON.stringify(b.tool_choice)}]`;
  const blocks: { text: string; mark: boolean }[] = [];
  const add = (block: Record<string, unknown>, prefix: string) => {
    const { cache_control, ...rest } = block;
    blocks.push({ text: `${prefix}${JSON.stringify(rest)}`, mark: cache_control !== undefined });
  };
  for (const tool of b.tools ?? []) add(tool, "tool:");
  const system = typeof b.system === "string" ? [{ type: "text", text: b.system }] : b.system;
  for (const block of system ?? []) add(block, "system:");
  for (const m of b.messages ?? []) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    for (const block of content) add(block, `${choice}${m.role}:`);
  }
  const hashes = prefixHashes(blocks.map((x) => x.text));
  const tokens = blocks.map((x) => doubleTokens(x.text));
  const upTo = (n: number) => tokens.slice(0, n).reduce((a, t) => a + t, 0);
  const marks = blocks.flatMap((x, i) => (x.mark ? [i] : []));
  let read = 0; // blocks read from the cache
  for (const mark of marks) {
    for (let p = mark; p >= Math.max(0, mark - CACHE_LOOKBACK_BLOCKS); p--) {
      if (cache.has(hashes[p]!)) {
        read = Math.max(read, p + 1);
        break;
      }
    }
  }
  const written = marks.length > 0 ? marks[marks.length - 1]! + 1 : 0;
  for (const mark of marks) cache.add(hashes[mark]!);
  const readTokens = upTo(read);
  const writeTokens = Math.max(0, upTo(written) - readTokens);
  return {
    input_tokens: upTo(blocks.length) - readTokens - writeTokens,
    output_tokens: outputTokens,
    cache_read_input_tokens: readTokens,
    cache_creation_input_tokens: writeTokens,
  };
}

/** The output tokens a scripted body reports, else its content's size. */
function outputTokensOf(scripted: unknown): number {
  const reply = scripted as { usage?: { output_tokens?: number }; content?: unknown };
  return reply.usage?.output_tokens ?? doubleTokens(JSON.stringify(reply.content ?? ""));
}

/** What the real API would refuse in this request, or null. */
export function wireProblem(req: IncomingMessage, body: unknown): string | null {
  if (!req.headers["x-api-key"]) return "missing x-api-key header";
  if (!req.headers["anthropic-version"]) return "missing anthropic-version header";
  if (typeof body !== "object" || body === null) return "body must be an object";
  const b = body as { model?: unknown; max_tokens?: unknown; tools?: unknown; messages?: unknown };
  if (typeof b.model !== "string" || typeof b.max_tokens !== "number")
    return "model and max_tokens are required";
  // Optional, as in the real API (Claude Code's side requests — titles and the like — have none).
  if (b.tools !== undefined && !Array.isArray(b.tools)) return "tools must be a list";
  for (const tool of (b.tools ?? []) as {
    name?: unknown;
    description?: unknown;
    input_schema?: { type?: unknown };
  }[]) {
    if (typeof tool.name !== "string" || typeof tool.description !== "string")
      return "each tool needs a name and a description";
    if (tool.input_schema?.type !== "object")
      return `tools.${tool.name}.input_schema must be a JSON schema of type object`;
  }
  const choice = (body as { tool_choice?: { type?: unknown; name?: unknown } }).tool_choice;
  if (choice !== undefined) {
    if (!["auto", "any", "tool", "none"].includes(String(choice?.type)))
      return "tool_choice.type must be auto, any, tool or none";
    if (choice.type === "tool" && typeof choice.name !== "string")
      return "tool_choice of type tool needs the tool's name";
  }
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    return "messages must be a non-empty list";
  // Claude Code 2.1.328 also sends `system` messages among them (environment, reminders): they
  // may stand anywhere; user and assistant turns alternate around them.
  const all = b.messages as { role: string; content: unknown }[];
  const messages = all.filter((m) => m.role !== "system");
  let owed: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const at = all.indexOf(m);
    if (m.role !== (i % 2 === 0 ? "user" : "assistant"))
      return `messages.${at}: roles must alternate, starting with user`;
    const blocks =
      typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : (m.content as { type: string; id?: string; tool_use_id?: string; text?: string }[]);
    if (!Array.isArray(blocks) || blocks.length === 0)
      return `messages.${at}: content must not be empty`;
    if (m.role === "user") {
      const results = blocks.filter((x) => x.type === "tool_result").map((x) => x.tool_use_id);
      const leading = blocks.slice(0, results.length).every((x) => x.type === "tool_result");
      if (!leading) return `messages.${at}: tool_result blocks must come first`;
      for (const id of owed)
        if (!results.includes(id))
          return `messages.${at}: tool_use ${id} has no tool_result right after it`;
      for (const id of results)
        if (!owed.includes(id ?? ""))
          return `messages.${at}: tool_result for unknown tool_use ${id}`;
      owed = [];
    } else {
      owed = blocks.filter((x) => x.type === "tool_use").map((x) => x.id ?? "");
    }
    for (const x of blocks)
      if (x.type === "text" && (x.text ?? "").trim() === "")
        return `messages.${at}: text blocks must be non-empty`;
  }
  if (messages.at(-1)?.role !== "user") return "the last message must be a user message";
  return null;
}

function apiError(type: string, message: string) {
  return { type: "error", error: { type, message } };
}
