/**
 * Generators of tar.gz request bodies, normal and hostile, for snapshot tests (and later fault
 * and fuzz tests). Web APIs only, so they run both inside workerd and in Node.
 *
 * The tar writer here is deliberately hand-rolled rather than a library packer: hostile
 * archives need names that are not UTF-8, `..` paths, links and devices, which a careful
 * packer refuses to write.
 */

import { type ParsedTarEntryWithData, unpackTar } from "modern-tar";

export type TarEntryType =
  | "file"
  | "directory"
  | "symlink"
  | "link"
  | "character-device"
  | "block-device"
  | "fifo";

export interface TarSpec {
  /** The entry name as written; bytes for names that are not valid UTF-8. */
  name: string | Uint8Array;
  type?: TarEntryType;
  body?: string | Uint8Array;
  /** Target of a symlink or hard link. */
  linkname?: string;
}

const TYPEFLAGS: Record<TarEntryType, string> = {
  file: "0",
  link: "1",
  symlink: "2",
  "character-device": "3",
  "block-device": "4",
  directory: "5",
  fifo: "6",
};

const BLOCK_BYTES = 512;
const encoder = new TextEncoder();

/**
 * A tar archive (ustar headers, GNU long-name entries for names over 100 bytes, two zero
 * blocks at the end).
 *
 * @example
 * const tar = tarBytes([{ name: "src/a.ts", body: "export {};\n" }]);
 */
export function tarBytes(entries: Iterable<TarSpec>): Uint8Array<ArrayBuffer> {
  return concat([...tarChunks(entries)]);
}

/**
 * The same archive as {@link tarBytes}, block by block, so large archives can be gzipped
 * without ever being held whole (entries may share one body array).
 */
export function* tarChunks(entries: Iterable<TarSpec>): Generator<Uint8Array> {
  for (const entry of entries) {
    const name = typeof entry.name === "string" ? encoder.encode(entry.name) : entry.name;
    const type = entry.type ?? "file";
    const body =
      typeof entry.body === "string"
        ? encoder.encode(entry.body)
        : (entry.body ?? new Uint8Array());
    if (name.byteLength > 100) {
      const longName = new Uint8Array(name.byteLength + 1);
      longName.set(name);
      yield header(encoder.encode("././@LongLink"), "L", longName.byteLength);
      yield* padded(longName);
    }
    const size = type === "file" ? body.byteLength : 0;
    yield header(name.subarray(0, 100), TYPEFLAGS[type], size, entry.linkname);
    if (size > 0) yield* padded(body);
  }
  yield new Uint8Array(BLOCK_BYTES * 2);
}

/**
 * A ustar header block. `size` is what the header claims; the caller writes the body.
 *
 * @example
 * const block = header(encoder.encode("big.txt"), "0", 300 * 1024 * 1024);
 */
export function header(
  name: Uint8Array,
  typeflag: string,
  size: number,
  linkname = "",
): Uint8Array {
  const block = new Uint8Array(BLOCK_BYTES);
  block.set(name.subarray(0, 100), 0);
  writeAscii(block, 100, "0000644\0");
  writeAscii(block, 108, "0000000\0");
  writeAscii(block, 116, "0000000\0");
  writeAscii(block, 124, `${size.toString(8).padStart(11, "0")}\0`);
  writeAscii(block, 136, "00000000000\0");
  writeAscii(block, 148, "        ");
  writeAscii(block, 156, typeflag);
  block.set(encoder.encode(linkname).subarray(0, 100), 157);
  writeAscii(block, 257, "ustar\0");
  writeAscii(block, 263, "00");
  writeChecksum(block);
  return block;
}

/**
 * Writes the checksum of the 512-byte header `block` (its bytes summed, the checksum field
 * counted as spaces), plus `offBy` to make it wrong on purpose.
 *
 * @example
 * block[345] = 0x70; writeChecksum(block); // an edited header that still checks out
 */
export function writeChecksum(block: Uint8Array, offBy = 0): void {
  block.fill(0x20, 148, 156);
  let sum = offBy;
  for (let i = 0; i < BLOCK_BYTES; i++) sum += block[i] as number;
  writeAscii(block, 148, `${sum.toString(8).padStart(6, "0")}\0 `);
}

/** gzip of `bytes` (CompressionStream: the platform's zlib). */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  return gzipChunks([bytes]);
}

/** tar.gz of the entries, gzipped block by block. */
export async function tarGz(entries: Iterable<TarSpec>): Promise<Uint8Array<ArrayBuffer>> {
  return gzipChunks(tarChunks(entries));
}

/**
 * A gzip bomb: a valid tar header for one file claiming `totalBytes`, followed by that many
 * copies of one byte. 300 MiB compresses to about 300 KB. Generated in 1 MiB chunks, so
 * making it never holds the expanded form.
 *
 * @example
 * const body = await gzipBomb(300 * 1024 * 1024);
 */
export async function gzipBomb(totalBytes: number, byte = 0x61): Promise<Uint8Array<ArrayBuffer>> {
  const chunkBytes = 1024 * 1024;
  const parts: Iterable<Uint8Array> = {
    *[Symbol.iterator]() {
      yield header(encoder.encode("bomb.txt"), "0", totalBytes);
      for (let left = totalBytes; left > 0; left -= chunkBytes) {
        yield new Uint8Array(Math.min(chunkBytes, left)).fill(byte);
      }
      yield new Uint8Array((-totalBytes & (BLOCK_BYTES - 1)) + BLOCK_BYTES * 2);
    },
  };
  return gzipChunks(parts);
}

/**
 * tar.gz of `count` small text files `files/NNNNNN.txt`.
 *
 * @example
 * const body = await manyFilesTarGz(20_001); // one over the limit
 */
export async function manyFilesTarGz(count: number): Promise<Uint8Array<ArrayBuffer>> {
  const entries: TarSpec[] = [];
  for (let i = 0; i < count; i++) {
    entries.push({ name: `files/${String(i).padStart(6, "0")}.txt`, body: `file ${i}\n` });
  }
  return tarGz(entries);
}

/** Deterministic pseudo-random bytes (xorshift), for bodies that are neither gzip nor text. */
export function noise(length: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/**
 * The entries of a tar.gz, bodies buffered (strict parse: a bad checksum or a truncated
 * archive throws). For checking what a packer produced.
 *
 * @example
 * const entries = await readTarGz(snapshot.bytes);
 * entries[0]?.header.name; // "README.md"
 */
export async function readTarGz(bytes: Uint8Array): Promise<ParsedTarEntryWithData[]> {
  const tar = bodyOf(bytes).pipeThrough(new DecompressionStream("gzip"));
  return unpackTar(tar, { strict: true });
}

/** A one-chunk request body stream. */
export function bodyOf(bytes: Uint8Array): ReadableStream<Uint8Array<ArrayBuffer>> {
  return new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      controller.enqueue(arrayBacked(bytes));
      controller.close();
    },
  });
}

async function gzipChunks(chunks: Iterable<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new CompressionStream("gzip");
  const writer = stream.writable.getWriter();
  const out = new Response(stream.readable).arrayBuffer();
  for (const chunk of chunks) await writer.write(arrayBacked(chunk));
  await writer.close();
  return new Uint8Array(await out);
}

/** The same bytes over a plain ArrayBuffer (what the stream typings ask for). */
function arrayBacked(chunk: Uint8Array): Uint8Array<ArrayBuffer> {
  return chunk.buffer instanceof ArrayBuffer
    ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    : new Uint8Array(chunk);
}

/** The body and the zeros that fill its last 512-byte tar block. */
export function padded(body: Uint8Array): Uint8Array[] {
  const padding = -body.byteLength & (BLOCK_BYTES - 1);
  return padding > 0 ? [body, new Uint8Array(padding)] : [body];
}

function writeAscii(block: Uint8Array, offset: number, text: string): void {
  for (let i = 0; i < text.length; i++) block[offset + i] = text.charCodeAt(i);
}

/** The parts joined into one array. */
export function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}
