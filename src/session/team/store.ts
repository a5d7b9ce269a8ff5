import { bareTokenLabel } from "../../config/tokens.ts";
import type { SessionRole, Suggestion } from "../../protocol/index.ts";
import type { TeamView } from "../session-view.ts";
import { type Approver, MAX_SUGGESTIONS, type TeamRecord } from "./rules.ts";

/**
 * Team review's storage in the session's own Durable Object (schema version 5; the rules are
 * in rules.ts): the team columns of the session row, who decided, and the suggestions. Each
 * runs inside the caller's transaction.
 */

/** The team columns (null in an object that holds no session). */
export function readTeam(sql: SqlStorage): TeamRecord | null {
  const row = sql
    .exec<{ view_key: string; approvers: string; requester_label: string | null }>(
      "SELECT view_key, approvers, requester_label FROM session LIMIT 1",
    )
    .toArray()[0];
  if (row === undefined) return null;
  return {
    viewKey: row.view_key,
    approvers: JSON.parse(row.approvers) as Approver[],
    requesterLabel: row.requester_label,
  };
}

/** Writes the team columns of a new session, in the creating transaction. */
export function writeTeam(sql: SqlStorage, team: TeamRecord): void {
  sql.exec(
    "UPDATE session SET view_key = ?, approvers = ?, requester_label = ?",
    team.viewKey,
    JSON.stringify(team.approvers),
    team.requesterLabel,
  );
}

/** Who approved or teleported the plan (the decision that chose it), or null. */
export function decidedBy(sql: SqlStorage): string | null {
  const row = sql
    .exec<{ decided_by: string | null }>(
      "SELECT decided_by FROM decisions WHERE decision IN ('approve', 'teleport') ORDER BY decided_at LIMIT 1",
    )
    .toArray()[0];
  return row?.decided_by ?? null;
}

/** How many suggestions the session keeps. */
export function suggestionCount(sql: SqlStorage): number {
  return Number(sql.exec("SELECT COUNT(*) AS n FROM suggestions").one().n);
}

/** Keeps a comment as a suggestion; false when the session holds {@link MAX_SUGGESTIONS}. */
export function addSuggestion(
  sql: SqlStorage,
  comment: { quote: string; text: string },
  from: string,
  nowMs: number,
): boolean {
  if (suggestionCount(sql) >= MAX_SUGGESTIONS) return false;
  sql.exec(
    "INSERT INTO suggestions (quote, text, author, created_at) VALUES (?, ?, ?, ?)",
    comment.quote,
    comment.text,
    from,
    nowMs,
  );
  return true;
}

/** The session's suggestions, oldest first. */
export function listSuggestions(sql: SqlStorage): Suggestion[] {
  return sql
    .exec<{ seq: number; quote: string; text: string; author: string; created_at: number }>(
      "SELECT seq, quote, text, author, created_at FROM suggestions ORDER BY seq",
    )
    .toArray()
    .map((s) => ({
      id: s.seq,
      quote: s.quote,
      text: s.text,
      from: s.author,
      created_at: new Date(s.created_at).toISOString(),
    }));
}

/**
 * The team part of the Session as `role` sees it (sessionView's `team`), or null in an object
 * that holds no session.
 */
export function teamView(sql: SqlStorage, role: SessionRole): TeamView | null {
  const team = readTeam(sql);
  const owner = sql.exec<{ owner: string }>("SELECT owner FROM session LIMIT 1").toArray()[0];
  if (team === null || owner === undefined) return null;
  return {
    viewKey: team.viewKey,
    approvers: team.approvers.map((a) => a.label),
    requestedBy: team.requesterLabel ?? bareTokenLabel(owner.owner),
    decidedBy: decidedBy(sql),
    role,
    suggestionCount: suggestionCount(sql),
  };
}
