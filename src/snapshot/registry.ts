import type { ManifestFile, SkippedEntry, SnapshotReceipt } from "../protocol/index.ts";

/**
 * What the snapshot module needs from the owner's record of blobs and snapshots (the owner
 * index Durable Object, src/owner/owner-index.ts; docs/DESIGN.md "Incremental snapshots").
 * The bytes are in R2; the record says which blob is where and who uses it.
 */

/** An uploaded blob and where its bytes were put. */
export interface NewBlob {
  id: string;
  /** R2 key of the pack that holds it. */
  pack: string;
  offset: number;
  size: number;
}

/** How committing a tree ended. */
export type CommitOutcome =
  /** Stored now, or (`existed`) the owner had stored this very tree already. */
  | { kind: "stored" | "existed"; receipt: SnapshotReceipt }
  /** Some blobs are not stored (never sent, or dropped since): send them, then commit again. */
  | { kind: "missing"; missing: string[] }
  /** The files add up to more than a snapshot may hold. */
  | { kind: "too_large"; bytes: number };

export interface BlobRegistry {
  /** The ids among `ids` this owner has not stored. */
  missingBlobs(ids: string[]): Promise<string[]>;
  /** Records uploaded blobs (deleting packs that turned out to hold only known ones). */
  addBlobs(blobs: NewBlob[]): Promise<{ stored: number; bytes: number }>;
  /** Stores the tree `files` (sorted by path) as snapshot `id`, writing its index. */
  commitSnapshot(
    id: string,
    files: ManifestFile[],
    skipped: SkippedEntry[],
  ): Promise<CommitOutcome>;
  /** True when the owner has the snapshot (and a session may be started on it). */
  hasSnapshot(id: string): Promise<boolean>;
}
