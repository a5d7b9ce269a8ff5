import type { Usage } from "../protocol/index.ts";
import type { ModelMessage, ModelRequest } from "./models/types.ts";

/**
 * The arithmetic of the context budget (DESIGN.md "Compaction"). Pure.
 *
 * A conversation may hold `budget` tokens, its request and the reply together. Before each
 * model call the request is estimated; past {@link COMPACT_AT} of the budget the older turns
 * are summarised instead. The reply gets at most {@link OUTPUT_SHARE} of the budget, so a
 * request at the threshold and its longest reply still fit in the budget exactly.
 *
 * The estimate: the newest model call's own usage measured the conversation up to that call
 * (input, cache reads and writes) and its reply (output); only what came after it — tool
 * results, messages, reminders — is guessed from its length at {@link CHARS_PER_TOKEN}. With
 * no measured call since the last compaction (the first call, the first after a compaction,
 * a planner that reports no usage), the whole request is guessed from its length.
 */

/** Compaction starts when a request would pass this share of the budget. */
export const COMPACT_AT = 0.8;
/** The most a reply may take of the budget (and never more than {@link MAX_OUTPUT_TOKENS}). */
export const OUTPUT_SHARE = 0.2;
/** Output budget of one model call on a large context. */
export const MAX_OUTPUT_TOKENS = 16_384;
/**
 * Characters per token when guessing: English prose runs near 4, code and JSON nearer 3, so
 * 3.5 errs on the side of compacting a little early rather than passing the budget.
 */
export const CHARS_PER_TOKEN = 3.5;
/** The summary a compaction asks for: at most this share of the budget, and 8 k tokens. */
export const SUMMARY_SHARE = 0.15;
export const MAX_SUMMARY_TOKENS = 8_192;
/**
 * A `Task` subagent's share of the session's budget: its own conversation may hold half of it
 * (and compacts at 80 % of that), its report at most a tenth, so the three explorers' and the
 * critique's reports together never take more than 40 % of the session's context.
 */
export const SUBAGENT_CONTEXT_SHARE = 0.5;
export const TASK_REPORT_SHARE = 0.1;

/**
 * Tokens a text of `chars` characters is guessed to take.
 *
 * @example
 * tokensOfChars(350) // 100
 */
export function tokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The request size past which a conversation is compacted.
 *
 * @example
 * compactThreshold(200_000) // 160_000
 */
export function compactThreshold(budget: number): number {
  return Math.floor(budget * COMPACT_AT);
}

/**
 * The reply's output budget under a context budget (null: no budget).
 *
 * @example
 * outputTokensFor(200_000) // 16_384
 * outputTokensFor(10_000) // 2_000
 */
export function outputTokensFor(budget: number | null): number {
  return budget === null
    ? MAX_OUTPUT_TOKENS
    : Math.min(MAX_OUTPUT_TOKENS, Math.floor(budget * OUTPUT_SHARE));
}

/**
 * The summary's output budget.
 *
 * @example
 * summaryTokensFor(10_000) // 1_500
 */
export function summaryTokensFor(budget: number): number {
  return Math.min(MAX_SUMMARY_TOKENS, Math.floor(budget * SUMMARY_SHARE));
}

/**
 * How many tokens `request` is estimated to take, from `measured` (the usage of the newest
 * model call in the conversation, whose reply is the request's last assistant message) plus
 * the length of what follows it; from its whole length without one.
 *
 * @example
 * estimateTokens(request, { input_tokens: 200, cache_read_input_tokens: 9_800, output_tokens: 300 })
 * // 10_300 + the tool results after that reply, at 3.5 characters a token
 */
export function estimateTokens(request: ModelRequest, measured: Usage | null): number {
  const lastReply = lastIndexOfRole(request.messages, "assistant");
  if (measured !== null && lastReply !== -1) {
    const known =
      measured.input_tokens +
      (measured.cache_read_input_tokens ?? 0) +
      (measured.cache_creation_input_tokens ?? 0) +
      measured.output_tokens;
    return known + tokensOfChars(messagesChars(request.messages.slice(lastReply + 1)));
  }
  return tokensOfChars(
    request.system.length + JSON.stringify(request.tools).length + messagesChars(request.messages),
  );
}

/** Characters of the messages as a provider receives them (JSON, close enough for a guess). */
export function messagesChars(messages: readonly ModelMessage[]): number {
  return messages.reduce((n, m) => n + JSON.stringify(m.content).length, 0);
}

function lastIndexOfRole(messages: readonly ModelMessage[], role: ModelMessage["role"]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === role) return i;
  return -1;
}
