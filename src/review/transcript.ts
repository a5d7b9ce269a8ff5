import {
  type DecisionKind,
  type Event,
  type EventAnswers,
  type PlanDecisionRecord,
  type ToolResultBlock,
  toolResultText,
} from "../protocol/index.ts";
import {
  cut,
  DETAIL_MAX_CHARS,
  firstLine,
  summariseToolCall,
  summariseToolResult,
} from "./tool-summary.ts";

/**
 * The session's event log as a readable transcript: what the model said, what it looked at
 * ("Grep 'session' → 4 files"), what was refused, what the user answered and decided. Pure:
 * events and decision records in, entries out; the page renders the entries as escaped text.
 * Verdicts and refusals come from the events' structured fields (`decision`,
 * `permission_denied`) and the feedback from the decision records, never from the prose the
 * model reads.
 */

export type EntryTone = "plain" | "denied" | "error" | "decision";

export interface TranscriptEntry {
  /** Unique within the transcript (event id, plus the block index for multi-block events). */
  key: string;
  at: string;
  kind: "assistant" | "tool" | "user" | "system" | "result";
  /** The main line: the text said, or the summarised tool call with its outcome. */
  text: string;
  /** A second line: why a call was refused, the feedback sent, an ending's message. */
  detail?: string;
  tone: EntryTone;
}

/** Assistant and user texts are cut to this many characters. */
const TEXT_MAX_CHARS = 20_000;

/** A tool result with what the server stated about it as data. */
interface ResultFacts {
  block: ToolResultBlock;
  /** The permission check refused the call. */
  denied: boolean;
  /** The verdict on an ExitPlanMode, and its record. */
  decision?: { kind: DecisionKind; record?: PlanDecisionRecord };
  /** The answers to an AskUserQuestion, as the server recorded them. */
  answers?: EventAnswers;
}

/**
 * Builds the transcript from the event log (oldest first) and the session's decision records.
 *
 * @example
 * transcriptEntries(events, decisions).map((e) => e.text)
 * // ["Session started · planner offline · plan mode", "Grep 'session' → 4 files", …]
 */
export function transcriptEntries(
  events: readonly Event[],
  decisions: readonly PlanDecisionRecord[] = [],
): TranscriptEntry[] {
  const records = new Map(decisions.map((d) => [d.tool_use_id, d]));
  const results = new Map<string, ResultFacts>();
  const calls = new Set<string>();
  for (const event of events) {
    if (event.type === "user" && Array.isArray(event.message.content)) {
      for (const block of event.message.content) {
        if (block.type !== "tool_result") continue;
        const verdict = event.decision?.tool_use_id === block.tool_use_id ? event.decision : null;
        results.set(block.tool_use_id, {
          block,
          denied: event.permission_denied === true,
          ...(event.answers?.tool_use_id === block.tool_use_id && { answers: event.answers }),
          ...(verdict && {
            decision: { kind: verdict.kind, record: records.get(block.tool_use_id) },
          }),
        });
      }
    }
    if (event.type === "assistant") {
      for (const block of event.message.content) if (block.type === "tool_use") calls.add(block.id);
    }
  }

  const entries: TranscriptEntry[] = [];
  for (const event of events) {
    const base = { at: event.created_at };
    switch (event.type) {
      case "system":
        entries.push({
          ...base,
          key: event.id,
          kind: "system",
          text: systemText(event),
          tone: "plain",
        });
        break;
      case "assistant":
        event.message.content.forEach((block, i) => {
          const key = `${event.id}:${i}`;
          if (block.type === "text") {
            if (block.text.trim() === "") return;
            entries.push({
              ...base,
              key,
              kind: "assistant",
              text: cut(block.text, TEXT_MAX_CHARS),
              tone: "plain",
            });
          } else {
            entries.push({
              ...base,
              key,
              ...toolEntry(block.name, block.input, results.get(block.id)),
            });
          }
        });
        break;
      case "user": {
        const content = event.message.content;
        if (typeof content === "string") {
          entries.push({
            ...base,
            key: event.id,
            kind: "user",
            text: cut(content, TEXT_MAX_CHARS),
            tone: "plain",
          });
          break;
        }
        content.forEach((block, i) => {
          const key = `${event.id}:${i}`;
          if (block.type === "text") {
            entries.push({
              ...base,
              key,
              kind: "user",
              text: cut(block.text, TEXT_MAX_CHARS),
              tone: "plain",
            });
          } else if (!calls.has(block.tool_use_id)) {
            // Its call is not in this window of the log: show the result on its own.
            entries.push({
              ...base,
              key,
              kind: "tool",
              text: `Tool result: ${firstLine(toolResultText(block.content))}`,
              tone: block.is_error ? "error" : "plain",
            });
          }
        });
        break;
      }
      case "result":
        if (event.subtype === "success") break;
        entries.push({
          ...base,
          key: event.id,
          kind: "result",
          text:
            event.subtype === "archived" ? "Session archived" : `Session ended: ${event.subtype}`,
          detail: event.message,
          tone: event.subtype === "archived" ? "plain" : "error",
        });
        break;
    }
  }
  return entries;
}

function systemText(event: Extract<Event, { type: "system" }>): string {
  if (event.subtype === "init" && "planner" in event && typeof event.planner === "string") {
    const mode = typeof event.permission_mode === "string" ? event.permission_mode : "";
    return `Session started · planner ${event.planner}${mode ? ` · ${mode} mode` : ""}`;
  }
  const message = "message" in event && typeof event.message === "string" ? event.message : "";
  return message || `System: ${event.subtype}`;
}

type ToolEntry = Pick<TranscriptEntry, "kind" | "text" | "detail" | "tone">;

function toolEntry(
  name: string,
  input: Record<string, unknown>,
  result: ResultFacts | undefined,
): ToolEntry {
  const call = summariseToolCall(name, input);
  if (!result) {
    const waiting =
      name === "AskUserQuestion"
        ? "waiting for your answer"
        : name === "ExitPlanMode"
          ? "waiting for your review"
          : "running…";
    return { kind: "tool", text: `${call} → ${waiting}`, tone: "plain" };
  }
  const text = toolResultText(result.block.content);
  if (result.decision) return decisionEntry(call, result.decision);
  if (result.block.is_error) {
    const denied = result.denied;
    return {
      kind: "tool",
      text: `${call} → ${denied ? "denied" : "failed"}`,
      detail: cut(text.trim(), DETAIL_MAX_CHARS),
      tone: denied ? "denied" : "error",
    };
  }
  const outcome = result.answers ? answersSummary(result.answers) : summariseToolResult(name, text);
  return { kind: "tool", text: outcome ? `${call} → ${outcome}` : call, tone: "plain" };
}

function decisionEntry(
  call: string,
  decision: { kind: DecisionKind; record?: PlanDecisionRecord },
): ToolEntry {
  switch (decision.kind) {
    case "teleport":
      return { kind: "tool", text: `${call} → sent to your terminal`, tone: "decision" };
    case "approve":
      return {
        kind: "tool",
        text: `${call} → ${decision.record?.plan_edited ? "approved (edited by you)" : "approved"}`,
        tone: "decision",
      };
    case "reject": {
      const feedback = decision.record ? reviewerText(decision.record) : "";
      return {
        kind: "tool",
        text: `${call} → not approved, keep planning`,
        ...(feedback !== "" && { detail: cut(feedback, DETAIL_MAX_CHARS) }),
        tone: "decision",
      };
    }
  }
}

/** What the reviewer sent with a rejection: the feedback, then each comment under its quote. */
function reviewerText(record: PlanDecisionRecord): string {
  const comments = record.comments.map((c) => `> ${c.quote.trim()}\n${c.text.trim()}`);
  return [(record.feedback ?? "").trim(), ...comments].filter((t) => t !== "").join("\n\n");
}

/** `you answered "Which DB?"="Postgres"`, or what the AFK timeout sent for an absent user. */
function answersSummary(record: EventAnswers): string {
  const pairs = Object.entries(record.answers)
    .map(([q, a]) => `${JSON.stringify(q)}=${JSON.stringify(a)}`)
    .join(", ");
  const text =
    record.by === "afk"
      ? `answered for you (you were away)${pairs ? `, with ${pairs}` : ""}`
      : `you answered ${pairs}`;
  return cut(text, DETAIL_MAX_CHARS);
}
