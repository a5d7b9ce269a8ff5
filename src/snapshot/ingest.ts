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
import type { BlobRegistry, NewBlob } from "./registry.ts";

export type IngestResult = Result<SnapshotReceipt, IngestError>;

/**
 * Stores an uploaded tar.gz of a whole tree as a snapshot of `owner` (see `index.ts` for the
 * contract). Its files become blobs like those of an incremental upload (docs/DESIGN.md
 * "Incremental snapshots"): written to fresh packs, recorded in the owner's registry (a blob
 * the owner already has keeps its first copy), then the tree is committed.
 *
 * The compressed body (at most 25 MiB) is buffered before anything else happens: its sha256
 * is the snapshot id, and knowing the id first lets an unchanged tree be answered from the
 * stored index without parsing or writing anything. Only the compressed bytes are held; the
 * tar stream is parsed as it inflates.
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
    const packs = new PackWriter(bucket, blobPackPrefix(owner, newUploadName()));
    let tree: UnpackedTree;
    try {
      tree = await unpack(compressed, packs);
      await registry.addBlobs(tree.blobs);
    } catch (error) {
      // A refused archive is refused the same way every time, so nothing written for it can
      // be shared with a successful upload: remove the partial packs.
      await packs.settle();
      if (packs.keys.length > 0) await bucket.delete(packs.keys);
      throw error;
    }
    return committed(await registry.commitSnapshot(id, tree.files, tree.skipped));
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

interface UnpackedTree {
  files: ManifestFile[];
  skipped: SkippedEntry[];
  blobs: NewBlob[];
}

/** Streams the archive into packs; returns the tree and the blobs written. */
async function unpack(compressed: readonly Uint8Array[], packs: PackWriter): Promise<UnpackedTree> {
  const entries = openArchive(compressed);
  const files: ManifestFile[] = [];
  const skipped: SkippedEntry[] = [];
  const blobs: NewBlob[] = [];
  const written = new Set<string>();
  const seen = new FileSet();
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
      if (written.has(blob)) continue;
      written.add(blob);
      blobs.push(await packs.appendBlob(blob, content));
    }
  } catch (error) {
    await entries.cancel(error).catch(() => {});
    throw error;
  }
  await packs.finish();
  return { files, skipped, blobs };
}
