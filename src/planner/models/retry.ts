import pRetry from "p-retry";
import { ModelCallError, type ModelRequest, type ModelTurn, type Planner } from "./types.ts";

/** How hard a model call is tried before the session gives up on it. */
export interface RetryPolicy {
  /** Attempts in total (first call included). */
  attempts: number;
  /** Backoff before the first retry; doubles each time (with jitter). */
  minDelayMs: number;
  maxDelayMs: number;
  /** A server's `retry-after` is honoured up to this long. */
  maxRetryAfterMs: number;
  /** One attempt is abandoned (and counts as transient) after this long. */
  callTimeoutMs: number;
  /** How a `retry-after` wait is slept (a seam for tests that check the wait without taking it). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Bounded so one step stays well inside a Durable Object alarm's 15-minute wall-time limit
 * even at worst (4 × 120 s calls + 3 × 30 s retry-after + backoff ≈ 10 minutes).
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
 * @example
 * const turn = await callPlanner(planner, request, DEFAULT_RETRY_POLICY);
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
        minTimeout: policy.minDelayMs,
        maxTimeout: policy.maxDelayMs,
        factor: 2,
        randomize: true,
        signal: request.signal,
        shouldRetry: ({ error }) => error instanceof ModelCallError && error.transient,
        onFailedAttempt: async ({ error }) => {
          const wait = error instanceof ModelCallError ? error.opts.retryAfterMs : undefined;
          if (wait !== undefined && error instanceof ModelCallError && error.transient) {
            await (policy.sleep ?? sleep)(Math.min(wait, policy.maxRetryAfterMs));
          }
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
 * Resolves after `ms` milliseconds.
 *
 * @example
 * await sleep(250);
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
