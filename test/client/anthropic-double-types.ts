/**
 * The control shapes of the Anthropic Messages API TEST DOUBLE (anthropic-double.ts), without
 * any Node import, so tests in workerd can share them.
 */

/** One answer the double gives, in order, per lane. */
export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  /** Sent as is instead of `body` as JSON (a malformed answer). */
  raw?: string;
  /** Holds the answer this long first (a slow or hung provider); dropped if the caller hangs up. */
  delay_ms?: number;
}

/** A request the double received. */
export interface RecordedRequest {
  headers: Record<string, string>;
  body: unknown;
  /** When the double received it (ms since the epoch): shows the backoff between retries. */
  received_at: number;
}
