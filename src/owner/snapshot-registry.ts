import {
  comparePaths,
  type ManifestFile,
  type SkippedEntry,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../protocol/index.ts";
import {
  type CommitOutcome,
  copyBlobs,
  deleteLegacySnapshot,
  type NewBlob,
  readSnapshotIndex,
  receiptOf,
  removeSnapshotIndex,
  type StoredFile,
  snapshotLayout,
  writeSnapshotIndex,
} from "../snapshot/index.ts";
import {
  addBlobs,
  collectUnusedBlobs,
  forgetOrphanPacks,
  forgetSnapshot,
  locateBlobs,
  missingBlobs,
  nextBlobExpiry,
  nextStaleCommit,
  nextUnusedSnapshot,
  orphanPacks,
  releaseReferences,
  setSnapshotState,
  snapshotState,
  staleCommits,
  takeReferences,
  touchSnapshot,
  UNUSED_SNAPSHOT_GRACE_MS,
  unusedSnapshots,
} from "./blob-store.ts";
import {
  type BlobLocation,
  gatheringPlan,
  movablePacks,
  moveGathered,
  recordSnapshotPacks,
} from "./pack-store.ts";

/**
 * The owner's blobs and snapshots (docs/DESIGN.md "Incremental snapshots"), run inside the
 * owner index Durable Object: every decision is one synchronous transaction over the tables
 * of `blob-store.ts`, and the R2 writes and deletions happen between them, ordered so that a
 * crash at any point leaves either a finished step or one the alarm finishes. Operations on
 * one snapshot id never overlap: a commit waits for a purge of the same id and the reverse.
 */
export class SnapshotRegistry {
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly bucket: R2Bucket,
    private readonly clock: () => number,
    /** Asks the object's alarm to run by `at` (the alarm calls {@link collectGarbage}). */
    private readonly wakeBy: (at: number) => Promise<void>,
  ) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  missingBlobs(ids: readonly string[]): string[] {
    return this.storage.transactionSync(() => missingBlobs(this.sql, ids, this.clock()));
  }

  async addBlobs(blobs: readonly NewBlob[]): Promise<{ stored: number; bytes: number }> {
    const { fresh, deadPacks } = this.storage.transactionSync(() =>
      addBlobs(this.sql, blobs, this.clock()),
    );
    if (deadPacks.length > 0) await this.bucket.delete(deadPacks);
    const expiry = nextBlobExpiry(this.sql);
    if (expiry !== null) await this.wakeBy(expiry);
    return { stored: fresh.length, bytes: fresh.reduce((sum, b) => sum + b.size, 0) };
  }

  /**
   * True when a session may start on the snapshot: it is ready, or waiting to be purged (the
   * session revives it). A snapshot stored before blobs is adopted on first sight.
   */
  async hasSnapshot(owner: string, id: string): Promise<boolean> {
    await this.adoptLegacy(owner, id);
    const state = snapshotState(this.sql, id)?.state;
    // Asked for: a session on it is probably next, so its unused grace starts again.
    if (state === "ready") touchSnapshot(this.sql, id, this.clock());
    return state === "ready" || state === "deleting";
  }

  /**
   * Whether a session may be registered on the snapshot now, in the caller's transaction: a
   * snapshot waiting for its purge is revived (its pending deletion dropped).
   */
  claimForSession(id: string): boolean {
    const state = snapshotState(this.sql, id)?.state;
    if (state === "deleting") {
      setSnapshotState(this.sql, "", id, "ready", this.clock());
      this.sql.exec("DELETE FROM orphan_snapshots WHERE snapshot_id = ?", id);
      return true;
    }
    return state === "ready";
  }

  /** Snapshots stored before blobs have no row yet: one is added when R2 holds such an index. */
  async adoptLegacy(owner: string, id: string): Promise<void> {
    if (snapshotState(this.sql, id) !== null) return;
    if ((await snapshotLayout(this.bucket, owner, id)) !== 1) return;
    this.storage.transactionSync(() => {
      if (snapshotState(this.sql, id) === null) {
        setSnapshotState(this.sql, owner, id, "ready", this.clock(), 1);
      }
    });
  }

  /** The snapshot is used by no session any more: it waits for the purge (in the transaction). */
  markUnused(owner: string, id: string): void {
    const state = snapshotState(this.sql, id);
    if (state === null) setSnapshotState(this.sql, owner, id, "deleting", this.clock(), 1);
    else if (state.state === "ready")
      setSnapshotState(this.sql, owner, id, "deleting", this.clock());
    this.sql.exec(
      "INSERT OR IGNORE INTO orphan_snapshots (owner, snapshot_id) VALUES (?, ?)",
      owner,
      id,
    );
  }

  /**
   * Commits the tree `files` as snapshot `id`: every blob must be stored (else `missing`),
   * the index is written with each blob's place, then — if every blob is still where it was —
   * one reference per distinct blob makes it ready.
   */
  commitSnapshot(
    owner: string,
    id: string,
    files: readonly ManifestFile[],
    skipped: readonly SkippedEntry[],
  ): Promise<CommitOutcome> {
    return this.exclusive(id, () => this.commit(owner, id, files, skipped));
  }

  private async commit(
    owner: string,
    id: string,
    files: readonly ManifestFile[],
    skipped: readonly SkippedEntry[],
  ): Promise<CommitOutcome> {
    await this.finishPurge(id);
    const existing = snapshotState(this.sql, id);
    if (existing !== null && existing.state !== "committing") {
      this.storage.transactionSync(() => {
        this.claimForSession(id);
        touchSnapshot(this.sql, id, this.clock());
      });
      const index = await readSnapshotIndex(this.bucket, owner, id);
      if (index !== null) return { kind: "existed", receipt: receiptOf(index) };
    }
    const sorted = [...files].sort((a, b) => comparePaths(a.path, b.path));
    const blobs = [...new Set(sorted.map((f) => f.blob))];
    const before = locateBlobs(this.sql, blobs);
    if (before.missing.length > 0) return { kind: "missing", missing: before.missing };
    const bytes = sorted.reduce((sum, f) => sum + (before.found.get(f.blob)?.size ?? 0), 0);
    if (bytes > SNAPSHOT_MAX_UNCOMPRESSED_BYTES) return { kind: "too_large", bytes };
    await this.gather(owner, blobs);
    // From here to the record of the packs it reads, nothing awaits: no blob can move between.
    const { found, missing } = locateBlobs(this.sql, blobs);
    if (missing.length > 0) return { kind: "missing", missing };
    const stored: StoredFile[] = sorted.map((f) => {
      const where = found.get(f.blob) as BlobLocation;
      return {
        path: f.path,
        size: where.size,
        blob: f.blob,
        key: where.pack,
        offset: where.offset,
      };
    });
    this.storage.transactionSync(() => {
      setSnapshotState(this.sql, owner, id, "committing", this.clock());
      recordSnapshotPacks(
        this.sql,
        id,
        [...found.values()].map((where) => where.pack),
      );
    });
    let index: Awaited<ReturnType<typeof writeSnapshotIndex>>;
    try {
      index = await writeSnapshotIndex(this.bucket, owner, id, stored, skipped);
    } catch (error) {
      this.storage.transactionSync(() => forgetSnapshot(this.sql, id));
      throw error;
    }
    const taken = this.storage.transactionSync(() =>
      takeReferences(this.sql, owner, id, found, this.clock()),
    );
    if (!taken.ok) {
      this.storage.transactionSync(() => forgetSnapshot(this.sql, id));
      await removeSnapshotIndex(this.bucket, owner, id);
      return { kind: "missing", missing: taken.missing };
    }
    await this.wakeBy(this.clock() + UNUSED_SNAPSHOT_GRACE_MS + 1);
    return { kind: "stored", receipt: receiptOf(index) };
  }

  /**
   * Gathers the tree's scattered blobs into one new pack when it reads too many packs
   * (pack-store.ts `gatheringPlan`): copies them, then moves their rows there — each only if it
   * did not move meanwhile — so this commit and later ones read the new pack. Only a saving:
   * when the copy fails (a source pack the collector just deleted, an R2 error), the commit
   * goes on with the blobs where they are.
   */
  private async gather(owner: string, blobs: readonly string[]): Promise<void> {
    const { found } = locateBlobs(this.sql, blobs);
    const plan = gatheringPlan(found, blobs, movablePacks(this.sql, found));
    if (plan.length === 0) return;
    let copies: NewBlob[];
    try {
      copies = await copyBlobs(this.bucket, owner, plan);
    } catch (err) {
      console.error(
        "planport: gathering a snapshot's scattered blobs failed; left as they are",
        err,
      );
      return;
    }
    const unused = this.storage.transactionSync(() =>
      moveGathered(
        this.sql,
        plan.map((g, i) => ({ id: g.id, from: g.from, to: copies[i] as NewBlob })),
        this.clock(),
      ),
    );
    if (unused.length > 0) await this.deleteOrphanPacks();
  }

  /**
   * Purges a snapshot no session uses: its blobs released, its index deleted, its row gone.
   * A snapshot a session revived meanwhile is left alone. Resumable: each step is recorded.
   */
  async purge(owner: string, id: string): Promise<void> {
    if (
      snapshotState(this.sql, id) === null &&
      (await snapshotLayout(this.bucket, owner, id)) === 1
    ) {
      // Queued for deletion before blobs existed: a snapshot with its own packs.
      this.storage.transactionSync(() => {
        if (snapshotState(this.sql, id) === null) {
          setSnapshotState(this.sql, owner, id, "deleting", this.clock(), 1);
        }
      });
    }
    await this.exclusive(id, () => this.purgeSteps(owner, id));
    await this.collectGarbage();
  }

  private async finishPurge(id: string): Promise<void> {
    const state = snapshotState(this.sql, id);
    if (state?.state === "purging" || state?.state === "released") {
      const owner = this.ownerOf(id);
      await this.purgeSteps(owner, id);
    }
  }

  private ownerOf(id: string): string {
    const row = this.sql
      .exec<{ owner: string }>("SELECT owner FROM snapshots WHERE id = ?", id)
      .toArray()[0];
    return row?.owner ?? "";
  }

  private async purgeSteps(owner: string, id: string): Promise<void> {
    const used = () =>
      this.sql.exec("SELECT 1 FROM sessions WHERE snapshot_id = ? LIMIT 1", id).toArray().length >
      0;
    const dropOrphan = () =>
      this.sql.exec("DELETE FROM orphan_snapshots WHERE snapshot_id = ?", id);
    let state = snapshotState(this.sql, id);
    if (state === null || state.state === "ready" || state.state === "committing") {
      dropOrphan();
      return;
    }
    if (state.state === "deleting") {
      const go = this.storage.transactionSync(() => {
        if (used()) {
          this.claimForSession(id);
          return false;
        }
        setSnapshotState(this.sql, owner, id, "purging", this.clock());
        return true;
      });
      if (!go) return;
      state = snapshotState(this.sql, id);
    }
    if (state?.state === "purging") {
      const blobs =
        state.layout === 2
          ? ((await readSnapshotIndex(this.bucket, owner, id))?.files.map((f) => f.blob) ?? [])
          : [];
      this.storage.transactionSync(() => {
        if (snapshotState(this.sql, id)?.state !== "purging") return;
        releaseReferences(this.sql, blobs, this.clock());
        setSnapshotState(this.sql, owner, id, "released", this.clock());
      });
      state = snapshotState(this.sql, id);
    }
    if (state?.state === "released") {
      if (state.layout === 1) await deleteLegacySnapshot(this.bucket, owner, id);
      else await removeSnapshotIndex(this.bucket, owner, id);
      this.storage.transactionSync(() => {
        forgetSnapshot(this.sql, id);
        dropOrphan();
      });
    }
  }

  /**
   * Drops what nothing uses: snapshots no session used within their grace (purged like any
   * other), commits that died with their runtime, blobs unused past their grace, and the packs
   * left without a blob. Then asks to run again when the next grace ends.
   */
  async collectGarbage(): Promise<void> {
    const now = this.clock();
    for (const { owner, id } of unusedSnapshots(this.sql, now)) {
      this.storage.transactionSync(() => this.markUnused(owner, id));
      await this.exclusive(id, () => this.purgeSteps(owner, id));
    }
    for (const { owner, id } of staleCommits(this.sql, now)) {
      await this.exclusive(id, async () => {
        if (snapshotState(this.sql, id)?.state !== "committing") return;
        await removeSnapshotIndex(this.bucket, owner, id);
        this.storage.transactionSync(() => forgetSnapshot(this.sql, id));
      });
    }
    this.storage.transactionSync(() => collectUnusedBlobs(this.sql, now));
    await this.deleteOrphanPacks();
    const next = [
      nextBlobExpiry(this.sql),
      nextStaleCommit(this.sql),
      nextUnusedSnapshot(this.sql),
    ].filter((t): t is number => t !== null);
    if (next.length > 0) await this.wakeBy(Math.min(...next));
  }

  /** Deletes the packs no blob and no snapshot uses any more (a failure is retried later). */
  private async deleteOrphanPacks(): Promise<void> {
    const packs = orphanPacks(this.sql);
    for (let i = 0; i < packs.length; i += 1000) {
      const batch = packs.slice(i, i + 1000);
      await this.bucket.delete(batch);
      forgetOrphanPacks(this.sql, batch);
    }
  }

  /** Runs `work` when no other operation on snapshot `id` runs (in this object's memory). */
  private async exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
    for (;;) {
      const running = this.busy.get(id);
      if (running === undefined) break;
      await running.catch(() => {});
    }
    const run = work();
    this.busy.set(id, run);
    try {
      return await run;
    } finally {
      if (this.busy.get(id) === run) this.busy.delete(id);
    }
  }
}
