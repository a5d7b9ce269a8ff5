/**
 * The best-of-N arbiter's records, in the owner index's SQLite (session/groups.ts says how a group is
 * decided): who belongs to which group, and the one chosen session of each, from its claim to
 * the archiving of its siblings. Synchronous SQL only: the owner index calls these with no
 * `await` in between, so claims serialise.
 */

export const GROUP_INDEX_MIGRATIONS = [
  // Membership: who belongs to which group (primary key first on the group: a group's listing is
  // one range read of this index, never a scan of the owner's sessions).
  `CREATE TABLE IF NOT EXISTS group_members (
    group_name TEXT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (group_name, session_id)
  )`,
  "CREATE INDEX IF NOT EXISTS group_members_by_session ON group_members (session_id)",
  // The one chosen session of a group: claimed before its decision, confirmed after it, done
  // when every sibling is archived. `check_at`: when the alarm next looks at an unfinished one.
  `CREATE TABLE IF NOT EXISTS group_choices (
    group_name TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    confirmed_at INTEGER,
    done_at INTEGER,
    check_at INTEGER
  )`,
];

/**
 * How long an unconfirmed claim is trusted before the alarm asks its session. A decision runs
 * from its claim to its commit without waiting on anything, so a claim this old without a
 * confirmation means the session crashed in between (or refused and could not say so).
 */
export const CLAIM_CHECK_AFTER_MS = 15_000;
/** Between retries of a settlement whose siblings could not all be archived. */
export const SETTLE_RETRY_MS = 30_000;

export type GroupChoice = {
  group_name: string;
  session_id: string;
  claimed_at: number;
  confirmed_at: number | null;
  done_at: number | null;
  check_at: number | null;
};

/** What a claim answers: not in a group, this session is the chosen one, or another is. */
export type GroupClaim =
  | { kind: "ungrouped" }
  | { kind: "won"; group: string }
  | { kind: "lost"; group: string; chosen: string; confirmed: boolean };

/** The group a session belongs to, or null. */
export function groupOf(sql: SqlStorage, sessionId: string): string | null {
  const row = sql
    .exec<{ group_name: string }>(
      "SELECT group_name FROM group_members WHERE session_id = ? LIMIT 1",
      sessionId,
    )
    .toArray()[0];
  return row?.group_name ?? null;
}

export function choiceOf(sql: SqlStorage, group: string): GroupChoice | null {
  return (
    sql
      .exec<GroupChoice>(
        "SELECT group_name, session_id, claimed_at, confirmed_at, done_at, check_at FROM group_choices WHERE group_name = ?",
        group,
      )
      .toArray()[0] ?? null
  );
}

/**
 * Adds a new session to its group, unless the group already chose a plan (then it answers the
 * chosen session's id and adds nothing: a session started after the choice would never be
 * superseded).
 */
export function joinGroup(sql: SqlStorage, group: string, sessionId: string): string | null {
  const choice = choiceOf(sql, group);
  if (choice !== null && choice.session_id !== sessionId) return choice.session_id;
  sql.exec(
    "INSERT OR IGNORE INTO group_members (group_name, session_id) VALUES (?, ?)",
    group,
    sessionId,
  );
  return null;
}

/** Forgets a session's membership; a group left empty forgets its choice too. */
export function leaveGroup(sql: SqlStorage, sessionId: string): void {
  const group = groupOf(sql, sessionId);
  if (group === null) return;
  sql.exec("DELETE FROM group_members WHERE session_id = ?", sessionId);
  const left = sql.exec("SELECT 1 FROM group_members WHERE group_name = ? LIMIT 1", group);
  if (left.toArray().length === 0)
    sql.exec("DELETE FROM group_choices WHERE group_name = ?", group);
}

/** A page of a group's session ids, newest first (ids sort by creation time). */
export function groupPage(
  sql: SqlStorage,
  group: string,
  limit: number,
  before?: string,
): { ids: string[]; hasMore: boolean } {
  const rows =
    before === undefined
      ? sql.exec<{ session_id: string }>(
          "SELECT session_id FROM group_members WHERE group_name = ? ORDER BY session_id DESC LIMIT ?",
          group,
          limit + 1,
        )
      : sql.exec<{ session_id: string }>(
          "SELECT session_id FROM group_members WHERE group_name = ? AND session_id < ? ORDER BY session_id DESC LIMIT ?",
          group,
          before,
          limit + 1,
        );
  const ids = rows.toArray().map((r) => r.session_id);
  return { ids: ids.slice(0, limit), hasMore: ids.length > limit };
}

/**
 * The claim of a session about to record an approval or a teleport. Synchronous, so claims
 * serialise in the owner index: the first one wins, a repeated claim of the winner wins again.
 */
export function claimChoice(sql: SqlStorage, sessionId: string, nowMs: number): GroupClaim {
  const group = groupOf(sql, sessionId);
  if (group === null) return { kind: "ungrouped" };
  const choice = choiceOf(sql, group);
  if (choice === null) {
    sql.exec(
      "INSERT INTO group_choices (group_name, session_id, claimed_at, check_at) VALUES (?, ?, ?, ?)",
      group,
      sessionId,
      nowMs,
      nowMs + CLAIM_CHECK_AFTER_MS,
    );
    return { kind: "won", group };
  }
  if (choice.session_id === sessionId) return { kind: "won", group };
  return {
    kind: "lost",
    group,
    chosen: choice.session_id,
    confirmed: choice.confirmed_at !== null,
  };
}

/** Gives up an unconfirmed claim (its decision was refused). A confirmed one stays. */
export function releaseChoice(sql: SqlStorage, sessionId: string): void {
  sql.exec("DELETE FROM group_choices WHERE session_id = ? AND confirmed_at IS NULL", sessionId);
}

/**
 * Records that the chosen session's decision committed. A session that decided without holding
 * the claim (its claim was dropped as stale while it was, after all, still deciding) takes it
 * if it is free; answers the chosen session, which may then be another one.
 */
export function confirmChoice(
  sql: SqlStorage,
  group: string,
  sessionId: string,
  nowMs: number,
): string {
  const choice = choiceOf(sql, group);
  if (choice === null) {
    sql.exec(
      "INSERT INTO group_choices (group_name, session_id, claimed_at, confirmed_at, check_at) VALUES (?, ?, ?, ?, ?)",
      group,
      sessionId,
      nowMs,
      nowMs,
      nowMs + SETTLE_RETRY_MS,
    );
    return sessionId;
  }
  if (choice.session_id === sessionId && choice.confirmed_at === null) {
    sql.exec(
      "UPDATE group_choices SET confirmed_at = ?, check_at = ? WHERE group_name = ?",
      nowMs,
      nowMs + SETTLE_RETRY_MS,
      group,
    );
  }
  return choice.session_id;
}

/** The sessions of a group other than `chosen`. */
export function siblingsOf(sql: SqlStorage, group: string, chosen: string): string[] {
  return sql
    .exec<{ session_id: string }>(
      "SELECT session_id FROM group_members WHERE group_name = ? AND session_id != ? ORDER BY session_id",
      group,
      chosen,
    )
    .toArray()
    .map((r) => r.session_id);
}

/** Marks a settlement finished (every sibling archived), or schedules its next attempt. */
export function settled(sql: SqlStorage, group: string, done: boolean, nowMs: number): void {
  if (done) {
    sql.exec(
      "UPDATE group_choices SET done_at = ?, check_at = NULL WHERE group_name = ?",
      nowMs,
      group,
    );
  } else {
    sql.exec(
      "UPDATE group_choices SET check_at = ? WHERE group_name = ?",
      nowMs + SETTLE_RETRY_MS,
      group,
    );
  }
}

/** Unfinished choices whose check is due. */
export function dueChoices(sql: SqlStorage, nowMs: number): GroupChoice[] {
  return sql
    .exec<GroupChoice>(
      "SELECT group_name, session_id, claimed_at, confirmed_at, done_at, check_at FROM group_choices WHERE done_at IS NULL AND check_at <= ?",
      nowMs,
    )
    .toArray();
}

/** When the alarm must next look at an unfinished choice, or null when none is left. */
export function nextChoiceCheck(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ at: number | null }>(
      "SELECT min(check_at) AS at FROM group_choices WHERE done_at IS NULL",
    )
    .one();
  return row.at ?? null;
}
