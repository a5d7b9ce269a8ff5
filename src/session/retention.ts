import type { SessionRow } from "./session-row.ts";

/**
 * Retention and the single alarm (DESIGN.md "Retention"). A Durable Object has one alarm, and
 * it serves three clocks: the next loop step, the AFK timeout of an open question, and the purge
 * of an ended session. The object stores each due time; the alarm is set to the earliest.
 */

/**
 * When the alarm should next fire, or null when nothing is due ever.
 *
 * @example nextAlarmAt({ step_due_at: null, afk_due_at: 50, purge_due_at: 20 }) // 20
 */
export function nextAlarmAt(
  row: Pick<SessionRow, "step_due_at" | "afk_due_at" | "purge_due_at">,
): number | null {
  const due = [row.step_due_at, row.afk_due_at, row.purge_due_at].filter(
    (t): t is number => t !== null,
  );
  return due.length === 0 ? null : Math.min(...due);
}
