import {
  type AssistantEvent,
  type CompactBoundaryEvent,
  compactBoundaryOf,
  type Event,
  parentToolUseIdOf,
  type Usage,
} from "../protocol/index.ts";

/**
 * The conversations one session's log holds. Pure. The session's own conversation is every
 * event without a `parent_tool_use_id`; each `Task` subagent's is the events carrying its call's
 * id (its task as the first user event, then its replies and tool results). A conversation that
 * was compacted continues after its newest `compact_boundary`: the model sees the summary that
 * boundary carries, then only the events after it.
 */
export interface Thread {
  /** The Task call the conversation works for; null for the session's own. */
  taskId: string | null;
  /** Every event of the conversation, oldest first (boundaries included). */
  all: Event[];
  /** The newest compaction boundary, or null. */
  boundary: CompactBoundaryEvent | null;
  /** The events after the newest boundary (all of them when there is none). */
  recent: Event[];
}

/**
 * The conversation of `taskId` (null: the session's own) in the log.
 *
 * @example
 * threadOf(events, null).recent // the session's events since its last compaction
 * threadOf(events, "toolu_task").all[0] // the subagent's task, as a user event
 */
export function threadOf(events: readonly Event[], taskId: string | null): Thread {
  const all = events.filter((e) => parentToolUseIdOf(e) === taskId);
  let boundary: CompactBoundaryEvent | null = null;
  let start = 0;
  for (let i = all.length - 1; i >= 0; i--) {
    const found = compactBoundaryOf(all[i]!);
    if (found !== null) {
      boundary = found;
      start = i + 1;
      break;
    }
  }
  return { taskId, all, boundary, recent: all.slice(start) };
}

/**
 * The newest assistant event of a list, or undefined.
 *
 * @example
 * lastAssistant(thread.recent)?.message.usage // the latest call's usage
 */
export function lastAssistant(events: readonly Event[]): AssistantEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "assistant") return e;
  }
  return undefined;
}

/**
 * The usage of the newest model call since the last compaction, when the provider reported
 * one that measured its input (planners without a model report zeros).
 */
export function measuredUsage(thread: Thread): Usage | null {
  const usage = lastAssistant(thread.recent)?.message.usage;
  if (usage === undefined) return null;
  const input =
    usage.input_tokens +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0);
  return input > 0 ? usage : null;
}
