import { comparePaths } from "../protocol/index.ts";
import type { SnapshotEntry, SnapshotFiles } from "./files.ts";
import { loadIndex, type SnapshotIndex, type StoredFile } from "./layout.ts";

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * Read access to one stored snapshot. The index is fetched once, on first use; a file is one
 * ranged R2 get; `scan` fetches pack by pack (the span of the wanted files in each), so memory
 * stays at one pack (≤ 8 MiB) however large the snapshot. Packs may be shared with other
 * snapshots of the owner (blobs are deduplicated): the index holds each file's pack key.
 *
 * @example
 * const files = openSnapshotReader(env.SNAPSHOTS, "snapshots/<owner>/<id>/");
 * for await (const { path, text } of files.scan((p) => p.endsWith(".ts"))) grep(path, text);
 */
export function openSnapshotReader(bucket: R2Bucket, prefix: string): SnapshotFiles {
  let loaded: Promise<Loaded> | null = null;
  const load = (): Promise<Loaded> => {
    if (loaded !== null) return loaded;
    const attempt = loadIndex(bucket, prefix).then((index) => {
      if (index === null) throw missingSnapshot(prefix);
      return prepare(index);
    });
    // A failed load (R2 hiccup, deleted snapshot) is retried by the next call, not cached.
    attempt.catch(() => {
      if (loaded === attempt) loaded = null;
    });
    loaded = attempt;
    return attempt;
  };

  return {
    async list() {
      return (await load()).sorted;
    },
    async read(path) {
      const file = (await load()).byPath.get(path);
      if (file === undefined) return null;
      if (file.size === 0) return "";
      const object = await bucket.get(file.key, {
        range: { offset: file.offset, length: file.size },
      });
      if (object === null) throw missingPack(prefix, file.key);
      return decoder.decode(await object.arrayBuffer());
    },
    async *scan(filter) {
      const { byPack } = await load();
      for (const [pack, packFiles] of byPack) {
        const wanted = filter === undefined ? packFiles : packFiles.filter((f) => filter(f.path));
        if (wanted.length === 0) continue;
        const start = wanted.reduce((min, f) => Math.min(min, f.offset), Number.POSITIVE_INFINITY);
        const end = wanted.reduce((max, f) => Math.max(max, f.offset + f.size), 0);
        const bytes = end > start ? await fetchRange(bucket, prefix, pack, start, end) : null;
        for (const file of wanted) {
          const text =
            bytes === null || file.size === 0
              ? ""
              : decoder.decode(
                  bytes.subarray(file.offset - start, file.offset - start + file.size),
                );
          yield { path: file.path, text };
        }
      }
    },
  };
}

interface Loaded {
  sorted: readonly SnapshotEntry[];
  byPath: Map<string, StoredFile>;
  /** Files grouped by pack key, packs in order of first use, files in index order within each. */
  byPack: Map<string, StoredFile[]>;
}

function prepare(index: SnapshotIndex): Loaded {
  const byPath = new Map<string, StoredFile>();
  const byPack = new Map<string, StoredFile[]>();
  for (const file of index.files) {
    byPath.set(file.path, file);
    const group = byPack.get(file.key);
    if (group === undefined) byPack.set(file.key, [file]);
    else group.push(file);
  }
  const sorted = index.files
    .map(({ path, size }) => ({ path, size }))
    .sort((a, b) => comparePaths(a.path, b.path));
  return {
    sorted: Object.freeze(sorted),
    byPath,
    byPack,
  };
}

async function fetchRange(
  bucket: R2Bucket,
  prefix: string,
  pack: string,
  start: number,
  end: number,
): Promise<Uint8Array> {
  const object = await bucket.get(pack, {
    range: { offset: start, length: end - start },
  });
  if (object === null) throw missingPack(prefix, pack);
  return new Uint8Array(await object.arrayBuffer());
}

function missingSnapshot(prefix: string): Error {
  return new Error(
    `The repository snapshot ${prefix} is not stored (it may have been deleted after the retention period).`,
  );
}

function missingPack(prefix: string, pack: string): Error {
  return new Error(`The repository snapshot ${prefix} is incomplete: ${pack} is missing.`);
}
