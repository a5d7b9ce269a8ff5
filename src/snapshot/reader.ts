import { comparePaths } from "../protocol/index.ts";
import type { SnapshotEntry, SnapshotFiles } from "./files.ts";
import { loadIndex, type SnapshotIndex, type StoredFile } from "./layout.ts";
import { PackSegments } from "./pack-segments.ts";

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/**
 * Read access to one stored snapshot. The index is fetched once, on first use; a file is one
 * ranged R2 get; `scan` yields in index (path) order and fetches a range of a pack per run of
 * wanted files in it (pack-segments.ts), so memory stays within two packs (≤ 16 MiB) however
 * large the snapshot. Packs may be shared with other snapshots of the owner (blobs are
 * deduplicated): the index holds each file's pack key.
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
      const { files } = await load();
      // Path order whatever the packs: Grep's "first N by path" and its time limit's "the
      // files after it in path order" mean the same on a fresh worker and a long-lived one.
      const wanted = filter === undefined ? files : files.filter((f) => filter(f.path));
      const segments = new PackSegments(wanted, (pack, start, end) =>
        fetchRange(bucket, prefix, pack, start, end),
      );
      for (const file of wanted) {
        const text = decoder.decode(await segments.bytesOf(file));
        segments.done(file);
        yield { path: file.path, text };
      }
    },
    async *scanBytes() {
      const { files } = await load();
      const segments = new PackSegments(files, (pack, start, end) =>
        fetchRange(bucket, prefix, pack, start, end),
      );
      for (const file of files) {
        const bytes = await segments.bytesOf(file);
        segments.done(file);
        yield { path: file.path, bytes };
      }
    },
  };
}

interface Loaded {
  sorted: readonly SnapshotEntry[];
  byPath: Map<string, StoredFile>;
  /** The files in path order (a version 1 index is in archive order). */
  files: readonly StoredFile[];
}

function prepare(index: SnapshotIndex): Loaded {
  const byPath = new Map<string, StoredFile>();
  for (const file of index.files) byPath.set(file.path, file);
  const files = [...index.files].sort((a, b) => comparePaths(a.path, b.path));
  return {
    sorted: Object.freeze(files.map(({ path, size }) => ({ path, size }))),
    byPath,
    files,
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
