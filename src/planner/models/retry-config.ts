import { cachedConfig } from "../../config.ts";
import type { PlannerEnv } from "../port.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry.ts";
import { ModelCallError } from "./types.ts";

/**
 * The model-call retry policy as the server is configured: `PLANPORT_MODEL_TIMEOUT_MS` (one
 * attempt), `PLANPORT_MODEL_ATTEMPTS` (first call included), `PLANPORT_MODEL_BACKOFF_MS`
 * (before the first retry; doubles each time), parsed by src/config.ts with its one policy. A
 * bad value is a {@link ModelCallError} naming the var, so the session ends saying what to fix.
 *
 * @example
 * retryPolicyFromEnv({ PLANPORT_MODEL_TIMEOUT_MS: "2000" }).callTimeoutMs // 2000
 */
export function retryPolicyFromEnv(env: PlannerEnv): RetryPolicy {
  const config = cachedConfig(env);
  if (!config.ok) throw new ModelCallError(config.error, false);
  const { timeoutMs, attempts, backoffMs } = config.value.model;
  return {
    ...DEFAULT_RETRY_POLICY,
    callTimeoutMs: timeoutMs,
    attempts,
    minDelayMs: backoffMs,
    // A shorter first backoff shortens the cap with it, so a fast test setting stays fast.
    maxDelayMs: Math.max(backoffMs, Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, backoffMs * 20)),
  };
}
