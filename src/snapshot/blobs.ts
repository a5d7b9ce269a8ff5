import {
  BLOB_ID_PATTERN,
  type BlobsReceipt,
  err,
  gitBlobId,
  isTextContent,
  ok,
  type Result,
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
} from "../protocol/index.ts";
import {
  discard,
  fromArchive,
  newUploadName,
  openArchive,
  readBody,
  readCompressed,
  refuseWithoutGzipMagic,
} from "./archive.ts";
import { type IngestError, IngestFailure, invalidBlob, tooManyFiles } from "./errors.ts";
import { blobPackPrefix } from "./layout.ts";
import { PackWriter } from "./packs.ts";
import type { BlobRegistry, NewBlob } from "./registry.ts";

/**
 * `POST /v1/blobs` (docs/PROTOCOL.md "Incremental snapshots"): a tar.gz whose entries are
 * named by their blob id. Every entry is checked before anything is recorded: a regular file,
 * named by a blob id, at most 1 MiB, text (the client never sends what a snapshot would skip),
 * and its content must hash to its name — a blob is trusted only for what it was shown to be.
 * The same limits as a tree upload (25 MiB compressed, 100 MiB inflated, 20,000 entries).
 * Any refusal leaves nothing behind.
 *
 * @example
 * const stored = await ingestBlobs(env.SNAPSHOTS, registry, owner, c.req.raw.body);
 * if (stored.ok) stored.value // { received: 2, stored: 1, bytes: 812 }
 */
export async function ingestBlobs(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<Result<BlobsReceipt, IngestError>> {
  try {
    const compressed = await readCompressed(body);
    refuseWithoutGzipMagic(compressed);
    const packs = new PackWriter(bucket, blobPackPrefix(owner, newUploadName()));
    try {
      const { blobs, received } = await unpackBlobs(compressed, packs);
      const added = await registry.addBlobs(blobs);
      return ok({ received, stored: added.stored, bytes: added.bytes });
    } catch (error) {
      await packs.settle();
      if (packs.keys.length > 0) await bucket.delete(packs.keys);
      throw error;
    }
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

async function unpackBlobs(
  compressed: readonly Uint8Array[],
  packs: PackWriter,
): Promise<{ blobs: NewBlob[]; received: number }> {
  const entries = openArchive(compressed);
  const blobs: NewBlob[] = [];
  const seen = new Set<string>();
  let received = 0;
  try {
    for (;;) {
      const next = await fromArchive(entries.read());
      if (next.done) break;
      const entry = next.value;
      const name = entry.header.name;
      const type = entry.header.type ?? "file";
      if (type === "directory") {
        await discard(entry);
        continue;
      }
      received += 1;
      if (received > SNAPSHOT_MAX_FILES) throw tooManyFiles();
      const shown = JSON.stringify(name.slice(0, 60));
      if (type !== "file")
        throw invalidBlob(`Entry ${shown} is a ${type}; a blob pack holds only files.`);
      if (!BLOB_ID_PATTERN.test(name)) {
        throw invalidBlob(
          `Entry ${shown} is not named by a blob id (40 lowercase hex digits: git's blob SHA-1 of the content).`,
        );
      }
      if (entry.header.size > SNAPSHOT_MAX_FILE_BYTES) {
        throw invalidBlob(
          `Blob ${name} is larger than 1 MiB; a snapshot skips such files, so never send them.`,
        );
      }
      const content = await readBody(entry);
      if (!isTextContent(content)) {
        throw invalidBlob(
          `Blob ${name} is not text (a NUL byte or invalid UTF-8); a snapshot skips such files, so never send them.`,
        );
      }
      const actual = gitBlobId(content);
      if (actual !== name) {
        throw invalidBlob(`Blob ${name} does not match its content, whose blob id is ${actual}.`);
      }
      if (seen.has(name)) continue;
      seen.add(name);
      blobs.push(await packs.appendBlob(name, content));
    }
  } catch (error) {
    await entries.cancel(error).catch(() => {});
    throw error;
  }
  await packs.finish();
  return { blobs, received };
}
