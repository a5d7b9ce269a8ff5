import type {
  AssistantEvent,
  Event,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  UserEvent,
} from "../protocol/index.ts";
import type { ModelMessage } from "./models/types.ts";

/**
 * The model conversation, rebuilt from the event log. Pure and deterministic: the same log
 * (plus the same stored reminder decisions) always gives the same messages, so a restarted
 * step sends exactly what the crashed one would have, and the prefix stays cacheable.
 *
 * Rules the providers impose, applied here once:
 * - user and assistant messages alternate; consecutive user events merge into one message;
 * - the tool results answering an assistant message come first in the next user message, in
 *   the order of its tool calls — user text that arrived while a question or plan review was
 *   open is delivered after them;
 * - a tool call whose result is missing from an older part of the log gets an error result
 *   (never seen in practice; it keeps a damaged log from wedging the session);
 * - empty text blocks are dropped.
 */

/**
 * True for a user event that carries text a human typed (not only tool results).
 *
 * @example
 * isHumanTurn({ …, type: "user", message: { role: "user", content: "Add OAuth" } }) // true
 */
export function isHumanTurn(event: Event): event is UserEvent {
  if (event.type !== "user") return false;
  const content = event.message.content;
  if (typeof content === "string") return content.trim() !== "";
  return content.some((b) => b.type === "text" && b.text.trim() !== "");
}

/**
 * The text a human turn carries.
 *
 * @example
 * humanText(event) // "Add OAuth"
 */
export function humanText(event: UserEvent): string {
  const content = event.message.content;
  if (typeof content === "string") return content;
  return content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n");
}

/**
 * The tool results a user event carries.
 */
export function toolResults(event: Event): ToolResultBlock[] {
  if (event.type !== "user" || typeof event.message.content === "string") return [];
  return event.message.content.filter((b): b is ToolResultBlock => b.type === "tool_result");
}

/**
 * The tool calls an assistant event asked for, in order.
 *
 * @example
 * toolUses(event).map((c) => c.name) // ["Read", "ExitPlanMode"]
 */
export function toolUses(event: AssistantEvent): ToolUseBlock[] {
  return event.message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
}

/**
 * Builds the provider-neutral messages. `reminderFor(eventId)` returns the reminder text the
 * engine attached to that human turn (or null); it is appended to the turn's text. `opening`
 * (a compacted conversation's summary and reminders) starts the first user message.
 *
 * @example
 * buildConversation(events, (id) => reminders.get(id) ?? null) // [{ role: "user", content: […] }, …]
 */
export function buildConversation(
  events: readonly Event[],
  reminderFor: (eventId: string) => string | null,
  opening: readonly TextBlock[] = [],
): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let lastCalls: ToolUseBlock[] = [];
  let results = new Map<string, ToolResultBlock>();
  let texts: TextBlock[] = [...opening];
  let pendingUser = opening.length > 0;

  const flushUser = () => {
    if (!pendingUser) return;
    const answered: (TextBlock | ToolResultBlock)[] = lastCalls.map(
      (call) =>
        results.get(call.id) ?? {
          type: "tool_result",
          tool_use_id: call.id,
          content: "No result was recorded for this tool call.",
          is_error: true,
        },
    );
    const content = [...answered, ...texts];
    if (content.length > 0) messages.push({ role: "user", content });
    lastCalls = [];
    results = new Map();
    texts = [];
    pendingUser = false;
  };

  for (const event of events) {
    if (event.type === "assistant") {
      if (lastCalls.length > 0) pendingUser = true; // results owed even if none arrived
      flushUser();
      const content = event.message.content.filter(
        (b) => b.type !== "text" || b.text.trim() !== "",
      );
      messages.push({
        role: "assistant",
        content: content.length > 0 ? content : [{ type: "text", text: "(no reply)" }],
      });
      lastCalls = toolUses(event);
      continue;
    }
    if (event.type !== "user") continue;
    pendingUser = true;
    const content = event.message.content;
    if (typeof content === "string") {
      if (content.trim() !== "") texts.push({ type: "text", text: content });
    } else {
      for (const block of content) {
        if (block.type === "tool_result") {
          if (lastCalls.some((c) => c.id === block.tool_use_id))
            results.set(block.tool_use_id, block);
        } else if (block.text.trim() !== "") texts.push(block);
      }
    }
    if (isHumanTurn(event)) {
      const reminder = reminderFor(event.id);
      if (reminder !== null) texts.push({ type: "text", text: reminder });
    }
  }
  if (lastCalls.length > 0) pendingUser = true;
  flushUser();
  return messages;
}

/**
 * The tool calls of the newest assistant event that have no result yet (in call order), with
 * that event. Empty when the newest assistant event is fully answered or there is none.
 *
 * @example
 * unansweredCalls(events)?.calls.map((c) => c.id) // ["toolu_2"]
 */
export function unansweredCalls(
  events: readonly Event[],
): { event: AssistantEvent; calls: ToolUseBlock[] } | null {
  let index = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === "assistant") {
      index = i;
      break;
    }
  }
  if (index === -1) return null;
  const event = events[index] as AssistantEvent;
  const answered = new Set<string>();
  for (const later of events.slice(index + 1))
    for (const r of toolResults(later)) answered.add(r.tool_use_id);
  const calls = toolUses(event).filter((c) => !answered.has(c.id));
  return { event, calls };
}
