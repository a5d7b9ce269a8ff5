/**
 * When the model is reminded that plan mode is on. Pure: the engine feeds it one human turn at
 * a time and stores the answer per turn, so rebuilding the conversation always attaches the
 * same reminder to the same turn (a stable, cacheable prefix).
 *
 * The rule (after Claude Code's plan-mode attachments): the first human turn gets the full
 * reminder; afterwards a reminder is re-attached only when at least
 * {@link TURNS_BETWEEN_REMINDERS} human turns have passed since the last one, so with the
 * defaults on turns 1, 6, 11, 16, 21, 26, …; the 1st, 6th, 11th … re-attachment is full
 * again, the others sparse. A reminder on every turn would waste tokens and dull the rule;
 * none at all would let a long session forget it.
 */

/** Human turns that must pass after a reminder before the next one is attached. */
export const TURNS_BETWEEN_REMINDERS = 5;
/** Every this-many-th reminder is the full one; the others are sparse. */
export const FULL_REMINDER_EVERY = 5;

export type ReminderKind = "full" | "sparse";

/** What the schedule remembers between human turns. */
export interface ReminderSchedule {
  /** Human turns seen so far. */
  humanTurns: number;
  /** The human turn (1-based) that got the last reminder; 0 before the first. */
  lastReminderTurn: number;
  /** Reminders attached so far. */
  reminders: number;
}

export const EMPTY_SCHEDULE: ReminderSchedule = {
  humanTurns: 0,
  lastReminderTurn: 0,
  reminders: 0,
};

/**
 * Advances the schedule by one human turn and says which reminder, if any, that turn carries.
 * Outside plan mode the turn is counted but carries none.
 *
 * @example
 * let s = EMPTY_SCHEDULE;
 * const first = nextReminder(s, true);  // { kind: "full", schedule: { humanTurns: 1, … } }
 * s = first.schedule;
 * nextReminder(s, true).kind;           // null (turn 2: too soon)
 */
export function nextReminder(
  schedule: ReminderSchedule,
  inPlanMode: boolean,
): { kind: ReminderKind | null; schedule: ReminderSchedule } {
  const turn = schedule.humanTurns + 1;
  const counted = { ...schedule, humanTurns: turn };
  if (!inPlanMode) return { kind: null, schedule: counted };
  const due =
    schedule.reminders === 0 || turn - schedule.lastReminderTurn >= TURNS_BETWEEN_REMINDERS;
  if (!due) return { kind: null, schedule: counted };
  const reminders = schedule.reminders + 1;
  return {
    kind: reminders % FULL_REMINDER_EVERY === 1 ? "full" : "sparse",
    schedule: { humanTurns: turn, lastReminderTurn: turn, reminders },
  };
}

/**
 * The reminders of `turns` consecutive plan-mode human turns, e.g. for tests and docs.
 *
 * @example
 * reminderPlan(7) // ["full", null, null, null, null, "sparse", null]
 */
export function reminderPlan(turns: number): (ReminderKind | null)[] {
  const kinds: (ReminderKind | null)[] = [];
  let schedule = EMPTY_SCHEDULE;
  for (let i = 0; i < turns; i++) {
    const next = nextReminder(schedule, true);
    kinds.push(next.kind);
    schedule = next.schedule;
  }
  return kinds;
}
