import {
  ENDING_RESULT_SUBTYPES,
  type Event,
  type NewEvent,
  TELEPORT_SENTINEL,
  type ToolResultBlock,
  toolResultText,
} from "../protocol/index.ts";
import { isHumanTurn, toolResults } from "./conversation.ts";

/**
 * Pure facts about turns, read off the event log.
 *
 * A *turn* runs from a piece of user input to the point where the session stops to wait: user
 * input is a human message or the answer to a wait the engine opened (a question answered, a
 * plan decided, the AFK timeout answering). `num_turns` in `result/success` and the max-turns
 * limit both count the model calls of the current turn: max turns means "this many model calls
 * in a row without hearing from the user".
 */

/**
 * True once the session must never call the model again: an ending result (error, max turns,
 * archived) was written, or the plan was teleported (the archive follows; the teleport alone
 * is already final — one execution point).
 *
 * @example
 * if (sessionOver(port.listEvents())) return { next: "idle" };
 */
export function sessionOver(events: readonly Event[]): boolean {
  return events.some(
    (e) =>
      (e.type === "result" && ENDING_RESULT_SUBTYPES.includes(e.subtype)) ||
      toolResults(e).some(
        (r) => r.is_error === true && toolResultText(r.content).includes(TELEPORT_SENTINEL),
      ),
  );
}

/**
 * Model calls since the newest user input.
 *
 * @example
 * modelCallsSinceInput(events, state.openedWaits) // 3
 */
export function modelCallsSinceInput(
  events: readonly Event[],
  openedWaits: readonly string[],
): number {
  const waits = new Set(openedWaits);
  let calls = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isHumanTurn(e) || toolResults(e).some((r) => waits.has(r.tool_use_id))) break;
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

/**
 * The `result/success` event that ends a turn (not the session).
 *
 * @example
 * port.appendEvents([turnSuccess(3)]);
 */
export function turnSuccess(numTurns: number): NewEvent {
  return { type: "result", subtype: "success", is_error: false, num_turns: numTurns };
}

/**
 * The `user` event that carries one tool result.
 *
 * @example
 * port.appendEvents([toolResultEvent(answersResult(id, answers))]);
 */
export function toolResultEvent(block: ToolResultBlock): NewEvent {
  return { type: "user", message: { role: "user", content: [block] } };
}
