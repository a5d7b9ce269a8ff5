import { PACK_MAX_BYTES, type StoredFile } from "./layout.ts";

/**
 * The pack bytes a scan holds while it yields files in index (path) order. A snapshot's blobs
 * may lie in the packs of many uploads — the first tree's packs, and a small pack per later
 * upload holding what it changed — so path order jumps between packs. Each fetch takes one
 * range of one pack: from the wanted file to the last wanted file after it in that pack (at
 * most one pack, 8 MiB). The range is kept until every wanted file in it was yielded, so a pack
 * whose files come in path order, as every upload writes them, is fetched once per scan however
 * the packs interleave.
 *
 * Memory is bounded: past {@link SEGMENTS_MAX_BYTES} the least recently used range is dropped,
 * and from then on a fetch takes only the wanted files within {@link NARROW_WINDOW_BYTES} of the
 * one asked for (an archive whose order is far from path order, the only way to get there,
 * costs more fetches, never more memory).
 */

/** Pack bytes one scan may hold. */
export const SEGMENTS_MAX_BYTES = 2 * PACK_MAX_BYTES;
/** The reach of a fetch once the scan has had to drop a range. */
export const NARROW_WINDOW_BYTES = 256 * 1024;

interface Segment {
  pack: string;
  start: number;
  bytes: Uint8Array;
  /** Wanted files this range was fetched for that were not yielded yet. */
  pending: number;
  lastUsed: number;
}

export type FetchRange = (pack: string, start: number, end: number) => Promise<Uint8Array>;

export class PackSegments {
  /** The wanted files of each pack, by offset. */
  private readonly byPack = new Map<string, StoredFile[]>();
  /** Which held range will serve each wanted file not yielded yet. */
  private readonly servedBy = new Map<StoredFile, Segment>();
  private readonly segments = new Set<Segment>();
  private held = 0;
  private uses = 0;
  private window = PACK_MAX_BYTES;

  constructor(
    wanted: readonly StoredFile[],
    private readonly fetchRange: FetchRange,
  ) {
    for (const file of wanted) {
      if (file.size === 0) continue;
      const group = this.byPack.get(file.key);
      if (group === undefined) this.byPack.set(file.key, [file]);
      else group.push(file);
    }
    for (const group of this.byPack.values()) group.sort((a, b) => a.offset - b.offset);
  }

  /** The bytes of `file` (one of the wanted files), fetching its range when none holds it. */
  async bytesOf(file: StoredFile): Promise<Uint8Array> {
    if (file.size === 0) return new Uint8Array(0);
    const segment = this.servedBy.get(file) ?? (await this.fetchFor(file));
    segment.lastUsed = ++this.uses;
    const from = file.offset - segment.start;
    return segment.bytes.subarray(from, from + file.size);
  }

  /** `file` was yielded: a range with nothing left to serve is let go. */
  done(file: StoredFile): void {
    const segment = this.servedBy.get(file);
    if (segment === undefined) return;
    this.servedBy.delete(file);
    segment.pending -= 1;
    if (segment.pending === 0) this.drop(segment);
  }

  /** Bytes held now (tests). */
  get heldBytes(): number {
    return this.held;
  }

  private async fetchFor(file: StoredFile): Promise<Segment> {
    const group = this.byPack.get(file.key) ?? [file];
    const limit = file.offset + this.window;
    const serves: StoredFile[] = [];
    let end = file.offset + file.size;
    // From this file on in the pack's offset order: every wanted file not served yet that fits.
    for (let i = lowerBound(group, file.offset); i < group.length; i++) {
      const next = group[i] as StoredFile;
      const nextEnd = next.offset + next.size;
      if (nextEnd > limit) break;
      if (this.servedBy.has(next)) continue;
      serves.push(next);
      end = Math.max(end, nextEnd);
    }
    if (!serves.includes(file)) serves.push(file);
    this.makeRoom(end - file.offset);
    const bytes = await this.fetchRange(file.key, file.offset, end);
    const segment: Segment = {
      pack: file.key,
      start: file.offset,
      bytes,
      pending: 0,
      lastUsed: ++this.uses,
    };
    for (const served of serves) {
      if (this.servedBy.has(served)) continue;
      this.servedBy.set(served, segment);
      segment.pending += 1;
    }
    this.segments.add(segment);
    this.held += bytes.byteLength;
    return segment;
  }

  /** Drops the least recently used ranges until `bytes` more fit; narrows later fetches. */
  private makeRoom(bytes: number): void {
    while (this.held + bytes > SEGMENTS_MAX_BYTES && this.segments.size > 0) {
      let oldest: Segment | null = null;
      for (const s of this.segments)
        if (oldest === null || s.lastUsed < oldest.lastUsed) oldest = s;
      if (oldest === null) break;
      for (const [file, segment] of this.servedBy)
        if (segment === oldest) this.servedBy.delete(file);
      this.drop(oldest);
      this.window = NARROW_WINDOW_BYTES;
    }
  }

  private drop(segment: Segment): void {
    if (!this.segments.delete(segment)) return;
    this.held -= segment.bytes.byteLength;
  }
}

/** The first index in `files` (sorted by offset) whose offset is at least `offset`. */
function lowerBound(files: readonly StoredFile[], offset: number): number {
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((files[mid] as StoredFile).offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
