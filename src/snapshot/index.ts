import type { SkippedEntry } from "../protocol/index.ts";
import type { SnapshotFiles } from "./files.ts";
import { type IngestResult, ingest } from "./ingest.ts";
import {
  indexKey,
  isSnapshotId,
  loadIndex,
  receiptOf,
  type SnapshotIndex,
  type StoredFile,
  snapshotPrefix,
  storedLayout,
} from "./layout.ts";
import { openSnapshotReader } from "./reader.ts";
import type { BlobRegistry } from "./registry.ts";

/**
 * Repository snapshots: a tree of blobs per snapshot, the blobs deduplicated per owner
 * (docs/DESIGN.md "Incremental snapshots"). Three ways in — a whole tar.gz (`ingestSnapshot`,
 * for old clients and scripts), blob packs (`ingestBlobs`) and tree manifests
 * (`commitManifest`) — one layout in R2 (`layout.ts`), read access for the planner's tools, and
 * the index writes and deletions the owner's registry (src/owner/owner-index.ts) runs. File
 * rules shared with the client: `src/protocol/snapshot-rules.ts`.
 */

export { ingestBlobs } from "./blobs.ts";
export { type IngestError, payloadTooLarge } from "./errors.ts";
export type { SnapshotEntry, SnapshotFiles } from "./files.ts";
export { copyBlobs, type LocatedBlob } from "./gather.ts";
export { commitManifest } from "./manifest.ts";
export type { BlobRegistry, CommitOutcome, NewBlob } from "./registry.ts";
export { receiptOf, type SnapshotIndex, type StoredFile };

/**
 * Stores an uploaded tar.gz as a snapshot of `owner`, streaming gunzip and tar parsing.
 *
 * - The id is the hex sha256 of the body. If `owner` already stored it, the stored receipt is
 *   returned and nothing is parsed or rewritten.
 * - Regular text files are stored; folders are not files. Absolute paths, `..` segments,
 *   symlinks, hard links, devices and FIFOs, names that are not UTF-8 or hold control
 *   characters, binary files (NUL byte or invalid UTF-8) and files over 1 MiB are skipped and
 *   listed as `{path, reason}` (reasons: `SKIP_REASON_TEXT` in the protocol).
 * - Refusals: 413 `payload_too_large` (> 25 MiB compressed), 413 `snapshot_too_large`
 *   (> 100 MiB of tar stream after gunzip, counted while streaming: a gzip bomb is cut off),
 *   413 `snapshot_too_many_files` (> 20,000 entries other than folders), 400 `invalid_body`
 *   (empty, not gzip, or not a tar archive). Nothing is left in R2 after a refusal.
 *
 * The receipt's `files` counts stored files and `bytes` is the total size of their stored
 * contents (what the planner can read), not the size of the upload.
 *
 * @example
 * const ingested = await ingestSnapshot(c.env.SNAPSHOTS, registry, owner, body);
 * if (!ingested.ok) return sendError(c, ingested.error); // 400 or 413 with the error body
 * return c.json(ingested.value, 201);
 */
export async function ingestSnapshot(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<IngestResult> {
  return ingest(bucket, registry, owner, body);
}

/**
 * Read access to a stored snapshot for the planner's tools. Lazy: nothing is fetched until
 * the first call, which throws a readable error if the snapshot is not (or no longer) stored.
 *
 * @example
 * const files = openSnapshot(env.SNAPSHOTS, owner, snapshotId);
 * const text = await files.read("src/app.ts"); // null when absent
 */
export function openSnapshot(bucket: R2Bucket, owner: string, id: string): SnapshotFiles {
  return openSnapshotReader(bucket, snapshotPrefix(owner, id));
}

/** A snapshot's index (null when it is not stored): its files with their blobs and places. */
export function readSnapshotIndex(
  bucket: R2Bucket,
  owner: string,
  id: string,
): Promise<SnapshotIndex | null> {
  return loadIndex(bucket, snapshotPrefix(owner, id));
}

/** Writes a committed tree's index (the registry resolved each blob's place). */
export async function writeSnapshotIndex(
  bucket: R2Bucket,
  owner: string,
  id: string,
  files: readonly StoredFile[],
  skipped: readonly SkippedEntry[],
): Promise<SnapshotIndex> {
  const bytes = files.reduce((sum, f) => sum + f.size, 0);
  const index: SnapshotIndex = { version: 2, id, files: [...files], skipped: [...skipped], bytes };
  await bucket.put(indexKey(snapshotPrefix(owner, id)), JSON.stringify(index), {
    httpMetadata: { contentType: "application/json" },
  });
  return index;
}

/** Deletes a snapshot's index (its blobs are the registry's to release). Idempotent. */
export async function removeSnapshotIndex(
  bucket: R2Bucket,
  owner: string,
  id: string,
): Promise<void> {
  if (!isSnapshotId(id)) return;
  await bucket.delete(indexKey(snapshotPrefix(owner, id)));
}

/** 1 for a snapshot stored before blobs (its own packs beside its index), 2, or null when absent. */
export function snapshotLayout(bucket: R2Bucket, owner: string, id: string): Promise<1 | 2 | null> {
  if (!isSnapshotId(id)) return Promise.resolve(null);
  return storedLayout(bucket, snapshotPrefix(owner, id));
}

/**
 * Deletes a snapshot stored before blobs: its index first, so it stops existing before its
 * packs go. Idempotent.
 */
export async function deleteLegacySnapshot(
  bucket: R2Bucket,
  owner: string,
  id: string,
): Promise<void> {
  if (!isSnapshotId(id)) return;
  const prefix = snapshotPrefix(owner, id);
  await bucket.delete(indexKey(prefix));
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    if (page.objects.length > 0) await bucket.delete(page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
}
