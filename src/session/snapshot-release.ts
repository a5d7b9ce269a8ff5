import type { Env } from "../env.ts";
import { listOverlay } from "./files/overlay.ts";
import { hasEnded, type SessionRow } from "./session-row.ts";

/**
 * A session that has ended reads its snapshot no more — unless remote execution changed files,
 * which `GET …/changes` diffs against it. Such a session lets its snapshot go when it ends, not
 * at its purge days later (DESIGN.md "Retention"): a worker that plans all day would otherwise
 * keep one snapshot index per plan for the whole retention time.
 */

/**
 * True when the session ended between `before` and `after` (two reads of its row), on a
 * snapshot, with no remote changes: its snapshot may be released.
 */
export function releasesSnapshot(
  before: SessionRow,
  after: SessionRow | null,
  sql: SqlStorage,
): after is SessionRow {
  if (after === null || after.snapshot_id === null) return false;
  if (hasEnded(before) || !hasEnded(after)) return false;
  return listOverlay(sql).length === 0;
}

/**
 * Tells the owner index that the session ended and needs its snapshot no more. Best effort:
 * when the index cannot be reached, the purge releases the snapshot as it always did.
 */
export async function releaseSnapshot(env: Env, row: SessionRow): Promise<void> {
  try {
    await env.OWNERS.get(env.OWNERS.idFromName(row.owner)).releaseSnapshot(row.id);
  } catch (err) {
    console.error(`planport: ${row.id} keeps its snapshot until its purge`, err);
  }
}
