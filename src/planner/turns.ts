import type { Event, NewEvent, ToolResultBlock } from "../protocol/index.ts";
import { isHumanTurn, toolResults } from "./conversation.ts";
import type { ModelTurn } from "./models/types.ts";

/**
 * Pure facts about turns, read off the event log.
 *
 * A *turn* runs from a piece of user input to the point where the session stops to wait: user
 * input is a human message or the answer to a wait the engine opened (a question answered, a
 * plan decided, the AFK timeout answering). Two counts, each with one meaning:
 * - `num_turns` of every result event: the model calls of the whole session so far
 *   ({@link modelTurns}, docs/PROTOCOL.md "Event");
 * - the max-turns limit: the model calls since the newest user input
 *   ({@link modelCallsSinceInput}): "this many calls in a row without hearing from the user".
 */

/**
 * Model calls in the session so far: the assistant events of the log.
 *
 * @example
 * modelTurns(events) // 3 after three replies, whatever the user said in between
 */
export function modelTurns(events: readonly Event[]): number {
  return events.reduce((n, e) => (e.type === "assistant" ? n + 1 : n), 0);
}

/**
 * Model calls since the newest user input: a human message, or the tool result of a call the
 * engine opened a wait for.
 *
 * @example
 * modelCallsSinceInput(state.events, state.waitedCalls) // 3
 */
export function modelCallsSinceInput(
  events: readonly Event[],
  waitedCalls: ReadonlySet<string>,
): number {
  let calls = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isHumanTurn(e) || toolResults(e).some((r) => waitedCalls.has(r.tool_use_id))) break;
    if (e.type === "assistant") calls++;
  }
  return calls;
}

/**
 * The newest user or assistant event (results and system notices do not count).
 *
 * @example
 * lastConversational(events)?.type // "assistant"
 */
export function lastConversational(events: readonly Event[]): Event | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "user" || e.type === "assistant") return e;
  }
  return undefined;
}

/**
 * Whether a `result` event follows the newest assistant event (the turn's end is recorded).
 *
 * @example
 * turnEndRecorded(events) // false right after a reply
 */
export function turnEndRecorded(events: readonly Event[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "result") return true;
    if (e.type === "assistant") return false;
  }
  return true;
}

/** The `result/success` event that ends a turn (not the session). */
export function turnSuccess(numTurns: number): NewEvent {
  return { type: "result", subtype: "success", is_error: false, num_turns: numTurns };
}

/**
 * The `user` event that carries one tool result; a subagent's carries its Task's id.
 *
 * @example
 * toolResultEvent(block, "toolu_task").parent_tool_use_id // "toolu_task"
 */
export function toolResultEvent(block: ToolResultBlock, taskId: string | null = null): NewEvent {
  return {
    type: "user",
    message: { role: "user", content: [block] },
    ...(taskId !== null && { parent_tool_use_id: taskId }),
  };
}

/**
 * The `assistant` event that stores one model reply (its content already normalised); a
 * subagent's carries its Task's id.
 *
 * @example
 * assistantEvent(turn, content, "toolu_task").parent_tool_use_id // "toolu_task"
 */
export function assistantEvent(
  turn: ModelTurn,
  content: ModelTurn["content"],
  taskId: string | null = null,
): NewEvent {
  return {
    type: "assistant",
    message: {
      role: "assistant",
      content,
      usage: turn.usage,
      ...(turn.model && { model: turn.model }),
    },
    ...(taskId !== null && { parent_tool_use_id: taskId }),
  };
}
