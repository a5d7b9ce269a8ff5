import type { PlannerEnv } from "../port.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";
import { ModelCallError } from "./types.ts";

/**
 * The model-call retry policy as the server is configured (wrangler.toml vars, `--var`):
 * `PLANPORT_MODEL_TIMEOUT_MS` (one attempt), `PLANPORT_MODEL_ATTEMPTS` (first call included),
 * `PLANPORT_MODEL_BACKOFF_MS` (before the first retry; doubles each time). Unset or empty vars
 * keep {@link DEFAULT_RETRY_POLICY}. A value that is not a whole number in range is refused
 * with a {@link ModelCallError} naming the var, rather than silently replaced: a typo in the
 * configuration should be seen, not turn into a 2-minute hang.
 *
 * @example
 * retryPolicyFromEnv({ PLANPORT_MODEL_TIMEOUT_MS: "2000" }).callTimeoutMs // 2000
 */
export function retryPolicyFromEnv(env: PlannerEnv): RetryPolicy {
  const minDelayMs = setting(
    env.PLANPORT_MODEL_BACKOFF_MS,
    "PLANPORT_MODEL_BACKOFF_MS",
    DEFAULT_RETRY_POLICY.minDelayMs,
    BACKOFF_RANGE_MS,
  );
  return {
    ...DEFAULT_RETRY_POLICY,
    callTimeoutMs: setting(
      env.PLANPORT_MODEL_TIMEOUT_MS,
      "PLANPORT_MODEL_TIMEOUT_MS",
      DEFAULT_RETRY_POLICY.callTimeoutMs,
      TIMEOUT_RANGE_MS,
    ),
    attempts: setting(
      env.PLANPORT_MODEL_ATTEMPTS,
      "PLANPORT_MODEL_ATTEMPTS",
      DEFAULT_RETRY_POLICY.attempts,
      ATTEMPTS_RANGE,
    ),
    minDelayMs,
    // A shorter first backoff shortens the cap with it, so a fast test setting stays fast.
    maxDelayMs: Math.max(minDelayMs, Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, minDelayMs * 20)),
  };
}

/**
 * Bounds that keep one loop step (attempts × timeout + backoff) well inside a Durable Object
 * alarm's 15-minute wall-time limit.
 */
const TIMEOUT_RANGE_MS = { min: 100, max: 300_000 } as const;
const ATTEMPTS_RANGE = { min: 1, max: 8 } as const;
const BACKOFF_RANGE_MS = { min: 0, max: 60_000 } as const;

function setting(
  raw: string | undefined,
  name: string,
  fallback: number,
  range: { min: number; max: number },
): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw.trim());
  if (!Number.isInteger(value) || value < range.min || value > range.max) {
    throw new ModelCallError(
      `the server's ${name} is "${raw}", which is not a whole number from ${range.min} to ${range.max}; fix it in wrangler.toml (or --var) and restart the worker`,
      false,
    );
  }
  return value;
}
