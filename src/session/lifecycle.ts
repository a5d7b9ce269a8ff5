import { closeAnyWait } from "./decisions/waits.ts";
import { appendEvents, countTurns } from "./events/log.ts";
import { type RowPatch, type SessionRow, updateRow } from "./session-row.ts";

/**
 * Transitions of the session's life that several operations share: asking for a loop step,
 * ending with an error, archiving. Each runs inside the caller's transaction.
 */

/**
 * Asks for a loop step now. A step already scheduled keeps its time; the bumped `wake_seq`
 * tells a step that is running right now that it was asked for again (a message or a decision
 * arrived meanwhile), so it schedules another one instead of going idle. The caller then sets
 * the alarm to the earliest due time (alarm.ts).
 */
export function requestStep(sql: SqlStorage, nowMs: number): void {
  sql.exec(
    "UPDATE session SET step_due_at = coalesce(step_due_at, ?), wake_seq = wake_seq + 1",
    nowMs,
  );
}

/**
 * Archives the session: closes any wait, writes the one `result/archived` event, keeps a
 * teleport or approval outcome (else records `terminated`), stops the loop and sets the purge
 * time. Archiving an archived session changes nothing (the caller answers with its state).
 * `subtype` is the terminated outcome's: `archived` (stopped, or idle for too long), or
 * `superseded` (a sibling of its best-of-N group was chosen; groups.ts). `message`, when given,
 * says why on the `result/archived` event (the idle archive: DESIGN.md "Retention").
 */
export function archiveSession(
  sql: SqlStorage,
  row: SessionRow,
  nowMs: number,
  retentionMs: number,
  subtype: "archived" | "superseded" = "archived",
  message: string | null = null,
): void {
  if (row.archived_at !== null) return;
  closeAnyWait(sql, nowMs);
  appendEvents(
    sql,
    [
      {
        type: "result",
        subtype: "archived",
        is_error: false,
        num_turns: countTurns(sql),
        ...(message === null ? {} : { message }),
      },
    ],
    nowMs,
  );
  updateRow(sql, {
    archived_at: nowMs,
    ...terminatedUnlessDecided(row, subtype),
    step_due_at: null,
    afk_due_at: null,
    purge_due_at: row.purge_due_at ?? nowMs + retentionMs,
    updated_at: nowMs,
  });
}

/**
 * Archives a session that never ended and saw no activity for `idleMs` (DESIGN.md "Retention"):
 * exactly as a stop does (outcome `terminated/archived` unless a decision came first, purge on
 * the usual retention), with a `message` on the `result/archived` event saying why.
 */
export function archiveIdleSession(
  sql: SqlStorage,
  row: SessionRow,
  nowMs: number,
  retentionMs: number,
  idleMs: number,
): void {
  archiveSession(sql, row, nowMs, retentionMs, "archived", idleArchiveMessage(idleMs));
}

/**
 * The sentence on an idle session's `result/archived` event.
 *
 * @example idleArchiveMessage(30 * 86_400_000)
 * // "Archived after 30 days without activity (PLANPORT_IDLE_DAYS); start a new session to continue."
 */
export function idleArchiveMessage(idleMs: number): string {
  const days = Number((idleMs / MS_PER_DAY).toFixed(3));
  return `Archived after ${days} ${days === 1 ? "day" : "days"} without activity (PLANPORT_IDLE_DAYS); start a new session to continue.`;
}

const MS_PER_DAY = 86_400_000;

/**
 * Ends the session with an error result and a readable message. An approval or teleport that
 * already happened stays the outcome: it was real, and the poller ranks it above the end.
 */
export function endSession(
  sql: SqlStorage,
  row: SessionRow,
  subtype: "error_during_execution" | "error_max_turns",
  message: string,
  nowMs: number,
  retentionMs: number,
): void {
  if (row.archived_at !== null || row.ended_subtype !== null) return;
  closeAnyWait(sql, nowMs);
  appendEvents(
    sql,
    [{ type: "result", subtype, is_error: true, num_turns: countTurns(sql), message }],
    nowMs,
  );
  updateRow(sql, {
    ended_subtype: subtype,
    ...terminatedUnlessDecided(row, subtype),
    step_due_at: null,
    afk_due_at: null,
    purge_due_at: nowMs + retentionMs,
    updated_at: nowMs,
  });
}

/** The outcome an ending records: `terminated`, unless an approval or teleport came first. */
function terminatedUnlessDecided(row: SessionRow, subtype: string): RowPatch {
  return row.outcome_kind === null ? { outcome_kind: "terminated", outcome_subtype: subtype } : {};
}
