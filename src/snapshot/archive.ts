import { createTarDecoder, type ParsedTarEntry } from "modern-tar";
import {
  SNAPSHOT_MAX_COMPRESSED_BYTES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../protocol/index.ts";
import { drainThenCancel, OVERSIZED_BODY_DRAIN_BYTES } from "../request-body.ts";
import { emptyBody, IngestFailure, notGzip, notTar, payloadTooLarge, plainTar } from "./errors.ts";
import { gunzipWithLimit } from "./gunzip.ts";

/**
 * Reading an uploaded tar.gz — a whole tree (`POST /v1/snapshots`) or a pack of blobs
 * (`POST /v1/blobs`): the compressed body buffered within its limit, the gzip signature
 * checked, then the archive streamed entry by entry as it inflates.
 */

/** Reads the whole body, refusing it as soon as it passes the compressed limit. */
export async function readCompressed(body: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = inLargeChunks(body);
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

/** What {@link inLargeChunks} fills before it hands a chunk over. */
const BODY_CHUNK_BYTES = 1024 * 1024;

/**
 * A reader of `body` that hands over chunks of {@link BODY_CHUNK_BYTES} (the last one
 * shorter). workerd delivers a request body to a plain reader in 4 KiB chunks, a round through
 * the runtime each; read into 1 MiB buffers (a BYOB reader), the 18 MiB of blob packs of a
 * 10,000-file snapshot cost the worker 50 ms of CPU instead of 120 ms (issue 34). A stream
 * that cannot be read that way (one made in JavaScript) is read with a plain reader.
 */
function inLargeChunks(
  body: ReadableStream<Uint8Array>,
): Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel"> {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    return body.getReader();
  }
  let ended = false;
  return {
    async read() {
      // A BYOB read hands the buffer back as a new one: every view of the old one is emptied,
      // so a chunk is handed over only once it is full (or the body ended), never reused.
      let buffer = new Uint8Array(BODY_CHUNK_BYTES);
      let filled = 0;
      while (!ended && filled < buffer.byteLength) {
        const { done, value } = await byob.read(buffer.subarray(filled));
        if (value !== undefined) {
          buffer = new Uint8Array(value.buffer);
          filled += value.byteLength;
        }
        if (done) ended = true;
      }
      if (filled === 0) return { done: true, value: undefined };
      return { done: false, value: buffer.subarray(0, filled) };
    },
    cancel: (reason?: unknown) => byob.cancel(reason),
  };
}

/**
 * A body read as a pull stream, erroring with `tooLarge()` once more than `maxBytes` arrived,
 * with its first chunks already read so the caller can look at the signature (`head`).
 * Nothing is buffered beyond what the next reader asks for. Cancelling it (a refusal while the
 * client is still sending) reads and drops a little more first, as {@link readCompressed} does.
 *
 * @example
 * const { head, stream } = await openBody(request.body, 12 * 1024 * 1024, manifestTooLarge);
 * if (isGzip(head)) inflate(stream);
 */
export async function openBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooLarge: () => IngestFailure,
): Promise<{ head: Uint8Array[]; stream: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  let total = 0;
  // A request body allows one pending read: a cancel waits for the read in flight.
  let reading: Promise<unknown> = Promise.resolve();
  const next = async (): Promise<Uint8Array | null> => {
    const read = reader.read();
    reading = read.catch(() => {});
    const { done, value } = await read;
    if (done) return null;
    total += value.byteLength;
    if (total > maxBytes) {
      await drainThenCancel(reader, OVERSIZED_BODY_DRAIN_BYTES);
      throw tooLarge();
    }
    return value;
  };
  const head: Uint8Array[] = [];
  for (let peeked = 0; peeked < GZIP_MAGIC.length; ) {
    const chunk = await next();
    if (chunk === null) break;
    head.push(chunk);
    peeked += chunk.byteLength;
  }
  const queued = [...head];
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = queued.shift() ?? (await next());
        if (chunk === null) controller.close();
        else controller.enqueue(chunk);
      },
      async cancel() {
        await reading;
        await drainThenCancel(reader, OVERSIZED_BODY_DRAIN_BYTES);
      },
    },
    { highWaterMark: 0 },
  );
  return { head, stream };
}

const GZIP_MAGIC = [0x1f, 0x8b];
const TAR_MAGIC_OFFSET = 257;

/** True when the bytes start with the gzip signature. */
export function isGzip(chunks: readonly Uint8Array[]): boolean {
  const head = firstBytes(chunks, 2);
  return head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
}

/** Answers the common mistakes (a plain tar, some other file) before any work is done. */
export function refuseWithoutGzipMagic(chunks: readonly Uint8Array[]): void {
  if (isGzip(chunks)) return;
  const head = firstBytes(chunks, TAR_MAGIC_OFFSET + 5);
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

export async function sha256Hex(chunks: readonly Uint8Array[]): Promise<string> {
  // workerd's DigestStream hashes the chunks as they are, without joining them into one copy.
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  for (const chunk of chunks) await writer.write(chunk);
  await writer.close();
  const bytes = new Uint8Array(await digest.digest);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The body, inflated within `maxBytes`, as a pull stream of tar entries. */
export function openArchive(
  compressed: readonly Uint8Array[],
  maxBytes = SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
): ReadableStreamDefaultReader<ParsedTarEntry> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of compressed) controller.enqueue(chunk);
      controller.close();
    },
  });
  return gunzipWithLimit(source, maxBytes)
    .pipeThrough(createTarDecoder({ strict: true }))
    .getReader();
}

/**
 * Awaits a read from the archive streams. Limit and gzip failures arrive as the
 * IngestFailure they were raised with; anything else the tar decoder threw means the
 * inflated bytes are not a tar archive.
 */
export async function fromArchive<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (cause) {
    throw cause instanceof IngestFailure ? cause : notTar(cause);
  }
}

/** Skips an entry's body (the decoder cannot move on until it is consumed or cancelled). */
export async function discard(entry: ParsedTarEntry): Promise<void> {
  await fromArchive(entry.body.cancel());
}

/** Reads a body of at most 1 MiB (the caller checked the header size) into one array. */
export async function readBody(entry: ParsedTarEntry): Promise<Uint8Array> {
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

/** A fresh name for one upload's packs (32 hex digits). */
export function newUploadName(): string {
  return crypto.randomUUID().replace(/-/g, "");
}
