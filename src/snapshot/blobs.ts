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
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
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
import { NotFixedForm, readFixedFormPack } from "./blob-pack-reader.ts";
import { type IngestError, IngestFailure, invalidBlob, tooManyFiles } from "./errors.ts";
import { gunzipChunks } from "./gunzip.ts";
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
    const stored = await storeBlobs(bucket, owner, compressed);
    const added = await registry.addBlobs(stored.blobs);
    return ok({ received: stored.received, stored: added.stored, bytes: added.bytes });
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

/**
 * Stores the pack's blobs in fresh packs in R2: read in the fixed form when it is in it, else
 * read again as any tar. A reading that does not finish (a refusal, or the fixed-form reader
 * giving up) leaves nothing of it in R2.
 */
async function storeBlobs(
  bucket: R2Bucket,
  owner: string,
  compressed: readonly Uint8Array[],
): Promise<{ blobs: NewBlob[]; received: number }> {
  try {
    return await storeReading(bucket, owner, (checks) => readFixedForm(compressed, checks));
  } catch (error) {
    if (!(error instanceof NotFixedForm)) throw error;
  }
  return storeReading(bucket, owner, (checks) => readAnyTar(compressed, checks));
}

async function storeReading(
  bucket: R2Bucket,
  owner: string,
  read: (checks: BlobChecks) => Promise<void>,
): Promise<{ blobs: NewBlob[]; received: number }> {
  const packs = new PackWriter(bucket, blobPackPrefix(owner, newUploadName()));
  const checks = new BlobChecks(packs);
  try {
    await read(checks);
    await packs.finish();
    return { blobs: checks.blobs, received: checks.received };
  } catch (error) {
    await packs.settle();
    if (packs.keys.length > 0) await bucket.delete(packs.keys);
    throw error;
  }
}

/**
 * What every entry of a blob pack must pass, whichever reader found it, and where the ones
 * that pass go: the header first (a file, named by a blob id, at most 1 MiB, within the
 * count), then the content (text, hashing to its name); a blob sent twice is stored once.
 */
class BlobChecks {
  readonly blobs: NewBlob[] = [];
  received = 0;
  private readonly seen = new Set<string>();

  constructor(private readonly packs: PackWriter) {}

  header(name: string, type: string, size: number): void {
    this.received += 1;
    if (this.received > SNAPSHOT_MAX_FILES) throw tooManyFiles();
    const shown = JSON.stringify(name.slice(0, 60));
    if (type !== "file")
      throw invalidBlob(`Entry ${shown} is a ${type}; a blob pack holds only files.`);
    if (!BLOB_ID_PATTERN.test(name)) {
      throw invalidBlob(
        `Entry ${shown} is not named by a blob id (40 lowercase hex digits: git's blob SHA-1 of the content).`,
      );
    }
    if (size > SNAPSHOT_MAX_FILE_BYTES) {
      throw invalidBlob(
        `Blob ${name} is larger than 1 MiB; a snapshot skips such files, so never send them.`,
      );
    }
  }

  async content(name: string, content: Uint8Array): Promise<void> {
    if (!isTextContent(content)) {
      throw invalidBlob(
        `Blob ${name} is not text (a NUL byte or invalid UTF-8); a snapshot skips such files, so never send them.`,
      );
    }
    const actual = gitBlobId(content);
    if (actual !== name) {
      throw invalidBlob(`Blob ${name} does not match its content, whose blob id is ${actual}.`);
    }
    if (this.seen.has(name)) return;
    this.seen.add(name);
    this.blobs.push(await this.packs.appendBlob(name, content));
  }
}

/** The pack read in the form planport's client writes (blob-pack-reader.ts); fast. */
async function readFixedForm(compressed: readonly Uint8Array[], checks: BlobChecks) {
  await readFixedFormPack(gunzipChunks(compressed, SNAPSHOT_MAX_UNCOMPRESSED_BYTES), {
    onFile: (name, size) => checks.header(name, "file", size),
    onContent: (name, content) => checks.content(name, content),
  });
}

/** The pack read as any tar (modern-tar's strict decoder): directories skipped, PAX read. */
async function readAnyTar(compressed: readonly Uint8Array[], checks: BlobChecks) {
  const entries = openArchive(compressed);
  try {
    for (;;) {
      const next = await fromArchive(entries.read());
      if (next.done) break;
      const entry = next.value;
      const type = entry.header.type ?? "file";
      if (type === "directory") {
        await discard(entry);
        continue;
      }
      checks.header(entry.header.name, type, entry.header.size);
      await checks.content(entry.header.name, await readBody(entry));
    }
  } catch (error) {
    await entries.cancel(error).catch(() => {});
    throw error;
  }
}
