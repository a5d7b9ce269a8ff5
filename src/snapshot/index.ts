import type { SnapshotFiles } from "./files.ts";
import { type IngestResult, ingest } from "./ingest.ts";
import { indexKey, isSnapshotId, snapshotPrefix } from "./layout.ts";
import { openSnapshotReader } from "./reader.ts";

/**
 * Repository snapshots: ingest of an uploaded tar.gz into R2 (packs + file index), the
 * per-owner existence check, read access for the planner's tools, and deletion.
 * Layout and index format: `layout.ts`; file rules shared with the client:
 * `src/protocol/snapshot-rules.ts`.
 */

export { type IngestError, payloadTooLarge } from "./errors.ts";
export type { SnapshotEntry, SnapshotFiles } from "./files.ts";

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
 * const ingested = await ingestSnapshot(c.env.SNAPSHOTS, owner, body);
 * if (!ingested.ok) return sendError(c, ingested.error); // 400 or 413 with the error body
 * return c.json(ingested.value, 201);
 */
export async function ingestSnapshot(
  bucket: R2Bucket,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<IngestResult> {
  return ingest(bucket, owner, body);
}

/**
 * True when `owner` has stored the snapshot `id` (an id of the wrong form is simply absent).
 *
 * @example
 * if (!(await snapshotExists(env.SNAPSHOTS, owner, id))) return c.body(null, 404);
 */
export async function snapshotExists(
  bucket: R2Bucket,
  owner: string,
  id: string,
): Promise<boolean> {
  if (!isSnapshotId(id)) return false;
  return (await bucket.head(indexKey(snapshotPrefix(owner, id)))) !== null;
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

/**
 * Deletes a snapshot (index first, so it stops existing before its packs go). Idempotent.
 *
 * @example
 * await deleteSnapshot(env.SNAPSHOTS, owner, id); // when no session of the owner uses it
 */
export async function deleteSnapshot(bucket: R2Bucket, owner: string, id: string): Promise<void> {
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
