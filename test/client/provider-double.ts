/**
 * The shared core of the model provider TEST DOUBLES (anthropic-double.ts, openai-double.ts):
 * a Node `http` server with lanes (one per test, `/t/<lane>` in the base URL, so tests run in
 * parallel), scripted responses routed by `match`, recorded requests with their arrival and
 * answer times, held answers (`delay_ms`), and a per-lane prompt cache for simulated usage. It
 * is not a provider: the API module plugged in says what the provider would refuse and how it
 * counts cached tokens.
 *
 *   POST <url>/_double/<lane>/script    body: ScriptedResponse[]   queue responses
 *   GET  <url>/_double/<lane>/requests  → RecordedRequest[]         what was received
 *   POST <url>/t/<lane><api path>       the provider API itself
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { RecordedRequest, ScriptedResponse } from "./anthropic-double-types.ts";

/** What one provider's API looks like to the double. */
export interface DoubleApi {
  /**
   * The API path under the lane, e.g. `/v1/messages`; a pattern where the path names the model
   * (Gemini's `/v1beta/models/<model>:streamGenerateContent`).
   */
  path: string | RegExp;
  /** What the real API would refuse in this request (a sentence), or null. */
  wireProblem(req: IncomingMessage, body: unknown): string | null;
  /** An error body in the provider's shape. */
  error(type: string, message: string): unknown;
  /**
   * The usage the provider would report for `body` given the lane's cache (prefix hashes the
   * earlier requests wrote; the function adds this request's), merged into `scripted`'s body.
   */
  simulateUsage(
    cache: Set<string>,
    body: unknown,
    scripted: unknown,
  ): {
    body: unknown;
    usage: Record<string, number>;
  };
  /**
   * The scripted reply `scripted` turned into a call of the first tool `body` offers, when the
   * request lets the model call one (tools offered, `tool_choice` not none) and the reply calls
   * none; else null (see `eager_tool_use`).
   */
  eagerToolCall(body: unknown, scripted: unknown): unknown | null;
  /**
   * For a request that asks for a stream (`"stream": true`): the successful reply `body` as the
   * provider's server-sent events. Absent: the double answers every request with JSON.
   */
  streamEvents?(body: unknown): string;
  /** Whether a request asks for a stream; default: its body says `"stream": true`. */
  streamed?(url: URL, body: unknown): boolean;
}

/**
 * Answers a request no scripted response fits (in-process tests only): a reply, or null for
 * the double's "no scripted response left" error. For a conversation whose next turn depends
 * on what the client sent (an id a tool returned).
 */
export type Responder = (body: unknown) => ScriptedResponse | null;

export interface ProviderDouble {
  url: string;
  /** Queues responses on a lane over HTTP (as a test in another process would). */
  script(lane: string, responses: ScriptedResponse[]): Promise<void>;
  /** Every request the lane received so far, in order. */
  received(lane: string): Promise<RecordedRequest[]>;
  /** Answers the lane's requests that no scripted response fits (see {@link Responder}). */
  respond(lane: string, responder: Responder): void;
  close(): Promise<void>;
}

interface Lane {
  script: ScriptedResponse[];
  responder?: Responder;
  requests: RecordedRequest[];
  cache: Set<string>;
  /** Requests waiting for a script that fits them (see {@link SCRIPT_GRACE_MS}). */
  waiting: Set<() => void>;
}

/**
 * How long a request no scripted response fits waits for one before the double answers "no
 * scripted response left". A test usually scripts a session's replies after creating it (it
 * needs the session's plan path), while the worker calls the model as soon as the session
 * exists: on a busy machine that first call can come before the script. Waiting for the
 * script, not racing it, keeps the verdict independent of the machine's speed.
 */
const SCRIPT_GRACE_MS = 20_000;

/**
 * Starts a double for `api` on a free loopback port.
 *
 * @example
 * const double = await startProviderDouble(ANTHROPIC_API);
 */
export async function startProviderDouble(api: DoubleApi): Promise<ProviderDouble> {
  const lanes = new Map<string, Lane>();
  const lane = (name: string) => {
    let l = lanes.get(name);
    if (!l) {
      l = { script: [], requests: [], cache: new Set(), waiting: new Set() };
      lanes.set(name, l);
    }
    return l;
  };
  const apiPath =
    typeof api.path === "string" ? api.path.replaceAll("/", "\\/") : `(?:${api.path.source})`;
  const apiRoute = new RegExp(`^/t/([\\w-]+)${apiPath}$`);

  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://double");
      const control = /^\/_double\/([\w-]+)\/(script|requests)$/.exec(url.pathname);
      if (control) {
        const l = lane(control[1]!);
        if (control[2] === "script" && req.method === "POST") {
          l.script.push(...(JSON.parse(await readBody(req)) as ScriptedResponse[]));
          for (const wake of [...l.waiting]) wake();
          return send(res, 204, {}, null);
        }
        return send(res, 200, {}, l.requests);
      }
      const route = apiRoute.exec(url.pathname);
      if (!route || req.method !== "POST")
        return send(
          res,
          404,
          {},
          api.error("not_found_error", `no route ${req.method} ${url.pathname}`),
        );
      const l = lane(route[1]!);
      const raw = await readBody(req);
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, 400, {}, api.error("invalid_request_error", "body is not JSON"));
      }
      const recorded: RecordedRequest = {
        headers: flatHeaders(req),
        body,
        received_at: Date.now(),
        answered_at: null,
        matched: null,
      };
      l.requests.push(recorded);
      const answer = (status: number, payload: unknown) => {
        recorded.answered_at = Date.now();
        send(res, status, {}, payload);
      };
      const problem = api.wireProblem(req, body);
      if (problem) return answer(400, api.error("invalid_request_error", problem));
      const fits = () => l.script.findIndex((r) => r.match === undefined || raw.includes(r.match));
      let index = fits();
      if (index === -1 && l.responder === undefined) {
        // Wait for a script that fits, or give up after the grace (or when the caller leaves).
        await new Promise<void>((resolve) => {
          const wake = () => {
            if (fits() === -1) return;
            done();
          };
          const done = () => {
            clearTimeout(timer);
            l.waiting.delete(wake);
            res.off("close", done);
            resolve();
          };
          const timer = setTimeout(done, SCRIPT_GRACE_MS);
          l.waiting.add(wake);
          res.on("close", done);
        });
        index = fits();
      }
      const next = index === -1 ? (l.responder?.(body) ?? null) : l.script.splice(index, 1)[0]!;
      if (next === null)
        return answer(500, api.error("api_error", "the test double has no scripted response left"));
      recorded.matched = next.match ?? null;
      let reply = next;
      const eager = next.eager_tool_use ? api.eagerToolCall(body, next.body) : null;
      if (eager !== null) {
        recorded.eager_tool_call = true;
        reply = { ...next, body: eager };
      }
      if (next.simulate_usage) {
        const simulated = api.simulateUsage(l.cache, body, reply.body);
        recorded.simulated_usage = simulated.usage;
        reply = { ...next, body: simulated.body };
      }
      const streamed = api.streamed
        ? api.streamed(url, body)
        : (body as { stream?: unknown } | null)?.stream === true;
      const sendReply = () => {
        recorded.answered_at = Date.now();
        if (streamed && api.streamEvents && reply.raw === undefined && reply.status === 200) {
          res.writeHead(200, { "content-type": "text/event-stream", ...reply.headers });
          res.end(api.streamEvents(reply.body));
          return;
        }
        replyWith(res, reply);
      };
      if (next.delay_ms !== undefined && next.delay_ms > 0) {
        const timer = setTimeout(sendReply, next.delay_ms);
        res.on("close", () => clearTimeout(timer));
        return;
      }
      return sendReply();
    } catch (error) {
      send(res, 500, {}, api.error("api_error", String(error)));
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
    respond(name, responder) {
      lane(name).responder = responder;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

/** Tokens the doubles count for a text: 4 characters each, rounded up. */
export function doubleTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Running hashes of a sequence of blocks: entry p identifies the prefix of the first p + 1
 * blocks, so two requests share a cached prefix exactly when their hashes agree there.
 */
export function prefixHashes(blocks: readonly string[]): string[] {
  const hashes: string[] = [];
  let previous = "";
  for (const block of blocks) {
    previous = createHash("sha256").update(previous).update("\u0000").update(block).digest("hex");
    hashes.push(previous);
  }
  return hashes;
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

function replyWith(res: ServerResponse, next: ScriptedResponse): void {
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
