import { newUploadName } from "./archive.ts";
import { blobPackPrefix } from "./layout.ts";
import { PackWriter } from "./packs.ts";
import type { NewBlob } from "./registry.ts";

/** A stored blob and where it is. */
export interface LocatedBlob {
  id: string;
  from: { pack: string; offset: number; size: number };
}

/**
 * Copies stored blobs of `owner` into a new pack, in the order given (the owner index gathers a
 * tree's scattered blobs: src/session/pack-store.ts). Each source pack is read once, the span of
 * its blobs; the copies are held until written, so the caller bounds their total (8 MiB).
 * Nothing is left behind when it fails.
 *
 * @example
 * const copies = await copyBlobs(env.SNAPSHOTS, owner, plan);
 * // copies[i] is plan[i]'s new place
 */
export async function copyBlobs(
  bucket: R2Bucket,
  owner: string,
  blobs: readonly LocatedBlob[],
): Promise<NewBlob[]> {
  const bytes = new Map<string, Uint8Array>();
  const bySource = new Map<string, LocatedBlob[]>();
  for (const blob of blobs) {
    const group = bySource.get(blob.from.pack);
    if (group === undefined) bySource.set(blob.from.pack, [blob]);
    else group.push(blob);
  }
  for (const [pack, group] of bySource) {
    const start = Math.min(...group.map((b) => b.from.offset));
    const end = Math.max(...group.map((b) => b.from.offset + b.from.size));
    const span =
      end > start
        ? await bucket.get(pack, { range: { offset: start, length: end - start } })
        : null;
    if (end > start && span === null) throw new Error(`pack ${pack} is missing`);
    const read = span === null ? new Uint8Array(0) : new Uint8Array(await span.arrayBuffer());
    for (const b of group) {
      bytes.set(b.id, read.slice(b.from.offset - start, b.from.offset - start + b.from.size));
    }
  }
  const writer = new PackWriter(bucket, blobPackPrefix(owner, newUploadName()));
  try {
    const copies: NewBlob[] = [];
    for (const blob of blobs) {
      copies.push(await writer.appendBlob(blob.id, bytes.get(blob.id) ?? new Uint8Array(0)));
    }
    await writer.finish();
    return copies;
  } catch (error) {
    await writer.settle();
    if (writer.keys.length > 0) await bucket.delete(writer.keys);
    throw error;
  }
}
