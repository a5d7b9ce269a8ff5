import type { Outcome, SessionPhase, SessionStatus } from "../protocol/index.ts";

/**
 * Status and phase are derived from the session's state, never stored twice
 * (DESIGN.md "Status and phase"). Pure, so the table is tested as a table.
 */

export interface StatusFacts {
  archived: boolean;
  /** The ending result subtype when the session ended with an error, else null. */
  endedWith: string | null;
  /** The kind of the open wait, if any. */
  waiting: "question" | "plan" | null;
  /** A loop step is scheduled or running. */
  loopActive: boolean;
  outcome: Outcome | null;
  /** Remote execution after an approval has finished. */
  executed: boolean;
}

/**
 * @example
 * deriveStatus({ archived: false, endedWith: null, waiting: "plan", loopActive: false,
 *   outcome: null, executed: false }) // { status: "requires_action", phase: "plan_ready" }
 */
export function deriveStatus(f: StatusFacts): { status: SessionStatus; phase: SessionPhase } {
  if (f.archived) return { status: "archived", phase: "done" };
  if (f.endedWith !== null) return { status: "idle", phase: "done" };
  if (f.waiting === "question") return { status: "requires_action", phase: "needs_input" };
  if (f.waiting === "plan") return { status: "requires_action", phase: "plan_ready" };
  const approved = f.outcome?.kind === "approved";
  if (f.loopActive) return { status: "running", phase: approved ? "executing" : "running" };
  return { status: "idle", phase: f.executed ? "done" : "needs_input" };
}
