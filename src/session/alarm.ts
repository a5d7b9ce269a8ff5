import type { SessionRow } from "./session-row.ts";

/**
 * The session's one alarm (DESIGN.md "The loop", "Retention", "Webhooks"). A Durable Object has
 * one alarm, and it serves four clocks: the next loop step, the AFK timeout of an open question,
 * the purge of an ended session, and the next webhook delivery. The row stores the first three
 * due times, the outbox the fourth; the alarm is set to the earliest.
 */

/**
 * When the alarm should next fire, or null when nothing is due ever.
 *
 * @example
 * nextAlarmAt({ step_due_at: null, afk_due_at: 50, purge_due_at: 20 }) // 20
 */
export function nextAlarmAt(
  row: Pick<SessionRow, "step_due_at" | "afk_due_at" | "purge_due_at">,
  deliveryDueAt: number | null = null,
): number | null {
  const due = [row.step_due_at, row.afk_due_at, row.purge_due_at, deliveryDueAt].filter(
    (t): t is number => t !== null,
  );
  return due.length === 0 ? null : Math.min(...due);
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
): Promise<void> {
  const at = row === null ? null : nextAlarmAt(row, deliveryDueAt);
  if (at === null) await storage.deleteAlarm();
  else await storage.setAlarm(at);
}

/** Sets the alarm again after a restart if it was lost (a crashed runtime), so nothing due is missed. */
export async function restoreAlarm(
  storage: DurableObjectStorage,
  row: SessionRow | null,
  deliveryDueAt: number | null = null,
): Promise<void> {
  const due = row === null ? null : nextAlarmAt(row, deliveryDueAt);
  if (due !== null && (await storage.getAlarm()) === null) await storage.setAlarm(due);
}
