import type { SnapshotFiles } from "../../planner/port.ts";
import { gitBlobId } from "../../protocol/index.ts";
import { unifiedDiff } from "./unified-diff.ts";

/**
 * The copy-on-write workspace over the snapshot: remote execution writes here, never to the
 * snapshot; `/changes` diffs it against the snapshot.
 */

/** Overlay content: a string, null when the path was deleted, undefined when untouched. */
export function readOverlay(sql: SqlStorage, path: string): string | null | undefined {
  const row = sql
    .exec<{ content: string | null; deleted: number }>(
      "SELECT content, deleted FROM overlay WHERE path = ?",
      path,
    )
    .toArray()[0];
  if (!row) return undefined;
  return row.deleted === 1 ? null : (row.content ?? "");
}

/** Writes a path's content, or (null) its deletion. */
export function writeOverlay(sql: SqlStorage, path: string, content: string | null): void {
  sql.exec(
    "INSERT INTO overlay (path, content, deleted) VALUES (?, ?, ?) ON CONFLICT(path) DO UPDATE SET content = excluded.content, deleted = excluded.deleted",
    path,
    content,
    content === null ? 1 : 0,
  );
}

/** Paths touched by the overlay, sorted. */
export function listOverlay(sql: SqlStorage): string[] {
  return sql
    .exec<{ path: string }>("SELECT path FROM overlay ORDER BY path")
    .toArray()
    .map((r) => r.path);
}

/**
 * The overlay as a unified diff against the snapshot (`GET …/changes`), with git blob ids so
 * `git apply --3way` can merge; empty when nothing changed.
 */
export async function overlayDiff(sql: SqlStorage, snapshot: SnapshotFiles): Promise<string> {
  const overlay = listOverlay(sql).map((path) => ({ path, after: readOverlay(sql, path) ?? null }));
  if (overlay.length === 0) return "";
  const changes = await Promise.all(
    overlay.map(async ({ path, after }) => {
      const before = await snapshot.read(path);
      const blobs = {
        before: before === null ? null : gitBlobId(before),
        after: after === null ? null : gitBlobId(after),
      };
      return { path, before, after, blobs };
    }),
  );
  return unifiedDiff(changes);
}
