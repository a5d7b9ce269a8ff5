/**
 * The control shapes of the Anthropic Messages API TEST DOUBLE (anthropic-double.ts), without
 * any Node import, so tests in workerd can share them.
 */

/** One answer the double gives, in order, per lane. */
export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** A request the double received. */
export interface RecordedRequest {
  headers: Record<string, string>;
  body: unknown;
}
