import pRetry from "p-retry";
import { ModelCallError, type ModelRequest, type ModelTurn, type Planner } from "./types.ts";

/** How hard a model call is tried before the session gives up on it. */
export interface RetryPolicy {
  /** Attempts in total (first call included). */
  attempts: number;
  /** Backoff before the first retry; doubles each time (with jitter). */
  minDelayMs: number;
  maxDelayMs: number;
  /** A server's `retry-after` is honoured up to this long (instead of the backoff). */
  maxRetryAfterMs: number;
  /** One attempt is abandoned (and counts as transient) after this long. */
  callTimeoutMs: number;
  /**
   * How a `retry-after` wait is slept (a seam for tests that check the wait without taking
   * it); it is handed the call's abort signal.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Bounded so one step stays well inside a Durable Object alarm's 15-minute wall-time limit
 * even at worst (4 × 120 s calls + 3 waits of at most 30 s: 9.5 minutes).
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 4,
  minDelayMs: 1_000,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 30_000,
  callTimeoutMs: 120_000,
};

/**
 * One model call with bounded retries: transient failures (429 honouring `retry-after`, 5xx,
 * 529/overloaded, network errors, timeouts) are retried with exponential backoff; anything
 * else fails at once. The error that escapes says how many attempts were made.
 *
 * The wait before a retry is taken in `shouldRetry`, which p-retry asks only when a retry
 * follows (after its attempts check): the last attempt fails at once, whatever its
 * `retry-after`. That wait is the server's `retry-after` when it sent one — instead of the
 * backoff, not on top of it, so p-retry's own delay is zero — else the backoff; either is cut
 * short by the request's abort signal. (`onFailedAttempt` runs before the attempts check, so a
 * wait there would delay even the final failure.)
 */
export async function callPlanner(
  planner: Planner,
  request: ModelRequest,
  policy: RetryPolicy,
): Promise<ModelTurn> {
  let attempts = 0;
  try {
    return await pRetry(
      async () => {
        attempts++;
        return attemptOnce(planner, request, policy.callTimeoutMs);
      },
      {
        retries: Math.max(0, policy.attempts - 1),
        minTimeout: 0,
        maxTimeout: 0,
        signal: request.signal,
        shouldRetry: async ({ error, retriesConsumed }) => {
          if (!(error instanceof ModelCallError && error.transient)) return false;
          const retryAfter = error.opts.retryAfterMs;
          if (retryAfter !== undefined) {
            const wait = Math.min(retryAfter, policy.maxRetryAfterMs);
            await (policy.sleep ?? sleep)(wait, request.signal);
          } else await sleep(backoffMs(retriesConsumed + 1, policy), request.signal);
          return true;
        },
      },
    );
  } catch (error) {
    const cause = error instanceof ModelCallError ? error : unexpected(planner, error);
    const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
    throw new ModelCallError(
      `The ${planner.name} planner failed after ${tries}: ${cause.message}`,
      cause.transient,
      cause.opts,
    );
  }
}

async function attemptOnce(
  planner: Planner,
  request: ModelRequest,
  timeoutMs: number,
): Promise<ModelTurn> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const onOuterAbort = () => timeout.abort();
  request.signal?.addEventListener("abort", onOuterAbort, { once: true });
  try {
    return await planner.next({ ...request, signal: timeout.signal });
  } catch (error) {
    if (timeout.signal.aborted && !request.signal?.aborted) {
      throw new ModelCallError(
        `the model did not answer within ${Math.round(timeoutMs / 1000)} seconds`,
        true,
      );
    }
    if (error instanceof ModelCallError) throw error;
    throw unexpected(planner, error);
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onOuterAbort);
  }
}

function unexpected(planner: Planner, error: unknown): ModelCallError {
  const message = error instanceof Error ? error.message : String(error);
  return new ModelCallError(`the ${planner.name} planner broke: ${message}`, false);
}

/**
 * The backoff before retry number `retry` (1 for the first): `minDelayMs`, doubling each time,
 * with jitter (× 1 to 2), at most `maxDelayMs`.
 *
 * @example
 * backoffMs(3, { minDelayMs: 1_000, maxDelayMs: 20_000 }) // 4,000 to 8,000
 */
export function backoffMs(
  retry: number,
  policy: Pick<RetryPolicy, "minDelayMs" | "maxDelayMs">,
): number {
  const jitter = 1 + Math.random();
  return Math.min(Math.round(jitter * policy.minDelayMs * 2 ** (retry - 1)), policy.maxDelayMs);
}

/**
 * Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as it aborts.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
