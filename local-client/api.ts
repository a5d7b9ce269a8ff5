import pRetry from "p-retry";
import type { z } from "zod";
import {
  type CreateSession,
  type Decision,
  ErrorBodySchema,
  type FeedPage,
  FeedPageSchema,
  type Message,
  type PlanFile,
  PlanFileSchema,
  type Session,
  type SessionList,
  SessionListSchema,
  SessionSchema,
  type SnapshotReceipt,
  SnapshotReceiptSchema,
} from "../src/protocol/index.ts";

/**
 * A small typed client for every planport HTTP route (CONTRACT "HTTP API"). Answers are
 * zod-validated: a server that answers something else is reported, never trusted. This is
 * also the one place that says which failures are worth retrying ({@link isTransient}).
 */

/** Most calls are small JSON; a stuck connection must not hang a poll tick forever. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Snapshot uploads can be tens of megabytes over a slow uplink. */
const UPLOAD_TIMEOUT_MS = 300_000;

/** A failed call: HTTP status (0 = never answered), the server's error code, a readable sentence. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * Network errors, 5xx and 429 may go away on their own (a deploy, a restart, rate limiting);
 * everything else (401, 403, 404, 4xx, a malformed answer) will answer the same next time.
 *
 * @example
 * if (isTransient(err)) failures += 1; else throw err;
 */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.status === 0 || err.status === 429 || err.status >= 500;
}

/**
 * Retries an idempotent call on transient failures with backoff (p-retry); anything else is
 * thrown at once. Never wrap a call that creates something (a session) in this.
 *
 * @example
 * const exists = await withRetry(() => api.snapshotExists(id));
 */
export function withRetry<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  return pRetry(fn, {
    retries: 3,
    minTimeout: 500,
    factor: 2,
    signal,
    shouldRetry: ({ error }) => isTransient(error),
  });
}

export interface ApiOptions {
  server: string;
  token: string;
  /** Aborts every call in flight (Ctrl-C). */
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export type Api = ReturnType<typeof createApi>;

/**
 * @example
 * const api = createApi({ server: "http://127.0.0.1:8787", token: "secret1" });
 * const session = await api.getSession("ses_…");
 */
export function createApi(opts: ApiOptions) {
  const base = normalizeServer(opts.server);
  const doFetch = opts.fetch ?? fetch;

  async function send(
    method: string,
    path: string,
    init: { body?: BodyInit; contentType?: string; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.token}` };
    if (init.contentType) headers["content-type"] = init.contentType;
    const signals = [AbortSignal.timeout(init.timeoutMs ?? REQUEST_TIMEOUT_MS)];
    if (opts.signal) signals.push(opts.signal);
    if (init.signal) signals.push(init.signal);
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, {
        method,
        headers,
        body: init.body,
        signal: AbortSignal.any(signals),
      });
    } catch (err) {
      if ((opts.signal?.aborted || init.signal?.aborted) && err instanceof Error) throw err;
      throw new ApiError(0, "network_error", `cannot reach ${base}: ${describeNetworkError(err)}`);
    }
    if (!res.ok && !(method === "HEAD" && res.status === 404)) throw await errorFrom(res);
    return res;
  }

  async function json<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<z.infer<S>> {
    const res = await send(method, path, {
      body: body === undefined ? undefined : JSON.stringify(body),
      contentType: body === undefined ? undefined : "application/json",
      signal,
    });
    return parseBody(res, schema, `${method} ${path}`);
  }

  const session = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

  return {
    server: base,

    async healthz(signal?: AbortSignal): Promise<boolean> {
      const res = await doFetch(`${base}/v1/healthz`, {
        signal: signal ?? AbortSignal.timeout(2_000),
      }).catch(() => null);
      return res?.ok === true;
    },

    async snapshotExists(id: string): Promise<boolean> {
      const res = await send("HEAD", `/v1/snapshots/${encodeURIComponent(id)}`);
      return res.status === 200;
    },

    async uploadSnapshot(bytes: Uint8Array): Promise<SnapshotReceipt> {
      const res = await send("POST", "/v1/snapshots", {
        body: arrayBufferBacked(bytes),
        contentType: "application/gzip",
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      return parseBody(res, SnapshotReceiptSchema, "POST /v1/snapshots");
    },

    createSession(body: CreateSession & { script?: unknown }): Promise<Session> {
      return json(SessionSchema, "POST", "/v1/sessions", body);
    },

    listSessions(q: { limit?: number; before?: string } = {}): Promise<SessionList> {
      const params = new URLSearchParams();
      if (q.limit !== undefined) params.set("limit", String(q.limit));
      if (q.before !== undefined) params.set("before", q.before);
      const qs = params.size > 0 ? `?${params}` : "";
      return json(SessionListSchema, "GET", `/v1/sessions${qs}`);
    },

    getSession(id: string, signal?: AbortSignal): Promise<Session> {
      return json(SessionSchema, "GET", session(id), undefined, signal);
    },

    events(
      id: string,
      q: { afterId?: string | null; limit?: number },
      signal?: AbortSignal,
    ): Promise<FeedPage> {
      const params = new URLSearchParams();
      if (q.afterId) params.set("after_id", q.afterId);
      if (q.limit !== undefined) params.set("limit", String(q.limit));
      const qs = params.size > 0 ? `?${params}` : "";
      return json(FeedPageSchema, "GET", `${session(id)}/events${qs}`, undefined, signal);
    },

    async sendMessage(id: string, message: Message): Promise<void> {
      await send("POST", `${session(id)}/messages`, {
        body: JSON.stringify(message),
        contentType: "application/json",
      });
    },

    decide(id: string, decision: Decision): Promise<Session> {
      return json(SessionSchema, "POST", `${session(id)}/decision`, decision);
    },

    archive(id: string): Promise<Session> {
      return json(SessionSchema, "POST", `${session(id)}/archive`);
    },

    plan(id: string): Promise<PlanFile> {
      return json(PlanFileSchema, "GET", `${session(id)}/plan`);
    },

    /** The unified diff of remote execution; empty when nothing changed. */
    async changes(id: string): Promise<string> {
      const res = await send("GET", `${session(id)}/changes`);
      return res.text();
    },
  };
}

/**
 * Validates and normalises a server URL (no trailing slash).
 *
 * @example
 * normalizeServer("http://127.0.0.1:8787/") // → "http://127.0.0.1:8787"
 */
export function normalizeServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new ApiError(
      0,
      "invalid_server",
      `"${server}" is not a URL; expected e.g. http://127.0.0.1:8787`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiError(0, "invalid_server", `"${server}" must start with http:// or https://`);
  }
  return url.toString().replace(/\/+$/, "");
}

/** fetch takes only ArrayBuffer-backed views; a view over shared memory is copied. */
function arrayBufferBacked(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const isPlain = (b: Uint8Array): b is Uint8Array<ArrayBuffer> => b.buffer instanceof ArrayBuffer;
  return isPlain(bytes) ? bytes : new Uint8Array(bytes);
}

async function parseBody<S extends z.ZodType>(
  res: Response,
  schema: S,
  what: string,
): Promise<z.infer<S>> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(
      res.status,
      "malformed_response",
      `${what} answered ${res.status} with a body that is not JSON`,
    );
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? ` (${issue.path.join(".") || "body"}: ${issue.message})` : "";
    throw new ApiError(
      res.status,
      "malformed_response",
      `${what} answered a body planport does not understand${where}; is the server a planport worker of a matching version?`,
    );
  }
  return parsed.data;
}

async function errorFrom(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: a proxy or a crashed worker; described below by status.
  }
  const parsed = ErrorBodySchema.safeParse(body);
  if (parsed.success) {
    return new ApiError(res.status, parsed.data.error.code, parsed.data.error.message);
  }
  const hint =
    res.status === 401
      ? "the token was refused; check --token / PLANPORT_TOKEN"
      : `the server answered ${res.status} ${res.statusText}`.trim();
  return new ApiError(res.status, `http_${res.status}`, hint);
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === "TimeoutError") return "the request timed out";
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message) return cause.message;
  return err.message;
}
