import type { StepResult } from "../planner/port.ts";
import { endSession } from "./lifecycle.ts";
import { SessionEndedError } from "./port-adapter.ts";
import { hasEnded, readRow, updateRow } from "./session-row.ts";

/**
 * How the session follows the planning engine's answer after a step (DESIGN.md "The loop"):
 * `continue` → the next step now; `wait` → nothing until the user acts, or the AFK deadline;
 * `idle` → nothing. A step asked for again while it ran (a message or a decision arrived,
 * bumping `wake_seq`) runs again whatever the engine answered, so no input is left unseen.
 */
export function followStep(
  sql: SqlStorage,
  result: StepResult,
  wakeSeqAtStart: number,
  nowMs: number,
): void {
  const row = readRow(sql);
  if (row === null || hasEnded(row)) return;
  const again = result.next === "continue" || row.wake_seq !== wakeSeqAtStart;
  updateRow(sql, {
    step_due_at: again ? nowMs : null,
    afk_due_at:
      result.next === "wait" && result.wakeAt !== undefined ? result.wakeAt : row.afk_due_at,
  });
}

/**
 * A step that threw. An engine that touched an ended session stops quietly; any other failure
 * ends the session with `error_during_execution` and the reason, instead of retrying forever.
 */
export function failedStep(
  sql: SqlStorage,
  err: unknown,
  nowMs: number,
  retentionMs: number,
): StepResult {
  if (err instanceof SessionEndedError) return { next: "idle" };
  console.error("planport: a planning step failed", err);
  const row = readRow(sql);
  if (row !== null) {
    const reason = err instanceof Error ? err.message : String(err);
    endSession(
      sql,
      row,
      "error_during_execution",
      `The planning step failed: ${reason}. The session has ended; start a new one to try again.`,
      nowMs,
      retentionMs,
    );
  }
  return { next: "idle" };
}
