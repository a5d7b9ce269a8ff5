import type { OutcomeKind, PermissionMode, ResolvedPlanner, Variant } from "../protocol/index.ts";

/**
 * The session row: what a session was created with and the state that is not in the log.
 * Times are ms since the epoch. The large texts (prompt, instructions, script, engine state)
 * are left out: they are read only by the engine ({@link readSessionTexts}), never on the hot
 * path of a poll.
 */
export interface SessionRow {
  id: string;
  owner: string;
  review_key: string;
  title: string;
  planner: ResolvedPlanner;
  /** The planning workflow. */
  variant: Variant;
  /** The best-of-N group the session was created in, or null. */
  group_name: string | null;
  ask_timeout_s: number | null;
  max_turns: number;
  snapshot_id: string | null;
  plan_path: string;
  permission_mode: PermissionMode;
  pre_plan_mode: PermissionMode;
  reject_count: number;
  /** How the session came out (null while it is undecided); see `sessionOutcome`. */
  outcome_kind: OutcomeKind | null;
  /** The ending result's subtype of a terminated session. */
  outcome_subtype: string | null;
  ended_subtype: string | null;
  archived_at: number | null;
  executed: number;
  input_tokens: number;
  output_tokens: number;
  /** Dollars the model calls cost; null once a call's price was unknown. */
  cost_usd: number | null;
  /** A loop step is due at this time (and stays set while it runs). */
  step_due_at: number | null;
  /** Bumped by every request for a step, so a step can tell it was asked for again meanwhile. */
  wake_seq: number;
  /** AFK timeout of the open question. */
  afk_due_at: number | null;
  /** Retention: the session's storage is deleted at this time. */
  purge_due_at: number | null;
  terminal_polled_at: number | null;
  /**
   * The last request of a person who may act on the session (schema version 6; see
   * session-object.ts `notePerson`): one of the idle clock's activities.
   */
  person_seen_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The large texts of the row, read by the engine only. */
export interface SessionTexts {
  prompt: string;
  instructions: string | null;
  /** JSON array of scripted turns, or null. */
  script: string | null;
  /** The engine's own state as JSON, or null before its first step. */
  engine_state: string | null;
}

/** Every column, as written at creation. */
export type SessionRecord = SessionRow & SessionTexts;

const ROW_COLUMNS = [
  "id",
  "owner",
  "review_key",
  "title",
  "planner",
  "variant",
  "group_name",
  "ask_timeout_s",
  "max_turns",
  "snapshot_id",
  "plan_path",
  "permission_mode",
  "pre_plan_mode",
  "reject_count",
  "outcome_kind",
  "outcome_subtype",
  "ended_subtype",
  "archived_at",
  "executed",
  "input_tokens",
  "output_tokens",
  "cost_usd",
  "step_due_at",
  "wake_seq",
  "afk_due_at",
  "purge_due_at",
  "terminal_polled_at",
  "person_seen_at",
  "created_at",
  "updated_at",
].join(", ");

/** The row, or null in an object that holds no session (unknown id, or purged). */
export function readRow(sql: SqlStorage): SessionRow | null {
  const rows = sql.exec(`SELECT ${ROW_COLUMNS} FROM session LIMIT 1`).toArray();
  return (rows[0] as unknown as SessionRow | undefined) ?? null;
}

/** The large texts, or null in an object that holds no session. */
export function readSessionTexts(sql: SqlStorage): SessionTexts | null {
  const rows = sql
    .exec("SELECT prompt, instructions, script, engine_state FROM session LIMIT 1")
    .toArray();
  return (rows[0] as unknown as SessionTexts | undefined) ?? null;
}

export type RowPatch = Partial<Omit<SessionRecord, "id" | "owner" | "review_key" | "created_at">>;

/** Updates columns of the session row (undefined values are left alone). */
export function updateRow(sql: SqlStorage, patch: RowPatch): void {
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return;
  const sets = entries.map(([k]) => `${k} = ?`).join(", ");
  sql.exec(`UPDATE session SET ${sets}`, ...entries.map(([, v]) => v as SqlStorageValue));
}

export function insertRow(sql: SqlStorage, row: SessionRecord): void {
  const keys = Object.keys(row);
  sql.exec(
    `INSERT INTO session (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
    ...Object.values(row).map((v) => v as SqlStorageValue),
  );
}

/** Whether the session has ended (archived, or an ending result). Nothing may run after. */
export function hasEnded(row: SessionRow): boolean {
  return row.archived_at !== null || row.ended_subtype !== null;
}
