import { z } from "zod";
import { SNAPSHOT_ID_PATTERN, type SnapshotReceipt } from "../protocol/index.ts";

/**
 * Where a snapshot lives in R2 (DESIGN.md "Snapshots in R2") and the shape of its index:
 *
 *   snapshots/<owner>/<id>/index.json   files (path, size, pack, offset), skipped, totals
 *   snapshots/<owner>/<id>/pack-NNNN    file texts concatenated, at most 8 MiB each
 *
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

export const SnapshotIndexSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  /** Pack order (the archive's order), which is also the order `scan` yields. */
  files: z.array(IndexedFileSchema),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  /** Total size of the stored file texts (what the receipt calls `bytes`). */
  bytes: z.number().int().nonnegative(),
  packs: z.number().int().nonnegative(),
});
export type SnapshotIndex = z.infer<typeof SnapshotIndexSchema>;

/** The upload receipt (docs/PROTOCOL.md `POST /v1/snapshots`) a stored index stands for. */
export function receiptOf(index: SnapshotIndex): SnapshotReceipt {
  return { id: index.id, files: index.files.length, bytes: index.bytes, skipped: index.skipped };
}

/** Reads and validates a snapshot's index; null when it is not stored. */
export async function loadIndex(bucket: R2Bucket, prefix: string): Promise<SnapshotIndex | null> {
  const object = await bucket.get(indexKey(prefix));
  if (object === null) return null;
  const parsed = SnapshotIndexSchema.safeParse(await object.json());
  if (!parsed.success) throw new Error(`snapshot index ${indexKey(prefix)} is corrupt`);
  return parsed.data;
}
