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

/** @example writeOverlay(sql, "src/app.ts", "export {};\n"); writeOverlay(sql, "old.ts", null); */
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
