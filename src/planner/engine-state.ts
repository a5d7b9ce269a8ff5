import { z } from "zod";
import { err, ok, type Result } from "../protocol/index.ts";
import { EMPTY_SCHEDULE } from "./plan-mode/reminders.ts";

/**
 * What the engine remembers between steps, stored by the session through
 * `saveEngineState` in the same transactions as the events it concerns. Everything else is
 * derived from the session's records: the log, the waits (which calls were waited for) and the
 * decisions. States saved before `openedWaits` moved to the waits table still parse: unknown
 * fields are dropped.
 */
export const EngineStateSchema = z.object({
  v: z.literal(1),
  /** The task was written to the log as the first user message (once, on the first step). */
  opened: z.boolean(),
  /** The reminder schedule after the newest human turn the engine has seen. */
  schedule: z.object({
    humanTurns: z.number().int().nonnegative(),
    lastReminderTurn: z.number().int().nonnegative(),
    reminders: z.number().int().nonnegative(),
  }),
  /** Id of the newest human-turn event the schedule has counted (a watermark). */
  lastHumanEventId: z.string().nullable(),
  /** Which human turn got which reminder (kind and whether the plan existed then). */
  reminders: z.array(
    z.object({
      eventId: z.string(),
      kind: z.enum(["full", "sparse"]),
      planExists: z.boolean(),
    }),
  ),
  /**
   * How many times each tool call of the reply being worked on was started, saved before each
   * start: a call the session keeps dying in (a crash, a restart) is answered with an error
   * instead of being run forever. Absent in states saved before it existed. Kept here rather
   * than in a table of its own: only the engine reads it, it concerns the one reply being
   * worked on (older counts are dropped), and it must land in the same write as the rest of
   * the state the engine saves before a call starts.
   */
  toolAttempts: z.record(z.string(), z.number().int().positive()).default({}),
  /**
   * The same count for the tool calls of each running `Task` subagent, by the Task's id: each
   * subagent works on its own reply, concurrently with the others, so each keeps its own
   * counts (dropped when its Task is answered). Absent in states saved before subagents.
   */
  taskAttempts: z.record(z.string(), z.record(z.string(), z.number().int().positive())).default({}),
});
export type EngineState = z.infer<typeof EngineStateSchema>;

export const INITIAL_ENGINE_STATE: EngineState = {
  v: 1,
  opened: false,
  schedule: EMPTY_SCHEDULE,
  lastHumanEventId: null,
  reminders: [],
  toolAttempts: {},
  taskAttempts: {},
};

/**
 * Where a runner reads and saves the engine state. Several runners of one step (the subagents
 * of concurrent Task calls) share one cell: each change is read, made and saved synchronously
 * (SQLite writes in a Durable Object are synchronous), so no runner's save overwrites another's.
 */
export interface EngineCell {
  get(): EngineState;
  /** Replaces the state and saves it (its own transaction). */
  set(next: EngineState): void;
}

/**
 * Reads the stored state; null (first step) gives the initial state. A stored value that does
 * not parse is an error (fail closed: the engine must not forget its reminder decisions, or the
 * conversation it rebuilds would change under a cached prefix).
 *
 * @example
 * const loaded = parseEngineState(port.loadState().engineState); // { ok: true, value: state }
 */
export function parseEngineState(stored: unknown): Result<EngineState, string> {
  if (stored === null || stored === undefined) return ok(structuredClone(INITIAL_ENGINE_STATE));
  const parsed = EngineStateSchema.safeParse(stored);
  return parsed.success
    ? ok(parsed.data)
    : err("The planning engine's saved state is damaged, so the session cannot continue safely.");
}
