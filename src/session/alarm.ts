import type { SessionRow } from "./session-row.ts";

/**
 * The session's one alarm (DESIGN.md "The loop", "Retention", "Webhooks"). A Durable Object has
 * one alarm, and it serves five clocks: the next loop step, the AFK timeout of an open question,
 * the purge of an ended session, the next webhook delivery, and the idle archive of a session
 * that never ended. The row stores the first three due times, the outbox the fourth, and the
 * fifth follows from the row's last activity ({@link idleDueAt}); the alarm is set to the earliest.
 */

/**
 * When the alarm should next fire, or null when nothing is due ever.
 *
 * @example
 * nextAlarmAt({ step_due_at: null, afk_due_at: 50, purge_due_at: 20 }) // 20
 * nextAlarmAt({ step_due_at: null, afk_due_at: null, purge_due_at: null }, null, 90) // 90
 */
export function nextAlarmAt(
  row: Pick<SessionRow, "step_due_at" | "afk_due_at" | "purge_due_at">,
  deliveryDueAt: number | null = null,
  idleDue: number | null = null,
): number | null {
  const due = [row.step_due_at, row.afk_due_at, row.purge_due_at, deliveryDueAt, idleDue].filter(
    (t): t is number => t !== null,
  );
  return due.length === 0 ? null : Math.min(...due);
}

/** The row's fields that decide when it is idle. */
export type IdleFacts = Pick<
  SessionRow,
  "archived_at" | "ended_subtype" | "updated_at" | "terminal_polled_at" | "person_seen_at"
>;

/**
 * When a session that never ended is archived for being idle (DESIGN.md "Retention"): `idleMs`
 * after its last activity, the latest of its last change (`updated_at`: creation, an event, a
 * message, a decision, a question or plan review opening or closing), the last poll of its
 * requester's terminal, and the last request of a person who may act on it (`person_seen_at`:
 * the requester's or an approver's token, the decision link's page and its polls). Null once
 * it ended: an ended session is purged on retention, never archived again.
 *
 * @example
 * idleDueAt({ archived_at: null, ended_subtype: null, updated_at: 10, terminal_polled_at: 40, person_seen_at: 25 }, 100) // 140
 */
export function idleDueAt(row: IdleFacts, idleMs: number): number | null {
  if (row.archived_at !== null || row.ended_subtype !== null) return null;
  return Math.max(row.updated_at, row.terminal_polled_at ?? 0, row.person_seen_at ?? 0) + idleMs;
}

/**
 * Sets the alarm to the row's earliest due time, or deletes it when nothing is due. Awaited by
 * every caller: an output gate would hold the answer until the write is durable anyway, and
 * awaiting costs nothing more, but a failed write then fails the request that caused it instead
 * of surfacing as an unhandled rejection nobody answers for.
 */
export async function scheduleAlarm(
  storage: DurableObjectStorage,
  row: SessionRow | null,
  deliveryDueAt: number | null = null,
  idleMs: number | null = null,
): Promise<void> {
  const at = row === null ? null : nextAlarmAt(row, deliveryDueAt, idleOf(row, idleMs));
  if (at === null) await storage.deleteAlarm();
  else await storage.setAlarm(at);
}

/**
 * Sets the alarm again after a restart if it was lost (a crashed runtime), so nothing due is
 * missed. This is also how a session stored before the idle clock existed gets one: it had no
 * alarm at all, and the first time its object starts (any request, a `planport list`) the idle
 * time follows from its stored `updated_at`.
 */
export async function restoreAlarm(
  storage: DurableObjectStorage,
  row: SessionRow | null,
  deliveryDueAt: number | null = null,
  idleMs: number | null = null,
): Promise<void> {
  const due = row === null ? null : nextAlarmAt(row, deliveryDueAt, idleOf(row, idleMs));
  if (due !== null && (await storage.getAlarm()) === null) await storage.setAlarm(due);
}

function idleOf(row: SessionRow, idleMs: number | null): number | null {
  return idleMs === null ? null : idleDueAt(row, idleMs);
}
