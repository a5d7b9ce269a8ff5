/**
 * TEST DOUBLE of the Anthropic Messages API, served over real HTTP by a Node `http` server. It
 * is not Anthropic: it answers with responses a test scripted in advance, and it checks the
 * request the way the real API would reject a malformed one — tools need a name, a description
 * and an object `input_schema`; roles alternate starting with `user`; every `tool_use` is
 * answered by a `tool_result` with its id at the start of the next user message, and no result
 * names an id that was not asked for. A violation answers 400 `invalid_request_error`, so a
 * wire-format bug fails the test that caused it.
 *
 * Each test gets its own lane (`/t/<lane>` in the base URL), so tests can run in parallel:
 *
 *   POST <url>/_double/<lane>/script    body: [{status, headers?, body, raw?, delay_ms?}]
 *                                       queue responses (raw: a malformed body; delay_ms: a hang)
 *   GET  <url>/_double/<lane>/requests  → [{headers, body, received_at}]  what was received
 *   POST <url>/t/<lane>/v1/messages     the Messages API itself
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { RecordedRequest, ScriptedResponse } from "./anthropic-double-types.ts";

export type { RecordedRequest, ScriptedResponse } from "./anthropic-double-types.ts";

interface Lane {
  script: ScriptedResponse[];
  requests: RecordedRequest[];
}

export interface AnthropicDouble {
  url: string;
  /** Queues responses on a lane over HTTP (as a test in another process would). */
  script(lane: string, responses: ScriptedResponse[]): Promise<void>;
  /** Every request the lane received so far, in order. */
  received(lane: string): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

/**
 * Starts the double on a free loopback port.
 *
 * @example
 * const double = await startAnthropicDouble();
 * // ANTHROPIC_BASE_URL = `${double.url}/t/my-test`
 * await double.close();
 */
export async function startAnthropicDouble(): Promise<AnthropicDouble> {
  const lanes = new Map<string, Lane>();
  const lane = (name: string) => {
    let l = lanes.get(name);
    if (!l) {
      l = { script: [], requests: [] };
      lanes.set(name, l);
    }
    return l;
  };

  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://double");
      const control = /^\/_double\/([\w-]+)\/(script|requests)$/.exec(url.pathname);
      if (control) {
        const l = lane(control[1]!);
        if (control[2] === "script" && req.method === "POST") {
          l.script.push(...(JSON.parse(await readBody(req)) as ScriptedResponse[]));
          return send(res, 204, {}, null);
        }
        return send(res, 200, {}, l.requests);
      }
      const api = /^\/t\/([\w-]+)\/v1\/messages$/.exec(url.pathname);
      if (!api || req.method !== "POST")
        return send(
          res,
          404,
          {},
          apiError("not_found_error", `no route ${req.method} ${url.pathname}`),
        );
      const l = lane(api[1]!);
      const raw = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, 400, {}, apiError("invalid_request_error", "body is not JSON"));
      }
      l.requests.push({ headers: flatHeaders(req), body, received_at: Date.now() });
      const problem = wireProblem(req, body);
      if (problem) return send(res, 400, {}, apiError("invalid_request_error", problem));
      const next = l.script.shift();
      if (!next)
        return send(
          res,
          500,
          {},
          apiError("api_error", "the test double has no scripted response left"),
        );
      if (next.delay_ms !== undefined && next.delay_ms > 0) {
        const timer = setTimeout(() => reply(res, next), next.delay_ms);
        res.on("close", () => clearTimeout(timer));
        return;
      }
      return reply(res, next);
    } catch (error) {
      send(res, 500, {}, apiError("api_error", String(error)));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the double has no port");
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    async script(name, responses) {
      const res = await fetch(`${url}/_double/${name}/script`, {
        method: "POST",
        body: JSON.stringify(responses),
      });
      if (res.status !== 204) throw new Error(`the double refused the script: ${res.status}`);
    },
    async received(name) {
      return (await (await fetch(`${url}/_double/${name}/requests`)).json()) as RecordedRequest[];
    },
    close: () =>
      new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

/** What the real API would refuse in this request, or null. */
export function wireProblem(req: IncomingMessage, body: unknown): string | null {
  if (!req.headers["x-api-key"]) return "missing x-api-key header";
  if (!req.headers["anthropic-version"]) return "missing anthropic-version header";
  if (typeof body !== "object" || body === null) return "body must be an object";
  const b = body as { model?: unknown; max_tokens?: unknown; tools?: unknown; messages?: unknown };
  if (typeof b.model !== "string" || typeof b.max_tokens !== "number")
    return "model and max_tokens are required";
  if (!Array.isArray(b.tools)) return "tools must be a list";
  for (const tool of b.tools as {
    name?: unknown;
    description?: unknown;
    input_schema?: { type?: unknown };
  }[]) {
    if (typeof tool.name !== "string" || typeof tool.description !== "string")
      return "each tool needs a name and a description";
    if (tool.input_schema?.type !== "object")
      return `tools.${tool.name}.input_schema must be a JSON schema of type object`;
  }
  if (!Array.isArray(b.messages) || b.messages.length === 0)
    return "messages must be a non-empty list";
  const messages = b.messages as { role: string; content: unknown }[];
  let owed: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== (i % 2 === 0 ? "user" : "assistant"))
      return `messages.${i}: roles must alternate, starting with user`;
    const blocks =
      typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : (m.content as { type: string; id?: string; tool_use_id?: string; text?: string }[]);
    if (!Array.isArray(blocks) || blocks.length === 0)
      return `messages.${i}: content must not be empty`;
    if (m.role === "user") {
      const results = blocks.filter((x) => x.type === "tool_result").map((x) => x.tool_use_id);
      const leading = blocks.slice(0, results.length).every((x) => x.type === "tool_result");
      if (!leading) return `messages.${i}: tool_result blocks must come first`;
      for (const id of owed)
        if (!results.includes(id))
          return `messages.${i}: tool_use ${id} has no tool_result right after it`;
      for (const id of results)
        if (!owed.includes(id ?? ""))
          return `messages.${i}: tool_result for unknown tool_use ${id}`;
      owed = [];
    } else {
      owed = blocks.filter((x) => x.type === "tool_use").map((x) => x.id ?? "");
    }
    for (const x of blocks)
      if (x.type === "text" && (x.text ?? "").trim() === "")
        return `messages.${i}: text blocks must be non-empty`;
  }
  if (messages.at(-1)?.role !== "user") return "the last message must be a user message";
  return null;
}

function apiError(type: string, message: string) {
  return { type: "error", error: { type, message } };
}

function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: unknown,
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body === null ? "" : JSON.stringify(body));
}

function reply(res: ServerResponse, next: ScriptedResponse): void {
  if (next.raw === undefined) {
    send(res, next.status, next.headers ?? {}, next.body);
    return;
  }
  res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
  res.end(next.raw);
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
