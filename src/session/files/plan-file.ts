import type { PlanFile } from "../../protocol/index.ts";

/**
 * The session's one plan file, kept as numbered revisions so the review page can say which
 * revision it shows and whether the user edited it.
 */

/** A stored revision's row, as read by the two readers below. */
type RevisionRow = { revision: number; content: string; edited_by_user: number };
const REVISION_COLUMNS = "SELECT revision, content, edited_by_user FROM plan_revisions";

function planFileOf(path: string, row: RevisionRow | undefined): PlanFile | null {
  if (!row) return null;
  return {
    path,
    content: row.content,
    revision: row.revision,
    edited_by_user: row.edited_by_user === 1,
  };
}

/** The current revision, or null before the planner wrote anything. */
export function readPlan(sql: SqlStorage, path: string): PlanFile | null {
  const rows = sql.exec<RevisionRow>(`${REVISION_COLUMNS} ORDER BY revision DESC LIMIT 1`);
  return planFileOf(path, rows.toArray()[0]);
}

/** One stored revision (1 is the first), or null when there is none of that number. */
export function readPlanRevision(sql: SqlStorage, path: string, revision: number): PlanFile | null {
  const rows = sql.exec<RevisionRow>(`${REVISION_COLUMNS} WHERE revision = ?`, revision);
  return planFileOf(path, rows.toArray()[0]);
}

/**
 * Writes a new revision and returns it.
 *
 * @example writePlan(sql, "/plans/bold-eagle.md", "# Plan\n", false, Date.now()) // revision 1
 */
export function writePlan(
  sql: SqlStorage,
  path: string,
  content: string,
  editedByUser: boolean,
  nowMs: number,
): PlanFile {
  const revision = (readPlan(sql, path)?.revision ?? 0) + 1;
  sql.exec(
    "INSERT INTO plan_revisions (revision, content, edited_by_user, created_at) VALUES (?, ?, ?, ?)",
    revision,
    content,
    editedByUser ? 1 : 0,
    nowMs,
  );
  return { path, content, revision, edited_by_user: editedByUser };
}

/** One stored revision without its text: what the review page's revision picker lists. */
export interface PlanRevisionInfo {
  revision: number;
  edited_by_user: boolean;
  /** ISO time the revision was written. */
  created_at: string;
  chars: number;
}

/** Every stored revision, oldest first, without its text. */
export function listPlanRevisions(sql: SqlStorage): PlanRevisionInfo[] {
  return sql
    .exec<{ revision: number; edited_by_user: number; created_at: number; chars: number }>(
      "SELECT revision, edited_by_user, created_at, length(content) AS chars FROM plan_revisions ORDER BY revision",
    )
    .toArray()
    .map((r) => ({
      revision: r.revision,
      edited_by_user: r.edited_by_user === 1,
      created_at: new Date(r.created_at).toISOString(),
      chars: r.chars,
    }));
}
