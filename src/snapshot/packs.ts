import { PACK_MAX_BYTES, packKey } from "./layout.ts";
import type { NewBlob } from "./registry.ts";

/**
 * Appends file texts to packs and uploads each pack to R2 once it is full. One upload runs
 * while the next pack fills, so at most two packs (16 MiB) are held at a time.
 *
 * @example
 * const packs = new PackWriter(bucket, "snapshots/o/<id>/");
 * const where = await packs.append(bytes); // { pack: 0, offset: 0 }
 * await packs.finish(); // uploads the last pack, returns how many were written
 */
export class PackWriter {
  private parts: Uint8Array[] = [];
  private filled = 0;
  private pack = 0;
  private upload: Promise<unknown> = Promise.resolve();
  /** Keys of every pack whose upload started (for clean-up after a failed ingest). */
  readonly keys: string[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    readonly prefix: string,
  ) {}

  /** Adds one file's bytes (at most {@link PACK_MAX_BYTES}) and says where they will be. */
  async append(bytes: Uint8Array): Promise<{ pack: number; offset: number }> {
    if (this.filled + bytes.byteLength > PACK_MAX_BYTES) await this.seal();
    const where = { pack: this.pack, offset: this.filled };
    if (bytes.byteLength > 0) {
      this.parts.push(bytes);
      this.filled += bytes.byteLength;
    }
    return where;
  }

  /** Appends one blob and says where it is: its pack's key, offset and size. */
  async appendBlob(id: string, content: Uint8Array): Promise<NewBlob> {
    const where = await this.append(content);
    return {
      id,
      pack: packKey(this.prefix, where.pack),
      offset: where.offset,
      size: content.byteLength,
    };
  }

  /** Uploads what is left and waits for every upload; returns the number of packs. */
  async finish(): Promise<number> {
    if (this.filled > 0) await this.seal();
    await this.upload;
    return this.keys.length;
  }

  /** Waits for a running upload to settle, ignoring its outcome (before deleting the keys). */
  async settle(): Promise<void> {
    await this.upload.catch(() => {});
  }

  private async seal(): Promise<void> {
    await this.upload;
    const key = packKey(this.prefix, this.pack);
    this.keys.push(key);
    const upload = this.bucket.put(key, new Blob(this.parts));
    // Awaited by the next seal or by finish/settle; this keeps a rejection from being
    // reported as unhandled in between.
    upload.catch(() => {});
    this.upload = upload;
    this.parts = [];
    this.filled = 0;
    this.pack += 1;
  }
}
