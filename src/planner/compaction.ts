import { err, type NewEvent, ok, type Result, type ToolResultBlock } from "../protocol/index.ts";
import {
  compactThreshold,
  estimateTokens,
  summaryTokensFor,
  tokensOfChars,
} from "./context-budget.ts";
import { askModel, type ModelSetup, turnCost } from "./model-calls.ts";
import type { ModelMessage, ModelRequest, ModelTurn } from "./models/types.ts";
import { COMPACT_INSTRUCTION } from "./plan-mode/compaction-prompts.ts";
import { append, type Step } from "./step-state.ts";
import { measuredUsage, type Thread } from "./threads.ts";

/**
 * Context compaction (DESIGN.md "Compaction"): before a request would pass 80 % of its
 * conversation's budget, one model call summarises the conversation so far, the summary is
 * stored on a `compact_boundary` event, and the next request starts from it (model-request.ts
 * builds that opening: the summary, the full plan-mode reminder, the plan file). Nothing is
 * lost from storage: the log keeps every event; only what the model is sent changes.
 */

/** Whether a request may go out as it is. */
export type Fit =
  | { kind: "fits" }
  /** Too large: summarise first. */
  | { kind: "compact"; estimate: number }
  /** Too large, and nothing left to summarise (no model turn since the last compaction). */
  | { kind: "overflow"; estimate: number; threshold: number };

/**
 * Decides whether `request` fits `budget` (null: no budget, always fits). A conversation with
 * no model turn since its last compaction (or ever) has nothing to summarise: the summary, the
 * reminder, the plan and the new messages themselves are too large.
 *
 * @example
 * fitOf(request, thread, 8_000) // { kind: "compact", estimate: 6_930 }
 */
export function fitOf(request: ModelRequest, thread: Thread, budget: number | null): Fit {
  if (budget === null) return { kind: "fits" };
  const estimate = estimateTokens(request, measuredUsage(thread));
  const threshold = compactThreshold(budget);
  if (estimate <= threshold) return { kind: "fits" };
  const summarisable = thread.recent.some((e) => e.type === "assistant");
  return summarisable ? { kind: "compact", estimate } : { kind: "overflow", estimate, threshold };
}

/** Summary requests sent before a conversation whose model never answers one in text stops. */
export const SUMMARY_ATTEMPTS = 2;

/**
 * Summarises the conversation `request` holds with one model call and appends the boundary
 * (with the calls' usage and cost, in one transaction). The model may not call a tool in its
 * answer, and a text-less answer is asked again once ({@link SUMMARY_ATTEMPTS}). An error
 * result is a sentence saying why no summary came; a failed model call throws as any model
 * call does.
 */
export async function compact(
  s: Step,
  setup: ModelSetup,
  thread: Thread,
  request: ModelRequest,
  budget: number,
  estimate: number,
): Promise<Result<void, string>> {
  const room = summaryRoom(estimate, budget);
  const messages = cutToolResults(withInstruction(request.messages), room.cutChars);
  if (messages === null) {
    return err(
      `even with every tool result cut short, the conversation does not fit the context budget of ${budget} tokens`,
    );
  }
  // Tools stay offered in the summary request (the cached prefix starts with them) but may not
  // be called: a tool call is a legal answer to a request offering usable tools, and weaker
  // models give one often. A reply with no text is still asked once more before giving up.
  const summaryRequest: ModelRequest = {
    ...request,
    messages,
    maxOutputTokens: room.summaryTokens,
    toolChoice: "none",
  };
  const turns: ModelTurn[] = [];
  let summary = "";
  while (summary === "" && turns.length < SUMMARY_ATTEMPTS) {
    const turn = await askModel(setup, summaryRequest);
    turns.push(turn);
    summary = textOf(turn);
  }
  if (s.port.hasEnded()) return ok(undefined);
  const boundary: NewEvent = {
    type: "system",
    subtype: "compact_boundary",
    compact_metadata: { trigger: "auto", pre_tokens: estimate },
    summary,
    ...(thread.taskId === null
      ? { plan_revision: s.port.readPlan()?.revision ?? 0 }
      : { parent_tool_use_id: thread.taskId }),
  };
  s.port.transaction(() => {
    if (summary !== "") append(s, [boundary]);
    // Every attempt was a model call the provider bills, the text-less ones included.
    for (const turn of turns) s.port.addUsage(turn.usage, turnCost(setup, turn));
  });
  return summary === ""
    ? err(
        `the model answered the summary request without any text ${SUMMARY_ATTEMPTS} times, although it was not allowed to call tools`,
      )
    : ok(undefined);
}

function textOf(turn: ModelTurn): string {
  return turn.content
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("\n\n")
    .trim();
}

/** The summary never gets less room than this (unless its share of the budget is smaller). */
export const MIN_SUMMARY_TOKENS = 1_024;
/**
 * Characters per token assumed when cutting: more than {@link CHARS_PER_TOKEN}, so that a cut
 * sized in characters frees at least the tokens it must even for text that tokenises sparsely.
 */
const CUT_CHARS_PER_TOKEN = 4.5;

/**
 * How the summary request fits the budget: the conversation as estimated (`estimate`), the
 * instruction, and the summary's output must stay within it. What does not fit comes first
 * out of the summary's room (down to {@link MIN_SUMMARY_TOKENS}), then out of the tool
 * results (`cutChars` characters of them; 0 when nothing needs cutting).
 *
 * @example
 * summaryRoom(10_300, 12_000) // { summaryTokens: 1_450, cutChars: 0 }
 */
export function summaryRoom(
  estimate: number,
  budget: number,
): { summaryTokens: number; cutChars: number } {
  const full = summaryTokensFor(budget);
  const floor = Math.min(MIN_SUMMARY_TOKENS, full);
  const excess = estimate + tokensOfChars(COMPACT_INSTRUCTION.length) + full - budget;
  if (excess <= 0) return { summaryTokens: full, cutChars: 0 };
  const given = Math.min(excess, full - floor);
  return {
    summaryTokens: full - given,
    cutChars: Math.ceil((excess - given) * CUT_CHARS_PER_TOKEN),
  };
}

/** The conversation with the summary instruction last (on the last user message). */
function withInstruction(messages: readonly ModelMessage[]): ModelMessage[] {
  const out = [...messages];
  const last = out.at(-1);
  const instruction = { type: "text" as const, text: COMPACT_INSTRUCTION };
  if (last?.role === "user") {
    out[out.length - 1] = { role: "user", content: [...last.content, instruction] };
  } else out.push({ role: "user", content: [instruction] });
  return out;
}

/** Characters a cut tool result keeps at least. */
const MIN_KEPT_CHARS = 300;
/** The note a cut adds, at most. */
const CUT_NOTE_CHARS = 80;

/**
 * The messages with `cutChars` characters taken out of their tool results — the longest cut
 * first, all to one length — or unchanged when there is nothing to cut (the provider then reads
 * them from its cache). Null when even results cut to {@link MIN_KEPT_CHARS} would not free
 * enough.
 */
function cutToolResults(messages: ModelMessage[], cutChars: number): ModelMessage[] | null {
  if (cutChars <= 0) return messages;
  const lengths = messages.flatMap((m) =>
    m.role === "user"
      ? m.content.flatMap((b) => (b.type === "tool_result" ? [resultText(b).length] : []))
      : [],
  );
  const level = cutLevel(lengths, cutChars);
  if (level === null) return null;
  return messages.map((m) =>
    m.role === "user"
      ? {
          role: "user",
          content: m.content.map((b) => (b.type === "tool_result" ? cutResult(b, level) : b)),
        }
      : m,
  );
}

/**
 * The highest length L (stepping down by a fifth) such that cutting every longer tool result
 * to L frees `cutChars` characters; null when L would fall under {@link MIN_KEPT_CHARS}.
 */
function cutLevel(lengths: readonly number[], cutChars: number): number | null {
  for (
    let level = Math.max(...lengths, 0);
    level >= MIN_KEPT_CHARS;
    level = Math.floor(level * 0.8)
  ) {
    const freed = lengths.reduce((n, len) => n + Math.max(0, len - level - CUT_NOTE_CHARS), 0);
    if (freed >= cutChars) return level;
  }
  return null;
}

function resultText(block: ToolResultBlock): string {
  return typeof block.content === "string"
    ? block.content
    : block.content.map((b) => b.text).join("");
}

function cutResult(block: ToolResultBlock, level: number): ToolResultBlock {
  const text = resultText(block);
  if (text.length <= level) return block;
  return {
    ...block,
    content: `${text.slice(0, level)}… [${text.length - level} characters left out of the summary request]`,
  };
}

/**
 * The sentence a conversation that cannot fit ends with.
 *
 * @example
 * overflowSentence({ kind: "overflow", estimate: 9_000, threshold: 6_400 }, 8_000)
 */
export function overflowSentence(fit: Extract<Fit, { kind: "overflow" }>, budget: number): string {
  return `The conversation does not fit the context budget of ${budget} tokens even after compaction: the next request would need about ${fit.estimate} tokens (the summary, the plan-mode instructions, the plan file and the messages since), more than the ${fit.threshold} a request may take`;
}
