import {
  err,
  gitBlobId,
  isTextContent,
  type ManifestFile,
  ok,
  type Result,
  type SkippedEntry,
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
  type SnapshotReceipt,
} from "../protocol/index.ts";
import {
  discard,
  fromArchive,
  newUploadName,
  openArchive,
  readBody,
  readCompressed,
  refuseWithoutGzipMagic,
  sha256Hex,
} from "./archive.ts";
import { committed } from "./commit.ts";
import { classifyEntry } from "./entry-rules.ts";
import { type IngestError, IngestFailure, tooManyFiles } from "./errors.ts";
import { FileSet } from "./file-set.ts";
import { blobPackPrefix, loadIndex, receiptOf, snapshotPrefix } from "./layout.ts";
import { PackWriter } from "./packs.ts";
import type { BlobRegistry, CommitOutcome, NewBlob } from "./registry.ts";

export type IngestResult = Result<SnapshotReceipt, IngestError>;

/**
 * Stores an uploaded tar.gz of a whole tree as a snapshot of `owner` (see `index.ts` for the
 * contract). Its files become blobs like those of an incremental upload (docs/DESIGN.md
 * "Incremental snapshots"): only the blobs the owner lacks are written, to fresh packs, and
 * recorded in the owner's registry; then the tree is committed.
 *
 * The compressed body (at most 25 MiB) is buffered before anything else happens: its sha256
 * is the snapshot id, and knowing the id first lets an unchanged tree be answered from the
 * stored index without parsing or writing anything. Only the compressed bytes are held; the
 * tar stream is parsed as it inflates.
 *
 * Why only the missing blobs: a tarball is the whole tree every time, and a script that uploads
 * its next commit sends thousands of files the owner already has. Writing them all made every
 * upload cost a full tree of packs in R2, of which only the few new blobs were ever read: the
 * packs could never be reclaimed while those blobs lived, and every scan of a later snapshot
 * fetched whole spans of dead bytes around them (DESIGN.md "Incremental snapshots").
 */
export async function ingest(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<IngestResult> {
  try {
    const compressed = await readCompressed(body);
    refuseWithoutGzipMagic(compressed);
    const id = await sha256Hex(compressed);
    if (await registry.hasSnapshot(id)) {
      const stored = await loadIndex(bucket, snapshotPrefix(owner, id));
      if (stored !== null) return ok(receiptOf(stored));
    }
    // The blobs the owner lacked were asked for while unpacking and are kept for an hour
    // (blob-store.ts); a commit that still finds some gone — an ingest slower than that —
    // unpacks the body again, which writes exactly those.
    let outcome = await storeTree(bucket, registry, owner, compressed, id);
    if (outcome.kind === "missing")
      outcome = await storeTree(bucket, registry, owner, compressed, id);
    return committed(outcome);
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

/** Unpacks the tree, writes and records the blobs the owner lacks, and commits the tree. */
async function storeTree(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  compressed: readonly Uint8Array[],
  id: string,
): Promise<CommitOutcome> {
  const packs = new PackWriter(bucket, blobPackPrefix(owner, newUploadName()));
  let tree: UnpackedTree;
  try {
    tree = await unpack(compressed, packs, registry);
    await registry.addBlobs(tree.blobs);
  } catch (error) {
    // A refused archive is refused the same way every time, so nothing written for it can
    // be shared with a successful upload: remove the partial packs.
    await packs.settle();
    if (packs.keys.length > 0) await bucket.delete(packs.keys);
    throw error;
  }
  return registry.commitSnapshot(id, tree.files, tree.skipped);
}

interface UnpackedTree {
  files: ManifestFile[];
  skipped: SkippedEntry[];
  /** The blobs written to packs: those the owner lacked. */
  blobs: NewBlob[];
}

/**
 * How many file texts are held before the owner is asked which of them it lacks: one question
 * per batch, at most {@link BATCH_MAX_BYTES} held besides the packs being filled.
 */
const BATCH_MAX_FILES = 1_000;
const BATCH_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Streams the archive; returns the tree and the blobs written. Texts are held in batches and
 * only those the owner lacks go to the packs.
 */
async function unpack(
  compressed: readonly Uint8Array[],
  packs: PackWriter,
  registry: BlobRegistry,
): Promise<UnpackedTree> {
  const entries = openArchive(compressed);
  const files: ManifestFile[] = [];
  const skipped: SkippedEntry[] = [];
  const blobs: NewBlob[] = [];
  const seenBlobs = new Set<string>();
  const seen = new FileSet();
  let batch: { blob: string; content: Uint8Array }[] = [];
  let batchBytes = 0;
  const writeMissing = async () => {
    if (batch.length === 0) return;
    const missing = new Set(await registry.missingBlobs(batch.map((b) => b.blob)));
    for (const { blob, content } of batch) {
      if (missing.has(blob)) blobs.push(await packs.appendBlob(blob, content));
    }
    batch = [];
    batchBytes = 0;
  };
  let entryCount = 0;
  try {
    for (;;) {
      const next = await fromArchive(entries.read());
      if (next.done) break;
      const entry = next.value;
      const verdict = classifyEntry(entry.header);
      if (verdict.kind === "directory") {
        await discard(entry);
        continue;
      }
      entryCount += 1;
      if (entryCount > SNAPSHOT_MAX_FILES) throw tooManyFiles();
      if (verdict.kind === "skip") {
        skipped.push({ path: verdict.path, reason: verdict.reason });
        await discard(entry);
        continue;
      }
      if (entry.header.size > SNAPSHOT_MAX_FILE_BYTES) {
        skipped.push({ path: verdict.path, reason: "too_large" });
        await discard(entry);
        continue;
      }
      const conflict = seen.admit(verdict.path);
      if (conflict !== null) {
        skipped.push({ path: verdict.path, reason: conflict });
        await discard(entry);
        continue;
      }
      const content = await readBody(entry);
      if (!isTextContent(content)) {
        skipped.push({ path: verdict.path, reason: "binary" });
        continue;
      }
      const blob = gitBlobId(content);
      files.push({ path: verdict.path, blob });
      if (seenBlobs.has(blob)) continue;
      seenBlobs.add(blob);
      batch.push({ blob, content });
      batchBytes += content.byteLength;
      if (batch.length >= BATCH_MAX_FILES || batchBytes >= BATCH_MAX_BYTES) await writeMissing();
    }
    await writeMissing();
  } catch (error) {
    await entries.cancel(error).catch(() => {});
    throw error;
  }
  await packs.finish();
  return { files, skipped, blobs };
}
