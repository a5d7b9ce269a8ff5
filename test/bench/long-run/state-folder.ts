import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * What a `wrangler dev --persist-to DIR` keeps on disk, by part: `v3/r2` (the bucket's blob
 * files and miniflare's SQLite of its objects), `v3/do` (one SQLite file per Durable Object:
 * sessions and owner indexes, with miniflare's index of them), and anything else (cache, …).
 * Sizes are of the blocks used, as `du` counts them.
 */

export interface StateSample {
  afterPlans: number;
  r2Bytes: number;
  r2Files: number;
  doBytes: number;
  doFiles: number;
  otherBytes: number;
}

export function measureStateFolder(persist: string, afterPlans: number): StateSample {
  const all = sizeOf(persist);
  const r2 = sizeOf(join(persist, "v3", "r2"));
  const dos = sizeOf(join(persist, "v3", "do"));
  return {
    afterPlans,
    r2Bytes: r2.bytes,
    r2Files: r2.files,
    doBytes: dos.bytes,
    doFiles: dos.files,
    otherBytes: all.bytes - r2.bytes - dos.bytes,
  };
}

export function totalBytes(s: StateSample): number {
  return s.r2Bytes + s.doBytes + s.otherBytes;
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export function describeState(s: StateSample): string {
  return `R2 ${mib(s.r2Bytes)} (${s.r2Files} files), Durable Objects ${mib(s.doBytes)} (${s.doFiles} files), other ${mib(s.otherBytes)}`;
}

function sizeOf(path: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  let entries: string[];
  try {
    entries = readdirSync(path);
  } catch {
    return { bytes: 0, files: 0 };
  }
  for (const name of entries) {
    const child = join(path, name);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(child);
    } catch {
      continue; // removed while we looked (a SQLite journal, a deleted blob)
    }
    if (stat.isDirectory()) {
      const inner = sizeOf(child);
      bytes += inner.bytes;
      files += inner.files;
    } else {
      bytes += stat.blocks * 512;
      files += 1;
    }
  }
  return { bytes, files };
}
