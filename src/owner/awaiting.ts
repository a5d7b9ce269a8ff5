import type { SessionIdPage } from "./rpc.ts";

/**
 * The approver's side of team review (DESIGN.md "Team review"), in the approver's own owner
 * index: one row per session that named this owner as an approver, added when the session is
 * created. The rows are candidates, not facts: whether a session still waits is read from the
 * session itself when listing (sessions.ts `listAwaiting`), which drops the rows that no longer
 * wait. Keeping the fact in the session alone means no way a session ends (a decision, a stop,
 * a failure, a superseded group, retention) needs to reach the index.
 */

export const AWAITING_INDEX_MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS awaiting (
    session_id TEXT PRIMARY KEY,
    requester TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
];

/** Adds a candidate (idempotent). */
export function addAwaiting(
  sql: SqlStorage,
  sessionId: string,
  requester: string,
  createdAtMs: number,
): void {
  sql.exec(
    "INSERT OR IGNORE INTO awaiting (session_id, requester, created_at) VALUES (?, ?, ?)",
    sessionId,
    requester,
    createdAtMs,
  );
}

/** Drops candidates that no longer wait. */
export function dropAwaiting(sql: SqlStorage, sessionIds: readonly string[]): void {
  for (const id of sessionIds) sql.exec("DELETE FROM awaiting WHERE session_id = ?", id);
}

/** A page of candidate session ids, newest first (ids sort by creation time). */
export function awaitingPage(sql: SqlStorage, limit: number, before?: string): SessionIdPage {
  const rows =
    before === undefined
      ? sql.exec<{ session_id: string }>(
          "SELECT session_id FROM awaiting ORDER BY session_id DESC LIMIT ?",
          limit + 1,
        )
      : sql.exec<{ session_id: string }>(
          "SELECT session_id FROM awaiting WHERE session_id < ? ORDER BY session_id DESC LIMIT ?",
          before,
          limit + 1,
        );
  const ids = rows.toArray().map((r) => r.session_id);
  return { ids: ids.slice(0, limit), hasMore: ids.length > limit };
}
