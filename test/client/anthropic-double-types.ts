/**
 * The control shapes of the model provider TEST DOUBLES (anthropic-double.ts, openai-double.ts),
 * without any Node import, so tests in workerd can share them.
 */

/** One answer the double gives, per lane, to the first request it fits. */
export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  /** Sent as is instead of `body` as JSON (a malformed answer). */
  raw?: string;
  /** Holds the answer this long first (a slow or hung provider); dropped if the caller hangs up. */
  delay_ms?: number;
  /**
   * Answers only a request whose JSON body contains this text; a response without one answers
   * any request. Among the queued responses that fit, the oldest answers. Concurrent requests
   * (parallel subagents) arrive in any order: this routes each to its own script.
   */
  match?: string;
  /**
   * Replaces the body's usage by what the real provider would report for this request given
   * the lane's prompt cache (the prefixes earlier requests wrote): tokens are counted at 4
   * characters each. Anthropic: the prefix up to each `cache_control` mark is written, and a
   * later request reads the longest written prefix ending within 20 blocks before one of its
   * own marks. OpenAI: the longest prefix (tools, then messages) of any earlier request is read.
   */
  simulate_usage?: boolean;
  /**
   * A model that calls a tool whenever it may (as weaker open models often do): when the request
   * offers tools and does not forbid calling them (`tool_choice` none), a `body` that calls no
   * tool is answered as a call of the first tool offered instead. A request that offers no tool,
   * or forbids them, gets `body` as it is.
   */
  eager_tool_use?: boolean;
}

/** A request the double received. */
export interface RecordedRequest {
  headers: Record<string, string>;
  body: unknown;
  /** When the double received it (ms since the epoch): shows the backoff between retries. */
  received_at: number;
  /** When the double sent its answer; null while it is held, or when the caller hung up first. */
  answered_at: number | null;
  /** The `match` of the scripted response that answered, if it had one. */
  matched: string | null;
  /** The usage the double reported, when it simulated it. */
  simulated_usage?: Record<string, number>;
  /** The eager model called a tool instead of answering the scripted text (`eager_tool_use`). */
  eager_tool_call?: boolean;
}
