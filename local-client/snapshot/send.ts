import { gzipSync } from "node:zlib";
import {
  comparePaths,
  gitBlobId,
  type ManifestRequest,
  MISSING_QUERY_MAX_BLOBS,
  manifestId,
  manifestSkips,
  type SkippedEntry,
  SNAPSHOT_MAX_FILE_BYTES,
} from "../../src/protocol/index.ts";
import { type Api, ApiError, withRetry } from "../http/api.ts";
import { manifestDelta, type SnapshotBase } from "./base.ts";
import { BlobPack } from "./blob-pack.ts";
import {
  type CollectedTree,
  readTreeFile,
  type SnapshotProgress,
  type TreeFile,
  yieldToEventLoop,
} from "./build.ts";
import { REMOTE_PACK_LEVEL } from "./pack-level.ts";

/**
 * The incremental upload (docs/PROTOCOL.md "Incremental snapshots"): `HEAD` the tree's id
 * (an unchanged tree costs one request), ask which of its new blobs the server lacks, send only
 * those (tar.gz packs named by blob id, each within the upload limits, the next one packed
 * while the last is on the wire), then commit the manifest — against the last snapshot this
 * machine committed (`base`) when there is one, so an edit costs a one-line manifest.
 */

export interface SentSnapshot {
  /** The snapshot id to start sessions on. */
  id: string;
  files: number;
  skipped: SkippedEntry[];
  /** Bytes of request bodies sent (missing-blob queries, blob packs, the manifest). */
  sentBytes: number;
  /** Blobs uploaded (the server lacked them). */
  blobsSent: number;
  /** True when the server had this very tree: only a `HEAD` was sent. */
  reused: boolean;
  /** The base for the next upload (the caller keeps it: snapshot/base.ts `saveBase`). */
  base: SnapshotBase;
  /** Blob ids of tracked files found binary (the caller keeps them: `saveKnownBinary`). */
  binary: Set<string>;
}

export interface SendOptions {
  base?: SnapshotBase | null;
  /** gzip level of the blob packs (snapshot/pack-level.ts `packLevelFor`); 6 when absent. */
  packLevel?: number;
  signal?: AbortSignal;
  onProgress?: (progress: SnapshotProgress) => void;
}

/**
 * Raw bytes per blob pack: small enough that packing the next overlaps sending the last (and
 * far under the 25 MiB compressed limit for any text), large enough that a request's cost is
 * the bytes, not the round trip.
 */
const PACK_BATCH_BYTES = 8 * 1024 * 1024;
/**
 * Raw bytes of an upload's first pack; each next one doubles, up to {@link PACK_BATCH_BYTES}.
 * The server has nothing to do until a first pack is read, compressed and sent: an 8 MiB first
 * pack kept it idle for ~0.5 s of a 10,000-file upload (issue 34), a 512 KiB one for ~0.05 s.
 */
const FIRST_PACK_BYTES = 512 * 1024;
/**
 * Reading files is synchronous; after this many bytes the loop yields to the event loop, so
 * packs compressed on the thread pool are handed to their uploads, and the uploads' sockets
 * written, while the next pack is read — not only when a full pack has to wait for a slot.
 */
const READ_BYTES_BETWEEN_YIELDS = 1024 * 1024;
/** A pack's buffer: a full batch, the largest file after it, its header and the tar's end. */
const PACK_BUFFER_BYTES = PACK_BATCH_BYTES + SNAPSHOT_MAX_FILE_BYTES + 4096;
/** Files per blob pack at most (the server takes 20,000 entries per upload). */
const PACK_MAX_FILES = 10_000;
/** Blob packs on the wire at once. */
const UPLOADS_IN_FLIGHT = 2;
/** Commit attempts when blobs went missing between their upload and the commit. */
const COMMIT_ATTEMPTS = 3;

/**
 * Sends `tree` to the server; resolves with the stored snapshot's id and what it cost.
 *
 * @example
 * const tree = await collectTree(root, { knownBinary: base?.binary });
 * const sent = await sendSnapshot(api, tree, { base });
 * saveBase(path, sent.base);
 */
export async function sendSnapshot(
  api: Api,
  collected: CollectedTree,
  options: SendOptions = {},
): Promise<SentSnapshot> {
  const signal = options.signal;
  const tree = new WorkingTree(collected);
  let base = options.base ?? null;
  let sentBytes = 0;
  let blobsSent = 0;

  const id = await tree.id();
  if (await withRetry(() => api.snapshotExists(id), signal)) {
    return { ...tree.summary(id), sentBytes, blobsSent, reused: true };
  }

  const upload = async (blobs: readonly string[]): Promise<void> => {
    const sent = await uploadBlobs(api, tree, blobs, options);
    sentBytes += sent.bytes;
    blobsSent += sent.blobs;
  };
  const askMissing = async (candidates: readonly string[]): Promise<string[]> => {
    const missing: string[] = [];
    for (let i = 0; i < candidates.length; i += MISSING_QUERY_MAX_BLOBS) {
      const blobs = candidates.slice(i, i + MISSING_QUERY_MAX_BLOBS);
      sentBytes += JSON.stringify({ blobs }).length;
      missing.push(...(await withRetry(() => api.missingBlobs(blobs, { signal }), signal)));
    }
    return missing;
  };

  await upload(await askMissing(manifestDelta(base, tree.collected()).candidates));
  for (let attempt = 1; ; attempt++) {
    const finalId = await tree.id();
    const delta = manifestDelta(base, tree.collected());
    const request: ManifestRequest =
      base === null
        ? { id: finalId, files: delta.changed, skipped: tree.skipped() }
        : {
            id: finalId,
            base: base.id,
            files: delta.changed,
            removed: delta.removed,
            skipped: tree.skipped(),
          };
    const body = gzipSync(JSON.stringify(request), { level: 6 });
    sentBytes += body.byteLength;
    try {
      const receipt = await withRetry(() => api.commitManifest(body, { signal }), signal);
      return { ...tree.summary(receipt.id), sentBytes, blobsSent, reused: false };
    } catch (err) {
      if (!(err instanceof ApiError) || attempt >= COMMIT_ATTEMPTS) throw err;
      if (err.code === "unknown_snapshot" && base !== null) {
        // The base was purged on the server: send the whole tree's manifest (and any blob of
        // it the server no longer has).
        base = null;
        await upload(await askMissing(manifestDelta(null, tree.collected()).candidates));
      } else if (err.code === "blobs_missing" && err.missing !== undefined) {
        await upload(err.missing);
      } else {
        throw err;
      }
    }
  }
}

/**
 * Reads, checks and packs the blobs `wanted` and uploads them. A file that changed since it
 * was collected is sent under its new id, one that became binary or vanished leaves the tree
 * (the {@link WorkingTree} records either), so what is committed is what was read.
 */
async function uploadBlobs(
  api: Api,
  tree: WorkingTree,
  wanted: readonly string[],
  options: SendOptions,
): Promise<{ bytes: number; blobs: number }> {
  const signal = options.signal;
  let bytes = 0;
  let blobs = 0;
  const inFlight: Promise<void>[] = [];
  const level = options.packLevel ?? REMOTE_PACK_LEVEL;
  // Pack buffers are reused once their pack is compressed: no 9 MiB allocation per pack.
  const freeBuffers: Uint8Array[] = [];
  const nextPack = () => new BlobPack(freeBuffers.pop() ?? new Uint8Array(PACK_BUFFER_BYTES));
  let pack = nextPack();
  const added = new Set<string>();
  let batchBytes = FIRST_PACK_BYTES;
  const flush = async (): Promise<void> => {
    if (pack.files === 0) return;
    batchBytes = Math.min(batchBytes * 2, PACK_BATCH_BYTES);
    const sent = pack.files;
    const { buffer } = pack;
    // Compressed on the thread pool while the next pack is read.
    const compressing = pack.finish(level);
    void compressing.finally(() => freeBuffers.push(buffer)).catch(() => {});
    pack = nextPack();
    if (inFlight.length >= UPLOADS_IN_FLIGHT) await inFlight.shift();
    const upload = compressing
      .then((body) => {
        bytes += body.byteLength;
        return withRetry(() => api.uploadBlobs(body, { signal }), signal);
      })
      .then(() => {
        blobs += sent;
      });
    upload.catch(() => {});
    inFlight.push(upload);
  };
  let done = 0;
  let readSinceYield = 0;
  const total = wanted.length;
  for (const blob of wanted) {
    // Each file is read straight into the pack's free room (a view, overwritten by the next).
    for (let { id, content } of tree.contentsFor(blob, () => pack.room())) {
      if (added.has(id)) continue;
      added.add(id);
      if (pack.bytes + content.byteLength > batchBytes || pack.files >= PACK_MAX_FILES) {
        content = content.slice();
        await flush();
      }
      pack.add(id, content);
      readSinceYield += content.byteLength;
      if (readSinceYield >= READ_BYTES_BETWEEN_YIELDS) {
        readSinceYield = 0;
        await yieldToEventLoop(signal);
      }
    }
    done += 1;
    if (done % 100 === 0 || done === total)
      options.onProgress?.({ phase: "uploading", done, total });
    signal?.throwIfAborted();
  }
  await flush();
  await Promise.all(inFlight);
  return { bytes, blobs };
}

/** The tree being sent, as its files change under the upload (edited, deleted, found binary). */
class WorkingTree {
  private readonly files = new Map<string, TreeFile>();
  /** blob id → the paths that have it (kept in step with `files`). */
  private readonly byBlob = new Map<string, Set<string>>();
  private readonly skips: SkippedEntry[];
  private readonly binary: Set<string>;
  private readonly root: string;
  private cachedId: string | null = null;

  constructor(tree: CollectedTree) {
    this.root = tree.root;
    for (const file of tree.files) this.put(file);
    this.skips = [...tree.skipped];
    this.binary = new Set(tree.binary);
  }

  collected(): CollectedTree {
    const files = [...this.files.values()].sort((a, b) => comparePaths(a.path, b.path));
    return { root: this.root, files, skipped: this.skipped(), binary: this.binary };
  }

  /** What the manifest lists as skipped: one entry per path, none a stored file. */
  skipped(): SkippedEntry[] {
    return manifestSkips(this.files.keys(), this.skips);
  }

  async id(): Promise<string> {
    this.cachedId ??= await manifestId([...this.files.values()], this.skipped());
    return this.cachedId;
  }

  summary(id: string): Omit<SentSnapshot, "sentBytes" | "blobsSent" | "reused"> {
    const files = new Map([...this.files.values()].map((f) => [f.path, f.blob]));
    return {
      id,
      files: this.files.size,
      skipped: this.skipped(),
      base: { id, files },
      binary: new Set(this.binary),
    };
  }

  /**
   * The content of `blob`, read from the files that have it: each file is read; one whose
   * bytes no longer hash to `blob` is re-keyed to what it holds now (and that content is sent
   * too), one that is now binary, too large or unreadable is skipped, one that is gone is
   * dropped. With `room`, each file is read into the buffer it answers at that moment (a
   * yielded content is then a view of it: use it before the next one is read).
   */
  *contentsFor(
    blob: string,
    room?: () => Uint8Array,
  ): Generator<{ id: string; content: Uint8Array }> {
    for (const path of [...(this.byBlob.get(blob) ?? [])]) {
      const file = this.files.get(path) as TreeFile;
      const outcome = readTreeFile(this.root, path, room?.());
      if (outcome.kind === "gone") {
        this.drop(path);
        continue;
      }
      if (outcome.kind === "skip") {
        this.drop(path);
        this.skips.push({ path, reason: outcome.reason });
        if (outcome.reason === "binary" && file.fromIndex) this.binary.add(file.blob);
        continue;
      }
      const actual = gitBlobId(outcome.content);
      if (actual !== blob) {
        this.drop(path);
        this.put({ path, blob: actual, fromIndex: false });
      }
      yield { id: actual, content: outcome.content };
      // One readable copy of a blob is enough; the other files with it need no read.
      if (actual === blob) return;
    }
  }

  private put(file: TreeFile): void {
    this.files.set(file.path, file);
    const paths = this.byBlob.get(file.blob) ?? new Set<string>();
    paths.add(file.path);
    this.byBlob.set(file.blob, paths);
    this.cachedId = null;
  }

  private drop(path: string): void {
    const file = this.files.get(path);
    if (file === undefined) return;
    this.files.delete(path);
    this.byBlob.get(file.blob)?.delete(path);
    this.cachedId = null;
  }
}
