import { z } from "zod";
import {
  type BlobsReceipt,
  BlobsReceiptSchema,
  type CreateSession,
  type Decision,
  type FeedPage,
  FeedPageSchema,
  type Message,
  MissingBlobsSchema,
  newServerChallenge,
  type PlanFile,
  PlanFileSchema,
  SERVER_CHALLENGE_HEADER,
  type Session,
  type SessionList,
  SessionListSchema,
  SessionSchema,
  type SnapshotReceipt,
  SnapshotReceiptSchema,
  serverProof,
} from "../../src/protocol/index.ts";
import { formatDuration } from "../duration.ts";
import { abortAfter } from "./abort-after.ts";
import { errorFrom, parseBody } from "./answer.ts";
import { fetchOnLiveConnection } from "./connection.ts";
import { ApiError } from "./error.ts";
import { readBodyAtMost } from "./response-body.ts";

/**
 * A small typed client for every planport HTTP route (docs/PROTOCOL.md "HTTP API"). Answers are
 * zod-validated (http/answer.ts): a server that answers something else is reported, never
 * trusted. Every call ends within its time limit, headers and body included, and reads at most
 * a bounded number of bytes. Failures are {@link ApiError}s; http/error.ts says which are worth
 * retrying.
 */

export { ApiError, isTransient, withRetry } from "./error.ts";

/** Most calls are small JSON; a stuck connection must not hang a poll tick forever. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Snapshot uploads can be tens of megabytes over a slow uplink. */
const UPLOAD_TIMEOUT_MS = 300_000;
const HEALTHZ_TIMEOUT_MS = 2_000;
const MIB = 1024 * 1024;
/**
 * The largest JSON answer read. A full events page (≤ 100 events of ≤ 200,000-character plans
 * or 100,000-character reads) stays far below it; more is a broken or hostile server.
 */
export const MAX_JSON_RESPONSE_BYTES = 32 * MIB;
/** The diff of a remote execution may rewrite a large part of a ≤ 100 MiB snapshot. */
export const MAX_CHANGES_RESPONSE_BYTES = 128 * MIB;
/** An error body only needs its code and sentence; a longer one is described by its status. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Per-call limits: a signal of the caller's (a deadline) and the longest the call may take. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Default {@link REQUEST_TIMEOUT_MS}; covers the headers and the whole body. */
  timeoutMs?: number;
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
 * What the poller reads of a session. `phase` is planport's; a compatible server may send only
 * `status`, and the poller then reads that.
 */
const SessionStateSchema = SessionSchema.pick({ status: true, phase: true }).partial({
  phase: true,
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/**
 * @example
 * const api = createApi({ server: "http://127.0.0.1:8787", token: "secret1" });
 * const session = await api.getSession("ses_…");
 */
export function createApi(opts: ApiOptions) {
  const base = normalizeServer(opts.server);
  const doFetch = opts.fetch ?? fetch;

  interface SendInit extends CallOptions {
    body?: BodyInit;
    contentType?: string;
    /** The most bytes of answer body read (default {@link MAX_JSON_RESPONSE_BYTES}). */
    maxBytes?: number;
    /**
     * Sending it twice has the effect of sending it once (a content-addressed upload, an
     * archive): it is sent again at once when its connection closed before any answer
     * (http/connection.ts). Not the polls (the poller counts a failed poll and tries again at
     * its next tick) nor a creation or a decision (a first attempt may have landed).
     */
    repeatable?: boolean;
  }

  /**
   * One request, its answer read whole (within `maxBytes`) under one time limit that is
   * cleared when the body is in: a server that sends headers and then trickles cannot hold a
   * call longer than its timeout. The limit's signal (the timer, the caller's signal, the
   * API's) ends the fetch and every read of the body (response-body.ts): an aborted call
   * always settles, at once (docs/DESIGN.md "The client's requests").
   */
  async function send(
    method: string,
    path: string,
    init: SendInit = {},
  ): Promise<{ status: number; body: Uint8Array }> {
    const headers: Record<string, string> = { authorization: `Bearer ${opts.token}` };
    if (init.contentType) headers["content-type"] = init.contentType;
    const timeoutMs = init.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const limit = abortAfter(timeoutMs, [opts.signal, init.signal]);
    const what = `${method} ${path}`;
    try {
      const res = await fetchOnLiveConnection(
        () => doFetch(`${base}${path}`, { method, headers, body: init.body, signal: limit.signal }),
        limit.signal,
        init.repeatable ?? false,
      );
      if (!res.ok && !(method === "HEAD" && res.status === 404)) {
        throw errorFrom(res, await readBodyAtMost(res, MAX_ERROR_BODY_BYTES, limit.signal));
      }
      const maxBytes = init.maxBytes ?? MAX_JSON_RESPONSE_BYTES;
      const body = await readBodyAtMost(res, maxBytes, limit.signal);
      if (body === null) {
        throw new ApiError(
          res.status,
          "response_too_large",
          `${what} answered more than ${maxBytes / MIB} MiB; planport stopped reading there. Is ${base} a planport worker?`,
        );
      }
      return { status: res.status, body };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if ((opts.signal?.aborted || init.signal?.aborted) && err instanceof Error) throw err;
      if (limit.timedOut()) {
        throw new ApiError(
          0,
          "request_timeout",
          `${what} to ${base} did not complete within ${formatDuration(Math.ceil(timeoutMs))}`,
          { cause: err },
        );
      }
      throw new ApiError(0, "network_error", `cannot reach ${base}: ${describeNetworkError(err)}`, {
        cause: err,
      });
    } finally {
      limit.clear();
    }
  }

  async function json<S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    body?: unknown,
    call: CallOptions & { repeatable?: boolean } = {},
  ): Promise<z.infer<S>> {
    const res = await send(method, path, {
      ...call,
      body: body === undefined ? undefined : JSON.stringify(body),
      contentType: body === undefined ? undefined : "application/json",
    });
    return parseBody(res, schema, `${method} ${path}`);
  }

  const session = (id: string) => `/v1/sessions/${encodeURIComponent(id)}`;

  /**
   * What is wrong with the server, asked at `/v1/healthz` within `timeoutMs`; null when it
   * answers as a planport worker does (200 `{"ok": true}`). Never throws.
   *
   * @example
   * await api.health(5_000) // → null, or "no answer within 5s", "connect ECONNREFUSED …"
   */
  async function health(timeoutMs: number, signal?: AbortSignal): Promise<string | null> {
    const limit = abortAfter(timeoutMs, [opts.signal, signal]);
    try {
      const res = await fetchOnLiveConnection(
        () => doFetch(`${base}/v1/healthz`, { signal: limit.signal }),
        limit.signal,
        true,
      );
      const body = await readBodyAtMost(res, MAX_ERROR_BODY_BYTES, limit.signal);
      if (res.ok && body !== null && answersOk(body)) return null;
      return `its /v1/healthz answered ${res.status} without planport's {"ok": true}: is it a planport worker?`;
    } catch (err) {
      if (limit.timedOut()) return `no answer within ${formatDuration(timeoutMs)}`;
      return describeNetworkError(err);
    } finally {
      limit.clear();
    }
  }

  return {
    server: base,

    /** Whether the server answers `/v1/healthz` within 2 s (never throws). */
    async healthz(signal?: AbortSignal): Promise<boolean> {
      return (await health(HEALTHZ_TIMEOUT_MS, signal)) === null;
    },

    health,

    /**
     * Whether the server holds this API's token, asked before the token is ever sent: a
     * challenge to `/v1/healthz`, answered with HMAC proofs only a holder of the token can
     * make (src/protocol/server-proof.ts). Never throws.
     *
     * @example
     * await api.proveServer(5_000) // → { kind: "proved" }, or why not: unreachable,
     * //   not_planport (no proofs), not_holding_token (proofs, none of ours)
     */
    async proveServer(timeoutMs: number, signal?: AbortSignal): Promise<ServerProofResult> {
      const challenge = newServerChallenge();
      const limit = abortAfter(timeoutMs, [opts.signal, signal]);
      try {
        const res = await fetchOnLiveConnection(
          () =>
            doFetch(`${base}/v1/healthz`, {
              headers: { [SERVER_CHALLENGE_HEADER]: challenge },
              redirect: "error",
              signal: limit.signal,
            }),
          limit.signal,
          true,
        );
        const body = await readBodyAtMost(res, MAX_ERROR_BODY_BYTES, limit.signal);
        const answer = ProofAnswerSchema.safeParse(body === null ? null : safeJsonBody(body));
        if (!res.ok || !answer.success) {
          return {
            kind: "not_planport",
            detail: `its /v1/healthz answered ${res.status} without planport's {"ok": true, "proofs": […]}: is it a planport worker (of this version)?`,
          };
        }
        const expected = await serverProof(opts.token, challenge);
        return answer.data.proofs.includes(expected)
          ? { kind: "proved" }
          : { kind: "not_holding_token" };
      } catch (err) {
        if (limit.timedOut()) {
          return { kind: "unreachable", detail: `no answer within ${formatDuration(timeoutMs)}` };
        }
        return { kind: "unreachable", detail: describeNetworkError(err) };
      } finally {
        limit.clear();
      }
    },

    async snapshotExists(id: string): Promise<boolean> {
      const res = await send("HEAD", `/v1/snapshots/${encodeURIComponent(id)}`, {
        repeatable: true,
      });
      return res.status === 200;
    },

    /** `POST /v1/blobs/missing`: which of `blobs` (at most 20,000) the server lacks. */
    async missingBlobs(blobs: string[], call?: CallOptions): Promise<string[]> {
      return (
        await json(
          MissingBlobsSchema,
          "POST",
          "/v1/blobs/missing",
          { blobs },
          { ...call, repeatable: true },
        )
      ).missing;
    },

    /** `POST /v1/blobs`: a tar.gz of blobs, each entry named by its blob id. */
    async uploadBlobs(bytes: Uint8Array, call?: CallOptions): Promise<BlobsReceipt> {
      const res = await send("POST", "/v1/blobs", {
        repeatable: true,
        ...call,
        body: arrayBufferBacked(bytes),
        contentType: "application/gzip",
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      return parseBody(res, BlobsReceiptSchema, "POST /v1/blobs");
    },

    /**
     * `POST /v1/snapshots/manifest`: commits a tree (gzip-compressed JSON, sent as
     * application/gzip). A 409
     * `blobs_missing` throws an ApiError whose `missing` lists the blobs to send.
     */
    async commitManifest(gzippedJson: Uint8Array, call?: CallOptions): Promise<SnapshotReceipt> {
      const res = await send("POST", "/v1/snapshots/manifest", {
        repeatable: true,
        ...call,
        body: arrayBufferBacked(gzippedJson),
        contentType: "application/gzip",
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      return parseBody(res, SnapshotReceiptSchema, "POST /v1/snapshots/manifest");
    },

    async uploadSnapshot(bytes: Uint8Array): Promise<SnapshotReceipt> {
      const res = await send("POST", "/v1/snapshots", {
        repeatable: true,
        body: arrayBufferBacked(bytes),
        contentType: "application/gzip",
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      return parseBody(res, SnapshotReceiptSchema, "POST /v1/snapshots");
    },

    /**
     * `POST /v1/sessions`. Every field of {@link CreateSession} goes as given: `seed_plan` (a
     * draft to refine) becomes the session's plan revision 1.
     */
    createSession(body: CreateSession & { script?: unknown }): Promise<Session> {
      return json(SessionSchema, "POST", "/v1/sessions", body);
    },

    /** `GET /v1/sessions`; `awaiting: "me"`: the sessions waiting for the caller's approval. */
    listSessions(
      q: { limit?: number; before?: string; awaiting?: "me" } = {},
      call?: CallOptions,
    ): Promise<SessionList> {
      const params = new URLSearchParams();
      if (q.limit !== undefined) params.set("limit", String(q.limit));
      if (q.before !== undefined) params.set("before", q.before);
      if (q.awaiting !== undefined) params.set("awaiting", q.awaiting);
      const qs = params.size > 0 ? `?${params}` : "";
      return json(SessionListSchema, "GET", `/v1/sessions${qs}`, undefined, call);
    },

    getSession(id: string, call?: CallOptions): Promise<Session> {
      return json(SessionSchema, "GET", session(id), undefined, call);
    },

    /** The same route as `getSession`, read only for what the poller needs. */
    sessionState(id: string, call?: CallOptions): Promise<SessionState> {
      return json(SessionStateSchema, "GET", session(id), undefined, call);
    },

    events(
      id: string,
      q: { afterId?: string | null; limit?: number },
      call?: CallOptions,
    ): Promise<FeedPage> {
      const params = new URLSearchParams();
      if (q.afterId) params.set("after_id", q.afterId);
      if (q.limit !== undefined) params.set("limit", String(q.limit));
      const qs = params.size > 0 ? `?${params}` : "";
      return json(FeedPageSchema, "GET", `${session(id)}/events${qs}`, undefined, call);
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

    /** Archiving is idempotent: sent again when its connection closed before any answer. */
    archive(id: string, call?: CallOptions): Promise<Session> {
      return json(SessionSchema, "POST", `${session(id)}/archive`, undefined, {
        ...call,
        repeatable: true,
      });
    },

    /** The plan file as it stands, or one stored `revision` of it. */
    plan(id: string, call?: CallOptions & { revision?: number }): Promise<PlanFile> {
      const query = call?.revision === undefined ? "" : `?revision=${call.revision}`;
      return json(PlanFileSchema, "GET", `${session(id)}/plan${query}`, undefined, call);
    },

    /** The unified diff of remote execution; empty when nothing changed. */
    async changes(id: string, call?: CallOptions): Promise<string> {
      const res = await send("GET", `${session(id)}/changes`, {
        ...call,
        maxBytes: MAX_CHANGES_RESPONSE_BYTES,
      });
      return new TextDecoder().decode(res.body);
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

/**
 * What a server said to a challenge (`proveServer`): it holds the token; it is not there; it is
 * not a planport worker (of this version); or it is one, but does not hold the token (a wrong
 * token, or another user's worker on the port).
 */
export type ServerProofResult =
  | { kind: "proved" }
  | { kind: "unreachable"; detail: string }
  | { kind: "not_planport"; detail: string }
  | { kind: "not_holding_token" };

/** A healthz answer to a challenge: at most one proof per token a server could hold. */
const ProofAnswerSchema = z.object({
  ok: z.literal(true),
  proofs: z.array(z.string().max(128)).max(1_000),
});

function safeJsonBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    return null;
  }
}

/** A healthz body that says `{"ok": true}`. */
function answersOk(body: Uint8Array): boolean {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof value === "object" && value !== null && (value as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message) return cause.message;
  return err.message;
}
