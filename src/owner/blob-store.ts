import {
  type BlobLocation,
  dropSnapshotPacks,
  forgetPacks,
  orphanUnusedPacks,
  packSizes,
  registerPacks,
} from "./pack-store.ts";

/**
 * The owner index's record of stored blobs and snapshots (docs/DESIGN.md "Incremental
 * snapshots"): SQL on the owner's Durable Object, each function one synchronous step the caller
 * runs inside a transaction. R2 holds the bytes; these tables say which blob is where, how many
 * snapshots use it, and what state each snapshot is in, so that retention deletes a blob only
 * when no snapshot uses it and a session is never registered on a snapshot being deleted.
 *
 * Snapshot states: `committing` (its index is being written; uses nothing yet), `ready`,
 * `deleting` (no session uses it; the purge has not started, a new session revives it),
 * `purging` (its index is being read to release its blobs), `released` (its blobs were
 * released; its index is being deleted). A blob's `refs` counts the ready snapshots using it.
 */

export const BLOB_STORE_MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS blobs (
    id TEXT PRIMARY KEY,
    pack TEXT NOT NULL,
    offset INTEGER NOT NULL,
    size INTEGER NOT NULL,
    refs INTEGER NOT NULL DEFAULT 0,
    added_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS blobs_by_pack ON blobs (pack)",
  "CREATE INDEX IF NOT EXISTS blobs_unused ON blobs (added_at) WHERE refs = 0",
  `CREATE TABLE IF NOT EXISTS snapshots (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    layout INTEGER NOT NULL,
    state TEXT NOT NULL,
    changed_at INTEGER NOT NULL
  )`,
  // Packs left without any blob whose deletion from R2 failed; the alarm tries again.
  "CREATE TABLE IF NOT EXISTS orphan_packs (key TEXT PRIMARY KEY)",
];

/**
 * How long an uploaded blob no snapshot uses yet is kept: the client uploads, then commits
 * its manifest; a blob is also touched when a missing-blobs query finds it, so the window
 * counts from the client's last look.
 */
export const UNUSED_BLOB_GRACE_MS = 3_600_000;
/**
 * How long a ready snapshot no session uses is kept: a client commits, then starts its session
 * at once (or finds the snapshot by `HEAD` later, which restarts this). A snapshot whose sessions
 * have ended is unused too, from the moment the last one ended (owner-index.ts
 * `releaseSnapshot`). After it, the snapshot is purged like one whose last session went, so an
 * upload nobody uses any more is not kept — with its index and blobs — for ever.
 */
export const UNUSED_SNAPSHOT_GRACE_MS = 86_400_000;
/**
 * How many unused snapshots an owner keeps within their grace, the most recently used first:
 * enough for the next upload of a tree to find it (by `HEAD`, or as the base of a delta) in each
 * repository one works in, while a long-lived worker that plans all day keeps a bounded number
 * of indexes, not one per plan.
 */
export const UNUSED_SNAPSHOTS_KEPT = 16;
/**
 * A snapshot used this recently is never purged for the count alone: its client may be about
 * to start a session on it.
 */
export const RECENTLY_USED_SNAPSHOT_MS = 60_000;
/** A commit that has not finished after this long died with its runtime: its row is dropped. */
export const STALE_COMMIT_MS = 600_000;

export type SnapshotState = "committing" | "ready" | "deleting" | "purging" | "released";

export interface NewBlob extends BlobLocation {
  id: string;
}

/**
 * Bulk statements take their rows as one JSON array parameter (`json_each`): 20,000 ids cost a
 * few queries, not 20,000 (Durable Object SQL also allows only 100 bound parameters). A value may
 * hold at most 2 MB, so the arrays go in chunks well under that.
 */
const JSON_CHUNK_ROWS = 4_000;

function eachChunk<T>(items: readonly T[], run: (chunk: string) => void): void {
  for (let i = 0; i < items.length; i += JSON_CHUNK_ROWS) {
    run(JSON.stringify(items.slice(i, i + JSON_CHUNK_ROWS)));
  }
}

/** The rows of `ids` that are stored. */
function storedRows(
  sql: SqlStorage,
  ids: readonly string[],
): Map<string, BlobLocation & { refs: number }> {
  const found = new Map<string, BlobLocation & { refs: number }>();
  eachChunk(ids, (chunk) => {
    for (const r of sql.exec<{
      id: string;
      pack: string;
      offset: number;
      size: number;
      refs: number;
    }>(
      "SELECT id, pack, offset, size, refs FROM blobs WHERE id IN (SELECT value FROM json_each(?))",
      chunk,
    )) {
      found.set(r.id, { pack: r.pack, offset: r.offset, size: r.size, refs: r.refs });
    }
  });
  return found;
}

/** Restarts the grace of the unused blobs among `ids`. */
function touch(sql: SqlStorage, ids: readonly string[], nowMs: number): void {
  eachChunk(ids, (chunk) =>
    sql.exec(
      "UPDATE blobs SET added_at = ? WHERE refs = 0 AND id IN (SELECT value FROM json_each(?))",
      nowMs,
      chunk,
    ),
  );
}

/** The ids among `ids` that are not stored; the stored ones are touched (their grace restarts). */
export function missingBlobs(sql: SqlStorage, ids: readonly string[], nowMs: number): string[] {
  const stored = storedRows(sql, ids);
  touch(sql, ids, nowMs);
  return ids.filter((id) => !stored.has(id));
}

/**
 * Records uploaded blobs. One already stored keeps its location (and is touched); the upload's
 * copy is then dead weight in its pack. Answers the blobs that were new and the packs of
 * `blobs` that hold no recorded blob at all, which the caller deletes.
 */
export function addBlobs(
  sql: SqlStorage,
  blobs: readonly NewBlob[],
  nowMs: number,
): { fresh: NewBlob[]; deadPacks: string[] } {
  const known = storedRows(
    sql,
    blobs.map((b) => b.id),
  );
  const fresh = blobs.filter((b) => !known.has(b.id));
  eachChunk(
    fresh.map((b) => [b.id, b.pack, b.offset, b.size]),
    (chunk) =>
      sql.exec(
        `INSERT OR IGNORE INTO blobs (id, pack, offset, size, refs, added_at)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
                json_extract(value, '$[2]'), json_extract(value, '$[3]'), 0, ?
         FROM json_each(?)`,
        nowMs,
        chunk,
      ),
  );
  touch(sql, [...known.keys()], nowMs);
  const used = new Set(fresh.map((b) => b.pack));
  const sizes = packSizes(blobs);
  registerPacks(sql, new Map([...used].map((pack) => [pack, sizes.get(pack) ?? 0])), nowMs);
  const deadPacks = [...new Set(blobs.map((b) => b.pack))].filter((pack) => !used.has(pack));
  return { fresh, deadPacks };
}

/** Where each of `ids` is stored; the ids not stored are listed as `missing` instead. */
export function locateBlobs(
  sql: SqlStorage,
  ids: readonly string[],
): { found: Map<string, BlobLocation>; missing: string[] } {
  const stored = storedRows(sql, ids);
  const found = new Map<string, BlobLocation>();
  const missing: string[] = [];
  for (const id of ids) {
    const row = stored.get(id);
    if (row === undefined) missing.push(id);
    else found.set(id, { pack: row.pack, offset: row.offset, size: row.size });
  }
  return { found, missing };
}

/** The snapshot's state, or null when the owner has no such snapshot. */
export function snapshotState(
  sql: SqlStorage,
  id: string,
): { state: SnapshotState; layout: 1 | 2; changedAt: number } | null {
  const row = sql
    .exec<{ state: SnapshotState; layout: number; changed_at: number }>(
      "SELECT state, layout, changed_at FROM snapshots WHERE id = ?",
      id,
    )
    .toArray()[0];
  if (row === undefined) return null;
  return { state: row.state, layout: row.layout === 1 ? 1 : 2, changedAt: row.changed_at };
}

export function setSnapshotState(
  sql: SqlStorage,
  owner: string,
  id: string,
  state: SnapshotState,
  nowMs: number,
  layout: 1 | 2 = 2,
): void {
  sql.exec(
    `INSERT INTO snapshots (id, owner, layout, state, changed_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET state = excluded.state, changed_at = excluded.changed_at`,
    id,
    owner,
    layout,
    state,
    nowMs,
  );
}

/** Forgets a snapshot and the packs it read (those no longer used are queued for deletion). */
export function forgetSnapshot(sql: SqlStorage, id: string): void {
  sql.exec("DELETE FROM snapshots WHERE id = ?", id);
  dropSnapshotPacks(sql, id);
}

/**
 * The last step of a commit: every blob still stored (one the garbage collector dropped
 * meanwhile makes the commit fail with the ids to send again), then one reference per distinct
 * blob and the snapshot is ready. A blob that moved since the index was written (gathered by
 * another commit: pack-store.ts) is fine: the packs the index points at were recorded for this
 * snapshot when it started committing, so they stay while it does.
 */
export function takeReferences(
  sql: SqlStorage,
  owner: string,
  id: string,
  written: ReadonlyMap<string, BlobLocation>,
  nowMs: number,
): { ok: true } | { ok: false; missing: string[] } {
  const { missing } = locateBlobs(sql, [...written.keys()]);
  if (missing.length > 0) return { ok: false, missing };
  eachChunk([...written.keys()], (chunk) =>
    sql.exec(
      "UPDATE blobs SET refs = refs + 1 WHERE id IN (SELECT value FROM json_each(?))",
      chunk,
    ),
  );
  setSnapshotState(sql, owner, id, "ready", nowMs);
  return { ok: true };
}

/** Gives back one reference per distinct blob of a snapshot being purged. */
export function releaseReferences(sql: SqlStorage, blobs: Iterable<string>, nowMs: number): void {
  const distinct = [...new Set(blobs)].filter((blob) => blob !== "");
  // A blob that drops to no user gets the full grace from now (a client may be about to use it).
  eachChunk(distinct, (chunk) =>
    sql.exec(
      `UPDATE blobs SET refs = max(refs - 1, 0), added_at = CASE WHEN refs <= 1 THEN ? ELSE added_at END
       WHERE id IN (SELECT value FROM json_each(?))`,
      nowMs,
      chunk,
    ),
  );
}

/**
 * Drops the blobs no snapshot has used for the grace period and answers the packs left with no
 * blob, that no snapshot reads either (to delete from R2; they are also recorded in
 * `orphan_packs` until deleted).
 */
export function collectUnusedBlobs(sql: SqlStorage, nowMs: number): string[] {
  const dropped = sql
    .exec<{ pack: string }>(
      "DELETE FROM blobs WHERE refs = 0 AND added_at < ? RETURNING pack",
      nowMs - UNUSED_BLOB_GRACE_MS,
    )
    .toArray();
  return orphanUnusedPacks(
    sql,
    dropped.map((r) => r.pack),
  );
}

export function orphanPacks(sql: SqlStorage): string[] {
  return sql
    .exec<{ key: string }>("SELECT key FROM orphan_packs")
    .toArray()
    .map((r) => r.key);
}

export function forgetOrphanPacks(sql: SqlStorage, keys: readonly string[]): void {
  for (const key of keys) sql.exec("DELETE FROM orphan_packs WHERE key = ?", key);
  forgetPacks(sql, keys);
}

/** When the next unused blob's grace ends, or null when there is none. */
export function nextBlobExpiry(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ at: number | null }>("SELECT min(added_at) AS at FROM blobs WHERE refs = 0")
    .toArray()[0];
  return row?.at == null ? null : row.at + UNUSED_BLOB_GRACE_MS;
}

/** Commits that never finished (their runtime died): ids older than {@link STALE_COMMIT_MS}. */
export function staleCommits(sql: SqlStorage, nowMs: number): { owner: string; id: string }[] {
  return sql
    .exec<{ owner: string; id: string }>(
      "SELECT owner, id FROM snapshots WHERE state = 'committing' AND changed_at < ?",
      nowMs - STALE_COMMIT_MS,
    )
    .toArray();
}

const UNUSED = `state = 'ready' AND NOT EXISTS (SELECT 1 FROM sessions WHERE snapshot_id = snapshots.id)`;

/**
 * Ready snapshots no session uses that are due for their purge: past their grace
 * ({@link UNUSED_SNAPSHOT_GRACE_MS}), or beyond the {@link UNUSED_SNAPSHOTS_KEPT} most recently
 * used ones and not used within {@link RECENTLY_USED_SNAPSHOT_MS}.
 */
export function unusedSnapshots(sql: SqlStorage, nowMs: number): { owner: string; id: string }[] {
  return sql
    .exec<{ owner: string; id: string }>(
      `SELECT owner, id FROM snapshots WHERE ${UNUSED} AND (changed_at < ? OR (changed_at < ? AND id NOT IN
         (SELECT id FROM snapshots WHERE ${UNUSED} ORDER BY changed_at DESC, id LIMIT ?)))`,
      nowMs - UNUSED_SNAPSHOT_GRACE_MS,
      nowMs - RECENTLY_USED_SNAPSHOT_MS,
      UNUSED_SNAPSHOTS_KEPT,
    )
    .toArray();
}

/**
 * When the next unused ready snapshot becomes due, or null: the oldest one's grace ends, or —
 * when more than {@link UNUSED_SNAPSHOTS_KEPT} wait — it stops being recent.
 */
export function nextUnusedSnapshot(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ at: number | null; count: number }>(
      `SELECT min(changed_at) AS at, count(*) AS count FROM snapshots WHERE ${UNUSED}`,
    )
    .toArray()[0];
  if (row?.at == null) return null;
  const wait =
    row.count > UNUSED_SNAPSHOTS_KEPT ? RECENTLY_USED_SNAPSHOT_MS : UNUSED_SNAPSHOT_GRACE_MS;
  return row.at + wait + 1;
}

/** Restarts the grace of a ready snapshot (it was just asked for). */
export function touchSnapshot(sql: SqlStorage, id: string, nowMs: number): void {
  sql.exec("UPDATE snapshots SET changed_at = ? WHERE id = ? AND state = 'ready'", nowMs, id);
}

/** When the oldest unfinished commit becomes stale, or null. */
export function nextStaleCommit(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ at: number | null }>(
      "SELECT min(changed_at) AS at FROM snapshots WHERE state = 'committing'",
    )
    .toArray()[0];
  return row?.at == null ? null : row.at + STALE_COMMIT_MS + 1;
}

/** Usage counts, for tests and the README's figures. */
export function blobStoreStats(sql: SqlStorage): { blobs: number; unused: number; packs: number } {
  const row = sql
    .exec<{ blobs: number; unused: number; packs: number }>(
      "SELECT count(*) AS blobs, sum(refs = 0) AS unused, count(DISTINCT pack) AS packs FROM blobs",
    )
    .toArray()[0];
  return { blobs: row?.blobs ?? 0, unused: row?.unused ?? 0, packs: row?.packs ?? 0 };
}
