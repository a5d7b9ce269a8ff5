import { BLOB_ID_PATTERN } from "../../src/protocol/index.ts";
import { openParallelGzip } from "./gzip.ts";

/**
 * A blob pack (docs/PROTOCOL.md "Incremental snapshots": `POST /v1/blobs`): a tar.gz whose
 * entries are named by their blob id. Written here by hand, not through modern-tar's packer
 * (issue 34): every entry has the same fixed form — a 40-character name, mode 0644, size, mtime
 * 0 — so its 512-byte ustar header is a few fixed fields, and the tar goes into one buffer with
 * no stream per entry. modern-tar's web-stream packer cost ~250 ms of the client's main thread
 * per 10,000 files (profile in test/bench/RESULTS.md, P4), on the path every first snapshot
 * waits for. The worker reads packs in exactly this form with its own reader
 * (src/snapshot/blob-pack-reader.ts) and any other tar with modern-tar's strict decoder; the
 * whole tarball form (`pack.ts`) still uses the library's packer.
 */

const BLOCK = 512;

/** Tar bytes of the two zero blocks that end an archive. */
const END_BYTES = 2 * BLOCK;

/**
 * One pack being filled in a buffer of its own (reused pack after pack: see `send.ts`): `add`
 * blobs — read straight into {@link BlobPack.room} when the caller can — then `finish` for the
 * gzip bytes to send.
 *
 * @example
 * const pack = new BlobPack(new Uint8Array(9 * 1024 * 1024));
 * pack.add(id, bytes);
 * const body = await pack.finish(1);
 */
export class BlobPack {
  private filled = 0;
  private count = 0;

  /** `buffer`: where the tar is written; it must not be used elsewhere until `finish` settles. */
  constructor(readonly buffer: Uint8Array) {}

  /** Files added so far. */
  get files(): number {
    return this.count;
  }

  /** Bytes of file content and headers so far (what the tar will hold, before its end). */
  get bytes(): number {
    return this.filled;
  }

  /**
   * Where the next file's content goes: read a file into it and pass that view to `add`, and
   * it is not copied. Anything written here is overwritten by the next `add`.
   */
  room(): Uint8Array {
    return this.buffer.subarray(Math.min(this.filled + BLOCK, this.buffer.byteLength));
  }

  /** True when a file of `size` bytes still fits in the buffer. */
  fits(size: number): boolean {
    return this.filled + BLOCK + padded(size) + END_BYTES <= this.buffer.byteLength;
  }

  /**
   * Appends one blob under its id (40 lowercase hex digits; anything else is a caller's bug).
   * `content` may be a view of {@link room}.
   *
   * @example
   * pack.add("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", new Uint8Array(0));
   */
  add(id: string, content: Uint8Array): void {
    if (!BLOB_ID_PATTERN.test(id)) throw new RangeError(`not a blob id: ${JSON.stringify(id)}`);
    if (!this.fits(content.byteLength)) {
      throw new RangeError(`a ${content.byteLength}-byte blob does not fit in this pack`);
    }
    const at = this.filled + BLOCK;
    const inPlace =
      content.buffer === this.buffer.buffer && content.byteOffset === this.buffer.byteOffset + at;
    if (!inPlace) this.buffer.set(content, at);
    this.buffer.set(ustarFileHeader(id, content.byteLength), this.filled);
    const end = at + content.byteLength;
    this.buffer.fill(0, end, at + padded(content.byteLength));
    this.filled = at + padded(content.byteLength);
    this.count += 1;
  }

  /**
   * Ends the tar (two zero blocks) and gzips it at `level` on several threads; the buffer is
   * free again once this settles.
   *
   * @example
   * const body = await pack.finish(1);
   */
  async finish(level: number): Promise<Uint8Array<ArrayBuffer>> {
    this.buffer.fill(0, this.filled, this.filled + END_BYTES);
    const gzip = openParallelGzip(level);
    await gzip.write(this.buffer.subarray(0, this.filled + END_BYTES));
    return gzip.end();
  }
}

/** `size` rounded up to whole 512-byte blocks. */
function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

/**
 * The ustar header of a regular file named `name` (at most 100 ASCII bytes) of `size` bytes:
 * mode 0644, uid/gid 0, mtime 0, empty user and group names — the entry form of `pack.ts`.
 *
 * @example
 * ustarFileHeader("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", 0).byteLength // 512
 */
export function ustarFileHeader(name: string, size: number): Uint8Array {
  if (name.length === 0 || name.length > 100 || !/^[\x20-\x7e]+$/.test(name)) {
    throw new RangeError(`a ustar name is 1 to 100 ASCII characters: ${JSON.stringify(name)}`);
  }
  if (!Number.isSafeInteger(size) || size < 0 || size >= 8 ** 11) {
    throw new RangeError(`a ustar size is 0 to 8 GiB - 1: ${size}`);
  }
  const header = HEADER_TEMPLATE.slice();
  let sum = TEMPLATE_SUM;
  const put = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i++) {
      const byte = text.charCodeAt(i);
      header[offset + i] = byte;
      sum += byte;
    }
  };
  put(0, name);
  put(124, `${size.toString(8).padStart(11, "0")}\0`);
  // The checksum field counts as eight spaces (already in the template's sum).
  const checksum = `${sum.toString(8).padStart(6, "0")}\0 `;
  for (let i = 0; i < checksum.length; i++) header[148 + i] = checksum.charCodeAt(i);
  return header;
}

/** Every field of a file header but its name, size and checksum (spaces in the sum). */
const HEADER_TEMPLATE = (() => {
  const header = new Uint8Array(BLOCK);
  const put = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i++) header[offset + i] = text.charCodeAt(i);
  };
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  return header;
})();
const TEMPLATE_SUM = HEADER_TEMPLATE.reduce((sum, byte) => sum + byte, 0);
