import { closeSync, lstatSync, openSync, readFileSync, readSync, type Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  comparePaths,
  gitBlobId,
  isTextContent,
  manifestSkips,
  type SkippedEntry,
  SNAPSHOT_MAX_FILE_BYTES,
} from "../../src/protocol/index.ts";
import { SnapshotError } from "./error.ts";
import { openPacker } from "./pack.ts";
import { listTree } from "./tree.ts";

/**
 * The repository snapshot, client side: the working tree as git sees it, filtered by the
 * same rules the worker applies (`src/protocol/snapshot-rules.ts`), packed as a
 * deterministic tar.gz. Uploading it (HEAD, then POST when new) is the CLI's job.
 */

export { SnapshotError } from "./error.ts";

export interface SnapshotProgress {
  /**
   * `scanning`: looking at each listed path; `packing`: reading and packing the kept files;
   * `hashing`: reading the files git has no id for; `uploading`: sending the blobs the server
   * lacks (counted in files).
   */
  phase: "scanning" | "packing" | "hashing" | "uploading";
  done: number;
  total: number;
}

export interface SnapshotBuild {
  /** Hex sha256 of `bytes`: the id the server will give the snapshot. */
  id: string;
  /** The tar.gz request body (its own buffer, ready for `fetch`). */
  bytes: Uint8Array<ArrayBuffer>;
  /** Files packed. */
  files: number;
  /** Files left out and why, sorted by path (symlinks, binaries, files over 1 MiB…). */
  skipped: SkippedEntry[];
}

export interface BuildSnapshotOptions {
  /** Called as work advances (at most every {@link PROGRESS_EVERY_FILES} files, and at each phase end). */
  onProgress?: (progress: SnapshotProgress) => void;
  /** Stops the build between two batches of files; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Progress granularity: frequent enough for a live counter, cheap on 20,000 files. */
export const PROGRESS_EVERY_FILES = 100;
/** Files looked at or read between two returns to the event loop. */
const SYNC_BATCH_FILES = 64;

/**
 * Snapshots the tree at `root`. Included: tracked files (with their uncommitted changes, read
 * from disk) and untracked files that are not ignored; outside git, every file not excluded
 * by a `.gitignore`. Left out and listed: symlinks (never followed), submodules, special
 * files, binary files and files over 1 MiB, unreadable files, unstorable names. Deleted but
 * still tracked files are simply absent. Throws {@link SnapshotError} for a root that is not
 * a folder or a tree the server would refuse (its limits are checked while packing).
 *
 * @example
 * const snapshot = await buildSnapshot(process.cwd(), {
 *   onProgress: ({ phase, done, total }) => spinner.message(`${phase} ${done}/${total}`),
 * });
 * if (!(await api.snapshotExists(snapshot.id))) await api.uploadSnapshot(snapshot.bytes);
 */
export async function buildSnapshot(
  root: string,
  options: BuildSnapshotOptions = {},
): Promise<SnapshotBuild> {
  const { base, report, signal, skipped, candidates } = await listCandidates(root, options);
  const packer = openPacker();
  let files = 0;
  try {
    await readInOrder(base, candidates, signal, async (path, outcome, done) => {
      if (outcome.kind === "text") {
        await packer.add({ path, content: outcome.content });
        files += 1;
      } else if (outcome.kind === "skip") {
        skipped.push({ path, reason: outcome.reason });
      }
      report("packing", done, candidates.length);
    });
  } catch (error) {
    packer.abort(error);
    throw error;
  }
  const { id, bytes } = await packer.finish();
  skipped.sort((a, b) => comparePaths(a.path, b.path));
  return { id, bytes, files, skipped };
}

/** One file of a collected tree: its path, its blob id, and whether git supplied the id. */
export interface TreeFile {
  path: string;
  blob: string;
  /** True when the id came from git's index (the file was not read). */
  fromIndex: boolean;
}

/** The tree as the incremental upload sees it (docs/DESIGN.md "Incremental snapshots"). */
export interface CollectedTree {
  root: string;
  /** Sorted by path. */
  files: TreeFile[];
  /** Sorted by path. */
  skipped: SkippedEntry[];
  /** Blob ids of tracked files skipped as binary (known before, or found by the upload). */
  binary: Set<string>;
}

export interface CollectOptions extends BuildSnapshotOptions {
  /**
   * Blob ids of tracked files found binary before (by an earlier upload): a file git still has
   * one of these ids for is skipped as binary again without being read.
   */
  knownBinary?: ReadonlySet<string>;
}

/**
 * Collects the tree at `root` with the same rules as {@link buildSnapshot}, as blob ids: a
 * tracked file git reports unchanged takes git's id without being read; every other file is
 * read, checked (text, at most 1 MiB) and hashed. Nothing is kept in memory but the ids.
 *
 * @example
 * const tree = await collectTree(process.cwd());
 * tree.files[0] // { path: "README.md", blob: "e69de29b…", fromIndex: true }
 */
export async function collectTree(
  root: string,
  options: CollectOptions = {},
): Promise<CollectedTree> {
  const { base, report, signal, skipped, candidates, listing } = await listCandidates(
    root,
    options,
  );
  const files: TreeFile[] = [];
  const binary = new Set<string>();
  const toRead: Candidate[] = [];
  for (const { path } of candidates) {
    const blob = listing.indexed.get(path);
    if (blob === undefined) toRead.push({ path });
    else if (options.knownBinary?.has(blob)) {
      binary.add(blob);
      skipped.push({ path, reason: "binary" });
    } else files.push({ path, blob, fromIndex: true });
  }
  await readInOrder(base, toRead, signal, async (path, outcome, done) => {
    if (outcome.kind === "text")
      files.push({ path, blob: gitBlobId(outcome.content), fromIndex: false });
    else if (outcome.kind === "skip") skipped.push({ path, reason: outcome.reason });
    report("hashing", done, toRead.length);
  });
  files.sort((a, b) => comparePaths(a.path, b.path));
  const listed = manifestSkips(
    files.map((f) => f.path),
    skipped,
  );
  return { root: base, files, skipped: listed, binary };
}

/**
 * Reads one file of a collected tree again, to upload it: its bytes when it is still text of
 * at most 1 MiB, else why it must be skipped now (or `gone`). With `into` (room for more than
 * 1 MiB), the bytes are read into it and the content is a view of it — no fresh buffer per
 * file (issue 34: allocating them was 128 ms of the 476 ms reading 10,000 files took).
 */
export function readTreeFile(root: string, path: string, into?: Uint8Array): ReadOutcome {
  const file = join(root, path);
  if (into === undefined || into.byteLength <= SNAPSHOT_MAX_FILE_BYTES) return readCandidate(file);
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    return failedRead(error);
  }
  let length = 0;
  try {
    // Up to one byte past the limit: a file that grew past it since it was looked at shows.
    const wanted = SNAPSHOT_MAX_FILE_BYTES + 1;
    for (;;) {
      const n = readSync(fd, into, length, wanted - length, length);
      if (n === 0) break;
      length += n;
      if (length >= wanted) break;
    }
  } catch {
    return { kind: "skip", reason: "unreadable" };
  } finally {
    closeSync(fd);
  }
  return classifyRead(into.subarray(0, length));
}

/**
 * What both snapshot forms start with: the folder checked, the git view (or folder walk)
 * listed, and each listed path looked at (`scan`), the kept ones sorted by path.
 */
async function listCandidates(root: string, options: BuildSnapshotOptions) {
  const base = resolve(root);
  await requireFolder(base);
  const report = progressReporter(options.onProgress);
  const listing = await listTree(base);
  const skipped = [...listing.skipped];
  const signal = options.signal;
  signal?.throwIfAborted();
  const candidates = await scan(base, listing.paths, skipped, signal, (done) =>
    report("scanning", done, listing.paths.length),
  );
  candidates.sort((a, b) => comparePaths(a.path, b.path));
  return { base, report, signal, skipped, candidates, listing };
}

async function requireFolder(path: string): Promise<void> {
  const info = await stat(path).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new SnapshotError("not_a_directory", `${path} is not a folder.`);
  }
}

interface Candidate {
  path: string;
}

/**
 * Looks at each listed path without following links: regular files of at most 1 MiB go on;
 * everything else is reported, except paths that vanished (deleted but still tracked).
 * Synchronous calls in small batches: for many small files this is several times faster
 * than a thread-pool round trip per call, and the pauses between batches keep a spinner
 * turning.
 */
async function scan(
  root: string,
  paths: readonly string[],
  skipped: SkippedEntry[],
  signal: AbortSignal | undefined,
  onDone: (done: number) => void,
): Promise<Candidate[]> {
  const kept: Candidate[] = [];
  for (let done = 1; done <= paths.length; done++) {
    const path = paths[done - 1] as string;
    const verdict = look(join(root, path));
    if (verdict === "file") kept.push({ path });
    else if (verdict !== "gone") skipped.push({ path, reason: verdict });
    onDone(done);
    if (done % SYNC_BATCH_FILES === 0) await yieldToEventLoop(signal);
  }
  return kept;
}

function look(
  file: string,
): "file" | "gone" | "symlink" | "submodule" | "special_file" | "too_large" | "unreadable" {
  let info: Stats;
  try {
    info = lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Deleted in the working tree: the git view has no such file.
    return code === "ENOENT" || code === "ENOTDIR" ? "gone" : "unreadable";
  }
  if (info.isSymbolicLink()) return "symlink";
  if (info.isDirectory()) return "submodule";
  if (!info.isFile()) return "special_file";
  return info.size > SNAPSHOT_MAX_FILE_BYTES ? "too_large" : "file";
}

export type ReadOutcome =
  | { kind: "text"; content: Uint8Array }
  | { kind: "skip"; reason: "binary" | "too_large" | "unreadable" }
  | { kind: "gone" };

/** Reads the candidates in order (see {@link scan} for why synchronously, in batches). */
async function readInOrder(
  root: string,
  candidates: readonly Candidate[],
  signal: AbortSignal | undefined,
  onFile: (path: string, outcome: ReadOutcome, done: number) => Promise<void>,
): Promise<void> {
  for (let done = 1; done <= candidates.length; done++) {
    const path = (candidates[done - 1] as Candidate).path;
    await onFile(path, readCandidate(join(root, path)), done);
    if (done % SYNC_BATCH_FILES === 0) await yieldToEventLoop(signal);
  }
}

function readCandidate(file: string): ReadOutcome {
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch (error) {
    return failedRead(error);
  }
  return classifyRead(new Uint8Array(content.buffer, content.byteOffset, content.byteLength));
}

/** A file that could not be opened: gone, or unreadable (to be skipped). */
function failedRead(error: unknown): ReadOutcome {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" ? { kind: "gone" } : { kind: "skip", reason: "unreadable" };
}

/** What a file's bytes, as just read, make it: text to send, or too large or binary now. */
function classifyRead(bytes: Uint8Array): ReadOutcome {
  // The file may have grown since it was looked at.
  if (bytes.byteLength > SNAPSHOT_MAX_FILE_BYTES) return { kind: "skip", reason: "too_large" };
  return isTextContent(bytes)
    ? { kind: "text", content: bytes }
    : { kind: "skip", reason: "binary" };
}

/** Lets the event loop run (I/O callbacks, timers), then stops if `signal` was aborted. */
export async function yieldToEventLoop(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}

/** Throttles progress to every N files, always reporting the end of a phase. */
function progressReporter(onProgress: BuildSnapshotOptions["onProgress"]) {
  return (phase: SnapshotProgress["phase"], done: number, total: number): void => {
    if (onProgress === undefined) return;
    if (done % PROGRESS_EVERY_FILES === 0 || done === total) onProgress({ phase, done, total });
  };
}
