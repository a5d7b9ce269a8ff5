import { createTarDecoder, type ParsedTarEntry } from "modern-tar";
import {
  err,
  isTextContent,
  ok,
  type Result,
  type SkippedEntry,
  SNAPSHOT_MAX_COMPRESSED_BYTES,
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
  type SnapshotReceipt,
} from "../protocol/index.ts";
import { classifyEntry } from "./entry-rules.ts";
import {
  emptyBody,
  type IngestError,
  IngestFailure,
  notGzip,
  notTar,
  payloadTooLarge,
  plainTar,
  tooManyFiles,
} from "./errors.ts";
import { FileSet } from "./file-set.ts";
import { gunzipWithLimit } from "./gunzip.ts";
import {
  type IndexedFile,
  indexKey,
  loadIndex,
  receiptOf,
  type SnapshotIndex,
  snapshotPrefix,
} from "./layout.ts";
import { PackWriter } from "./packs.ts";

export type IngestResult = Result<SnapshotReceipt, IngestError>;

/**
 * Stores an uploaded tar.gz as a snapshot of `owner` (see `index.ts` for the contract).
 *
 * The compressed body (at most 25 MiB) is buffered before anything else happens: its sha256
 * is the snapshot id, and knowing the id first lets an unchanged tree be answered from the
 * stored index without parsing or writing anything, and lets packs go straight to their
 * final keys. Only the compressed bytes are held; the tar stream is parsed as it inflates.
 */
export async function ingest(
  bucket: R2Bucket,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<IngestResult> {
  try {
    const compressed = await readCompressed(body);
    refuseWithoutGzipMagic(compressed);
    const id = await sha256Hex(compressed);
    const prefix = snapshotPrefix(owner, id);
    const stored = await loadIndex(bucket, prefix);
    if (stored !== null) return ok(receiptOf(stored));
    const packs = new PackWriter(bucket, prefix);
    try {
      const index = await unpack(id, compressed, packs);
      await bucket.put(indexKey(prefix), JSON.stringify(index), {
        httpMetadata: { contentType: "application/json" },
      });
      return ok(receiptOf(index));
    } catch (error) {
      // A refused archive is refused the same way every time, so nothing written for it can
      // be shared with a successful upload: remove the partial packs.
      await packs.settle();
      if (packs.keys.length > 0) await bucket.delete(packs.keys);
      throw error;
    }
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

/** Reads the whole body, refusing it as soon as it passes the compressed limit. */
async function readCompressed(body: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > SNAPSHOT_MAX_COMPRESSED_BYTES) {
      await drainThenCancel(reader, OVERSIZED_BODY_DRAIN_BYTES);
      throw payloadTooLarge();
    }
    if (value.byteLength > 0) chunks.push(value);
  }
  if (total === 0) throw emptyBody();
  return chunks;
}

/**
 * How much more of an oversized body is read (and dropped, never kept) before the refusal.
 * Answering while the client is still sending can leave the connection unusable for the next
 * request in the local runtime (wrangler dev's proxy in front of workerd: the next POST gets
 * 503 "Your worker restarted mid-request", the next GET hangs; see cloudflare/workerd#1730 and
 * cloudflare/workers-sdk#15203), so a body a little over the limit — the usual mistake — is
 * read to its end; anything larger is cut off soon after the limit.
 */
export const OVERSIZED_BODY_DRAIN_BYTES = 2 * 1024 * 1024;

/** Reads and drops up to `maxBytes` more of the body, then cancels whatever is left. */
async function drainThenCancel(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
): Promise<void> {
  let drained = 0;
  try {
    while (drained < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return;
      drained += value.byteLength;
    }
  } catch {
    // The client went away mid-body: nothing left to drain, and the refusal stands anyway.
    return;
  }
  await reader.cancel().catch(() => {});
}

const GZIP_MAGIC = [0x1f, 0x8b];
const TAR_MAGIC_OFFSET = 257;

/** Answers the common mistakes (a plain tar, some other file) before any work is done. */
function refuseWithoutGzipMagic(chunks: readonly Uint8Array[]): void {
  const head = firstBytes(chunks, TAR_MAGIC_OFFSET + 5);
  if (head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) return;
  const magic = String.fromCharCode(...head.subarray(TAR_MAGIC_OFFSET, TAR_MAGIC_OFFSET + 5));
  if (magic === "ustar") throw plainTar();
  throw notGzip(new Error("it does not start with the gzip signature"));
}

function firstBytes(chunks: readonly Uint8Array[], count: number): Uint8Array {
  const head = new Uint8Array(count);
  let filled = 0;
  for (const chunk of chunks) {
    if (filled >= count) break;
    const part = chunk.subarray(0, count - filled);
    head.set(part, filled);
    filled += part.byteLength;
  }
  return head.subarray(0, filled);
}

async function sha256Hex(chunks: readonly Uint8Array[]): Promise<string> {
  // workerd's DigestStream hashes the chunks as they are, without joining them into one copy.
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  for (const chunk of chunks) await writer.write(chunk);
  await writer.close();
  const bytes = new Uint8Array(await digest.digest);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Streams the archive into packs and returns the index to store. */
async function unpack(
  id: string,
  compressed: readonly Uint8Array[],
  packs: PackWriter,
): Promise<SnapshotIndex> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of compressed) controller.enqueue(chunk);
      controller.close();
    },
  });
  const entries = gunzipWithLimit(source, SNAPSHOT_MAX_UNCOMPRESSED_BYTES)
    .pipeThrough(createTarDecoder({ strict: true }))
    .getReader();
  const files: IndexedFile[] = [];
  const skipped: SkippedEntry[] = [];
  const seen = new FileSet();
  let entryCount = 0;
  let bytes = 0;
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
      const where = await packs.append(content);
      files.push({ path: verdict.path, size: content.byteLength, ...where });
      bytes += content.byteLength;
    }
  } catch (error) {
    await entries.cancel(error).catch(() => {});
    throw error;
  }
  const packCount = await packs.finish();
  return { version: 1, id, files, skipped, bytes, packs: packCount };
}

/**
 * Awaits a read from the archive streams. Limit and gzip failures arrive as the
 * IngestFailure they were raised with; anything else the tar decoder threw means the
 * inflated bytes are not a tar archive.
 */
async function fromArchive<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (cause) {
    throw cause instanceof IngestFailure ? cause : notTar(cause);
  }
}

/** Skips an entry's body (the decoder cannot move on until it is consumed or cancelled). */
async function discard(entry: ParsedTarEntry): Promise<void> {
  await fromArchive(entry.body.cancel());
}

/** Reads a body of at most 1 MiB (the caller checked the header size) into one array. */
async function readBody(entry: ParsedTarEntry): Promise<Uint8Array> {
  const content = new Uint8Array(entry.header.size);
  let filled = 0;
  const reader = entry.body.getReader();
  for (;;) {
    const next = await fromArchive(reader.read());
    if (next.done) break;
    content.set(next.value, filled);
    filled += next.value.byteLength;
  }
  if (filled !== content.byteLength) throw notTar(new Error("an entry ends before its size"));
  return content;
}
