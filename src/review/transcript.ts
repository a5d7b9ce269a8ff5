import {
  APPROVED_PLAN_EDITED_MARKER,
  APPROVED_PLAN_MARKER,
  type Event,
  TELEPORT_SENTINEL,
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
 * events in, entries out; the page renders the entries as escaped text.
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

/**
 * Builds the transcript from the event log (oldest first).
 *
 * @example
 * transcriptEntries(events).map((e) => e.text)
 * // ["Session started · planner offline · plan mode", "Grep 'session' → 4 files", …]
 */
export function transcriptEntries(events: readonly Event[]): TranscriptEntry[] {
  const results = new Map<string, ToolResultBlock>();
  const calls = new Set<string>();
  for (const event of events) {
    if (event.type === "user" && Array.isArray(event.message.content)) {
      for (const block of event.message.content)
        if (block.type === "tool_result") results.set(block.tool_use_id, block);
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
  result: ToolResultBlock | undefined,
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
  const text = toolResultText(result.content);
  if (name === "ExitPlanMode") return decisionEntry(call, text, result.is_error === true);
  if (result.is_error) {
    // The permission layer's refusals (tool-calls.ts) start like this; other errors are failures.
    const denied = /^Permission denied/i.test(text.trim());
    return {
      kind: "tool",
      text: `${call} → ${denied ? "denied" : "failed"}`,
      detail: cut(text.trim(), DETAIL_MAX_CHARS),
      tone: denied ? "denied" : "error",
    };
  }
  const outcome = summariseToolResult(name, text);
  return { kind: "tool", text: outcome ? `${call} → ${outcome}` : call, tone: "plain" };
}

function decisionEntry(call: string, text: string, isError: boolean): ToolEntry {
  if (text.includes(TELEPORT_SENTINEL))
    return { kind: "tool", text: `${call} → sent to your terminal`, tone: "decision" };
  if (text.includes(APPROVED_PLAN_EDITED_MARKER))
    return { kind: "tool", text: `${call} → approved (edited by you)`, tone: "decision" };
  if (text.includes(APPROVED_PLAN_MARKER))
    return { kind: "tool", text: `${call} → approved`, tone: "decision" };
  if (isError) {
    const feedback =
      text.split("Feedback from the user:\n")[1] ?? text.split("Comments on passages")[1];
    return {
      kind: "tool",
      text: `${call} → not approved, keep planning`,
      detail: feedback
        ? cut(feedback.trim(), DETAIL_MAX_CHARS)
        : cut(firstLine(text), DETAIL_MAX_CHARS),
      tone: "decision",
    };
  }
  return {
    kind: "tool",
    text: `${call} → ${cut(firstLine(text), DETAIL_MAX_CHARS)}`,
    tone: "decision",
  };
}
