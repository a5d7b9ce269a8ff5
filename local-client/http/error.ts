import { setTimeout as delay } from "node:timers/promises";
import pRetry from "p-retry";
import { retryWait } from "./retry-after.ts";

/**
 * What a failed planport call says (status, code, sentence, the server's Retry-After), and the
 * one place that decides which failures are worth retrying.
 */

/**
 * A failed call: HTTP status (0 = never answered), the server's error code, a readable sentence,
 * and how long the server asked us to wait before trying again (`Retry-After`), if it did.
 */
export class ApiError extends Error {
  readonly retryAfterMs: number | undefined;
  /** `blobs_missing`: the blob ids the server lacks (docs/PROTOCOL.md "Incremental snapshots"). */
  readonly missing: string[] | undefined;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options: { retryAfterMs?: number; cause?: unknown; missing?: string[] } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "ApiError";
    this.retryAfterMs = options.retryAfterMs;
    this.missing = options.missing;
  }
}

/**
 * Network errors, timeouts, 5xx and 429 may go away on their own (a deploy, a restart, rate
 * limiting); everything else (401, 403, 404, 4xx, a malformed or oversized answer) will answer
 * the same next time.
 *
 * @example
 * if (isTransient(err)) failures += 1; else throw err;
 */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.code === "response_too_large" || err.code === "invalid_server") return false;
  return err.status === 0 || err.status === 429 || err.status >= 500;
}

/**
 * Retries an idempotent call on transient failures with backoff (p-retry); anything else is
 * thrown at once. A `Retry-After` the server sent is waited out first (at most 60 s): retrying
 * sooner would only be refused again. Never wrap a call that creates something (a session) in
 * this.
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
    onFailedAttempt: async ({ error, retriesLeft }) => {
      if (retriesLeft === 0 || !isTransient(error) || !(error instanceof ApiError)) return;
      const wait = retryWait(error.retryAfterMs, 0);
      if (wait > 0) await delay(wait, undefined, { signal });
    },
  });
}
