import { availableParallelism } from "node:os";
import { promisify } from "node:util";
import * as zlib from "node:zlib";

/**
 * gzip of a byte stream, compressed on several threads the way pigz does it: the input is
 * cut into fixed 1 MiB blocks, each deflated on its own (primed with the 32 KiB before it, so
 * the ratio matches a single stream) and ended with a sync flush so the pieces join into
 * one valid deflate stream. The output depends only on the input and the level — never on
 * how many threads ran or which finished first — so a snapshot's sha256 stays stable.
 *
 * The header is fixed: no file name, mtime 0, no extra flags, OS 255 ("unknown").
 */

/** Input per independently compressed block. */
const BLOCK_BYTES = 1024 * 1024;
/**
 * Room for a whole block's deflated output, so a block is one job on the thread pool. With
 * zlib's default 16 KiB output chunks each block took one round trip through the main thread
 * per chunk, and a main thread busy reading files (snapshot/send.ts) left a 512 KiB pack
 * compressed ~130 ms after it was handed over instead of ~5 ms (issue 34). Deflate never
 * grows a block by more than a few bytes per 16 KiB.
 */
const BLOCK_OUTPUT_BYTES = BLOCK_BYTES + 64 * 1024;
/** Deflate's window: the history a block is primed with. */
const DICTIONARY_BYTES = 32 * 1024;
/** Blocks compressing at once (libuv runs them on its thread pool, 4 threads by default). */
const PARALLEL_BLOCKS = Math.max(2, Math.min(4, availableParallelism()));
const GZIP_HEADER = Uint8Array.of(0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff);

const deflateRaw = promisify(zlib.deflateRaw) as (
  input: Uint8Array,
  options: zlib.ZlibOptions,
) => Promise<Buffer>;

/** zlib.crc32 arrived in Node 20.15; earlier releases get the table-driven version. */
const crc32: (data: Uint8Array, value: number) => number =
  typeof zlib.crc32 === "function" ? zlib.crc32 : crc32Fallback;

let crcTable: Uint32Array | null = null;

function crc32Fallback(data: Uint8Array, value: number): number {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = ~value >>> 0;
  for (let i = 0; i < data.length; i++) {
    c = (crcTable[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  }
  return ~c >>> 0;
}

export interface ParallelGzip {
  /**
   * Appends input; resolves once it may be called again (backpressure). The bytes are read
   * until `end()` resolves (a large chunk is compressed in place): do not change them before.
   */
  write(chunk: Uint8Array): Promise<void>;
  /** Ends the stream; resolves with the complete gzip bytes (a buffer of their own). */
  end(): Promise<Uint8Array<ArrayBuffer>>;
}

/**
 * @example
 * const gzip = openParallelGzip(6, (total) => total > limit && fail());
 * await gzip.write(tarChunk);
 * const bytes = await gzip.end();
 */
export function openParallelGzip(
  level: number,
  onCompressed?: (totalBytes: number) => void,
): ParallelGzip {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let previousTail: Uint8Array = new Uint8Array(0);
  let crc = 0;
  let inputBytes = 0;
  let compressedBytes = 0;
  const inFlight: Promise<Buffer>[] = [];
  const finished: Uint8Array[] = [GZIP_HEADER];

  const collectOldest = async (): Promise<void> => {
    const block = await (inFlight.shift() as Promise<Buffer>);
    compressedBytes += block.byteLength;
    onCompressed?.(compressedBytes);
    finished.push(block);
  };

  const dispatch = async (input: Uint8Array, last: boolean): Promise<void> => {
    // Node's crc32 answers 0 for some empty buffers instead of the running value.
    if (input.byteLength > 0) crc = crc32(input, crc);
    inputBytes += input.byteLength;
    const options: zlib.ZlibOptions = {
      level,
      chunkSize: BLOCK_OUTPUT_BYTES,
      finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH,
    };
    if (previousTail.byteLength > 0) options.dictionary = previousTail;
    const block = deflateRaw(input, options);
    // Awaited in order by collectOldest; this keeps an early rejection from being reported
    // as unhandled while older blocks are still being awaited.
    block.catch(() => {});
    inFlight.push(block);
    previousTail = input.subarray(Math.max(0, input.byteLength - DICTIONARY_BYTES));
    if (inFlight.length >= PARALLEL_BLOCKS) await collectOldest();
  };

  const takeBlock = (): Uint8Array => {
    // One large chunk (a whole blob pack) is cut in place; copying the rest at every block
    // would copy an 8 MiB chunk 36 MiB over.
    const first = pending[0];
    if (first !== undefined && first.byteLength >= Math.min(BLOCK_BYTES, pendingBytes)) {
      const block = first.subarray(0, BLOCK_BYTES);
      const rest = first.subarray(block.byteLength);
      if (rest.byteLength > 0) pending[0] = rest;
      else pending.shift();
      pendingBytes -= block.byteLength;
      return block;
    }
    const joined = Buffer.concat(pending, pendingBytes);
    const block = joined.subarray(0, BLOCK_BYTES);
    const rest = joined.subarray(BLOCK_BYTES);
    pending = rest.byteLength > 0 ? [rest] : [];
    pendingBytes = rest.byteLength;
    return block;
  };

  return {
    async write(chunk) {
      pending.push(chunk);
      pendingBytes += chunk.byteLength;
      while (pendingBytes >= BLOCK_BYTES) await dispatch(takeBlock(), false);
    },
    async end() {
      await dispatch(takeBlock(), true);
      while (inFlight.length > 0) await collectOldest();
      const trailer = new Uint8Array(8);
      const view = new DataView(trailer.buffer);
      view.setUint32(0, crc >>> 0, true);
      view.setUint32(4, inputBytes % 0x1_0000_0000, true);
      finished.push(trailer);
      return joined(finished);
    },
  };
}

function joined(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
