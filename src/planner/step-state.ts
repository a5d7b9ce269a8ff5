import type { Event, NewEvent, PermissionMode, PlanDecisionRecord } from "../protocol/index.ts";
import type { EngineCell, EngineState } from "./engine-state.ts";
import type { RetryPolicy } from "./models/retry.ts";
import type { Planner } from "./models/types.ts";
import type { PlannerEnv, SessionPort } from "./port.ts";

/** Seams for tests and benchmarks; the session passes none. */
export interface StepOptions {
  /** Use this planner instead of the one the session names. */
  planner?: Planner;
  /** Override parts of the retry policy (tests shorten the backoff). */
  retry?: Partial<RetryPolicy>;
  signal?: AbortSignal;
}

/**
 * What one step works from: the session's state, read once when the step starts, and the log
 * kept current with what the step itself appends (its own conversation and its subagents'
 * land in the one log). Events others append meanwhile (a message, a decision) are the next
 * step's: each of them asks for one.
 */
export interface Step {
  readonly port: SessionPort;
  readonly env: PlannerEnv;
  readonly options: StepOptions;
  readonly events: Event[];
  readonly waitedCalls: ReadonlySet<string>;
  readonly decisions: readonly PlanDecisionRecord[];
  readonly mode: PermissionMode;
  engine: EngineState;
}

/** Appends to the log and to the step's copy of it; returns the events as stored. */
export function append(s: Step, events: readonly NewEvent[]): Event[] {
  const stored = s.port.appendEvents(events);
  s.events.push(...stored);
  return stored;
}

/**
 * The step's engine state as a cell: every change is saved at once, in its own transaction
 * (or the caller's, when one is open).
 */
export function engineCell(s: Step): EngineCell {
  return {
    get: () => s.engine,
    set: (next) => {
      s.engine = next;
      s.port.transaction(() => s.port.saveEngineState(next));
    },
  };
}
