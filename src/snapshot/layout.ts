import { z } from "zod";
import { SNAPSHOT_ID_PATTERN, type SnapshotReceipt } from "../protocol/index.ts";

/**
 * Where snapshots and blobs live in R2 (DESIGN.md "Snapshots in R2") and the shape of an index:
 *
 *   blobs/<owner>/<upload>-NNNN          blob contents concatenated, at most 8 MiB each; which
 *                                        blob is where is the owner index's `blobs` table
 *   snapshots/<owner>/<id>/index.json   version 2: files (path, size, blob, key, offset),
 *                                        skipped, totals — the locations resolved at commit
 *
 * Version 1 (before incremental snapshots) kept a snapshot's own packs beside its index,
 * `snapshots/<owner>/<id>/pack-NNNN`; such snapshots are still read and deleted.
 * `index.json` is written last, so its presence means the snapshot is complete.
 */

/** Upper bound of one pack object; a reader holds at most one pack's bytes at a time. */
export const PACK_MAX_BYTES = 8 * 1024 * 1024;

const OWNER_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** The key prefix of one snapshot (ends with `/`). Refuses owners or ids that could escape it. */
export function snapshotPrefix(owner: string, id: string): string {
  if (!OWNER_PATTERN.test(owner)) throw new Error(`invalid snapshot owner: ${owner}`);
  if (!SNAPSHOT_ID_PATTERN.test(id)) throw new Error(`invalid snapshot id: ${id}`);
  return `snapshots/${owner}/${id}/`;
}

export function indexKey(prefix: string): string {
  return `${prefix}index.json`;
}

export function packKey(prefix: string, pack: number): string {
  return `${prefix}pack-${String(pack).padStart(4, "0")}`;
}

/** The key prefix of one blob upload's packs (an upload is a fresh random name). */
export function blobPackPrefix(owner: string, upload: string): string {
  if (!OWNER_PATTERN.test(owner)) throw new Error(`invalid snapshot owner: ${owner}`);
  if (!/^[0-9a-f]{32}$/.test(upload)) throw new Error(`invalid upload name: ${upload}`);
  return `blobs/${owner}/${upload}-`;
}

/** True when `id` has the form of a snapshot id (so it can name a key). */
export function isSnapshotId(id: string): boolean {
  return SNAPSHOT_ID_PATTERN.test(id);
}

const IndexedFileSchema = z.object({
  path: z.string(),
  size: z.number().int().nonnegative(),
  pack: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
});
export type IndexedFile = z.infer<typeof IndexedFileSchema>;

const IndexV1Schema = z.object({
  version: z.literal(1),
  id: z.string(),
  /** Pack order (the archive's order), which is also the order `scan` yields. */
  files: z.array(IndexedFileSchema),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  /** Total size of the stored file texts (what the receipt calls `bytes`). */
  bytes: z.number().int().nonnegative(),
  packs: z.number().int().nonnegative(),
});

const StoredFileSchema = z.object({
  path: z.string(),
  size: z.number().int().nonnegative(),
  blob: z.string(),
  /** The R2 key of the pack holding the blob. */
  key: z.string(),
  offset: z.number().int().nonnegative(),
});
export type StoredFile = z.infer<typeof StoredFileSchema>;

const IndexV2Schema = z.object({
  version: z.literal(2),
  id: z.string(),
  /** Sorted by path (code point order). */
  files: z.array(StoredFileSchema),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  bytes: z.number().int().nonnegative(),
});
export type SnapshotIndex = z.infer<typeof IndexV2Schema>;

const AnyIndexSchema = z.discriminatedUnion("version", [IndexV1Schema, IndexV2Schema]);

/** The upload receipt (docs/PROTOCOL.md `POST /v1/snapshots`) a stored index stands for. */
export function receiptOf(index: {
  id: string;
  files: readonly unknown[];
  bytes: number;
  skipped: SnapshotReceipt["skipped"];
}): SnapshotReceipt {
  return { id: index.id, files: index.files.length, bytes: index.bytes, skipped: index.skipped };
}

/**
 * Reads and validates a snapshot's index, either version, as version 2 (a version 1 index's
 * pack numbers become the keys of its own packs); null when it is not stored.
 */
export async function loadIndex(bucket: R2Bucket, prefix: string): Promise<SnapshotIndex | null> {
  const object = await bucket.get(indexKey(prefix));
  if (object === null) return null;
  const parsed = AnyIndexSchema.safeParse(await object.json());
  if (!parsed.success) throw new Error(`snapshot index ${indexKey(prefix)} is corrupt`);
  const index = parsed.data;
  if (index.version === 2) return index;
  return {
    version: 2,
    id: index.id,
    files: index.files.map((f) => ({
      path: f.path,
      size: f.size,
      blob: "",
      key: packKey(prefix, f.pack),
      offset: f.offset,
    })),
    skipped: index.skipped,
    bytes: index.bytes,
  };
}

/** The stored layout of a snapshot: 1 = its own packs (before blobs), 2 = blobs. */
export async function storedLayout(bucket: R2Bucket, prefix: string): Promise<1 | 2 | null> {
  const object = await bucket.get(indexKey(prefix));
  if (object === null) return null;
  const head = (await object.json()) as { version?: unknown };
  return head.version === 1 ? 1 : 2;
}
