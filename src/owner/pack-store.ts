/**
 * Which packs the owner's snapshots read, and which blobs a commit gathers into a new pack
 * (docs/DESIGN.md "Incremental snapshots", "A long-lived worker"). SQL on the owner index, each
 * function one synchronous step the caller runs inside a transaction, like blob-store.ts.
 *
 * Every upload writes its new blobs to packs of its own, so after a hundred uploads of nearly
 * the same tree a snapshot's blobs lie in the first tree's packs and in dozens of small ones,
 * and every scan fetches each of them. A commit therefore gathers: when the tree reads more
 * than {@link MAX_SCATTERED_PACKS} scattered packs — small ones (under
 * {@link SMALL_PACK_BYTES}), or larger ones it reads less than half of — it copies those blobs
 * into one new pack, in path order, and the blobs' rows move there, so this snapshot and later
 * ones read a few packs whatever the history. A gathered pack is gathered again with the next
 * small ones until it is no longer small, so a byte is copied a few times, not once per upload.
 *
 * A snapshot's index holds the place of each blob as it was at its commit, so the packs a
 * snapshot reads are recorded (`snapshot_packs`) when it commits: a pack is deleted only when
 * no blob row and no snapshot points at it, and a blob may move while older snapshots still
 * read its old copy. Only packs written since this record exists (`packs`) are ever gathered
 * from: a snapshot committed before it reads its packs through its blobs' rows alone.
 */

/** Where a stored blob is: a byte range of one pack in R2. */
export interface BlobLocation {
  pack: string;
  offset: number;
  size: number;
}

export const PACK_STORE_MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS snapshot_packs (
    snapshot_id TEXT NOT NULL,
    pack TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, pack)
  )`,
  "CREATE INDEX IF NOT EXISTS snapshot_packs_by_pack ON snapshot_packs (pack)",
  // Packs whose blobs may be gathered elsewhere (written by this version: uploads and gathers).
  `CREATE TABLE IF NOT EXISTS packs (
    key TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    added_at INTEGER NOT NULL
  )`,
];

/** A pack smaller than this is scattered (the pack of one upload's changes, say). */
export const SMALL_PACK_BYTES = 4 * 1024 * 1024;
/** How many scattered packs a tree may read before its commit gathers them. */
export const MAX_SCATTERED_PACKS = 4;
/** The most a commit copies when it gathers (one pack's worth). */
export const GATHER_MAX_BYTES = 8 * 1024 * 1024;

export function recordSnapshotPacks(
  sql: SqlStorage,
  snapshotId: string,
  packs: Iterable<string>,
): void {
  for (const pack of new Set(packs)) {
    sql.exec(
      "INSERT OR IGNORE INTO snapshot_packs (snapshot_id, pack) VALUES (?, ?)",
      snapshotId,
      pack,
    );
  }
}

/** Forgets the packs a snapshot read; answers those now unused (queued for deletion). */
export function dropSnapshotPacks(sql: SqlStorage, snapshotId: string): string[] {
  const packs = sql
    .exec<{ pack: string }>(
      "DELETE FROM snapshot_packs WHERE snapshot_id = ? RETURNING pack",
      snapshotId,
    )
    .toArray()
    .map((r) => r.pack);
  return orphanUnusedPacks(sql, packs);
}

/**
 * Queues for deletion (`orphan_packs`) the packs among `packs` that no blob row and no snapshot
 * points at; answers them.
 */
export function orphanUnusedPacks(sql: SqlStorage, packs: Iterable<string>): string[] {
  const orphaned: string[] = [];
  for (const pack of new Set(packs)) {
    const used =
      sql.exec("SELECT 1 FROM blobs WHERE pack = ? LIMIT 1", pack).toArray().length > 0 ||
      sql.exec("SELECT 1 FROM snapshot_packs WHERE pack = ? LIMIT 1", pack).toArray().length > 0;
    if (used) continue;
    sql.exec("INSERT OR IGNORE INTO orphan_packs (key) VALUES (?)", pack);
    orphaned.push(pack);
  }
  return orphaned;
}

/** The size of each pack among `blobs`' (the end of its last blob: a pack is written whole). */
export function packSizes(blobs: Iterable<BlobLocation>): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const b of blobs) sizes.set(b.pack, Math.max(sizes.get(b.pack) ?? 0, b.offset + b.size));
  return sizes;
}

/** Records packs this version wrote, with their sizes (their blobs may be gathered later). */
export function registerPacks(
  sql: SqlStorage,
  packs: ReadonlyMap<string, number>,
  nowMs: number,
): void {
  for (const [key, bytes] of packs) {
    sql.exec(
      "INSERT OR IGNORE INTO packs (key, bytes, added_at) VALUES (?, ?, ?)",
      key,
      bytes,
      nowMs,
    );
  }
}

export function forgetPacks(sql: SqlStorage, keys: readonly string[]): void {
  for (const key of keys) sql.exec("DELETE FROM packs WHERE key = ?", key);
}

/** The packs among `found`'s that may be gathered from, with their sizes. */
export function movablePacks(
  sql: SqlStorage,
  found: ReadonlyMap<string, BlobLocation>,
): Map<string, number> {
  const movable = new Map<string, number>();
  for (const key of new Set([...found.values()].map((w) => w.pack))) {
    const row = sql
      .exec<{ bytes: number }>("SELECT bytes FROM packs WHERE key = ?", key)
      .toArray()[0];
    if (row !== undefined) movable.set(key, row.bytes);
  }
  return movable;
}

/** A blob to copy into the gathered pack, from where it is now. */
export interface Gathering {
  id: string;
  from: BlobLocation;
}

/**
 * The blobs of a tree to gather (pure, given the packs that may be gathered from and their
 * sizes): none while the tree reads at most {@link MAX_SCATTERED_PACKS} scattered packs; else
 * those of the scattered packs it reads least from, up to {@link GATHER_MAX_BYTES}, in the
 * tree's path order.
 *
 * @example
 * // The tree reads 6 small packs (2 KiB from each): all 6 are gathered into one.
 * gatheringPlan(found, treeBlobIds, movable).length // 6
 */
export function gatheringPlan(
  found: ReadonlyMap<string, BlobLocation>,
  /** The tree's blob ids in its path order (first use). */
  order: readonly string[],
  movable: ReadonlyMap<string, number>,
): Gathering[] {
  const usage = new Map<string, number>();
  for (const where of found.values()) {
    usage.set(where.pack, (usage.get(where.pack) ?? 0) + where.size);
  }
  const scattered = [...usage]
    .filter(([pack, used]) => {
      const bytes = movable.get(pack);
      return bytes !== undefined && (bytes < SMALL_PACK_BYTES || used * 2 < bytes);
    })
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  if (scattered.length <= MAX_SCATTERED_PACKS) return [];
  const chosen = new Set<string>();
  let bytes = 0;
  for (const [pack, used] of scattered) {
    if (bytes + used > GATHER_MAX_BYTES) break;
    chosen.add(pack);
    bytes += used;
  }
  // Gathering one pack into another saves nothing.
  if (chosen.size < 2) return [];
  const plan: Gathering[] = [];
  for (const id of order) {
    const from = found.get(id);
    if (from !== undefined && chosen.has(from.pack)) plan.push({ id, from });
  }
  return plan;
}

/**
 * Moves the rows of gathered blobs to their new place — each only if it is still where it was
 * copied from (a concurrent gather, or the collector, may have moved or dropped it) — and
 * registers the new packs; answers the packs left unused (queued for deletion).
 */
export function moveGathered(
  sql: SqlStorage,
  moved: readonly { id: string; from: BlobLocation; to: BlobLocation }[],
  nowMs: number,
): string[] {
  for (const { id, from, to } of moved) {
    sql.exec(
      "UPDATE blobs SET pack = ?, offset = ? WHERE id = ? AND pack = ? AND offset = ?",
      to.pack,
      to.offset,
      id,
      from.pack,
      from.offset,
    );
  }
  const newPacks = packSizes(moved.map((m) => m.to));
  registerPacks(sql, newPacks, nowMs);
  return orphanUnusedPacks(sql, [...moved.map((m) => m.from.pack), ...newPacks.keys()]);
}
