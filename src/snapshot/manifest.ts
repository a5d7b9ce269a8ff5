import {
  comparePaths,
  err,
  isLoneSurrogateAt,
  MANIFEST_MAX_BYTES,
  type ManifestFile,
  type ManifestRequest,
  manifestId,
  printablePath,
  type Result,
  type SkippedEntry,
  SNAPSHOT_MAX_FILES,
  type SnapshotReceipt,
} from "../protocol/index.ts";
import { isGzip, openBody } from "./archive.ts";
import { committed } from "./commit.ts";
import { classifyEntry } from "./entry-rules.ts";
import {
  type IngestError,
  IngestFailure,
  invalidManifest,
  manifestTooLarge,
  tooManyFiles,
} from "./errors.ts";
import { FileSet } from "./file-set.ts";
import { gunzipWithLimit } from "./gunzip.ts";
import { isSnapshotId, loadIndex, snapshotPrefix } from "./layout.ts";
import { ManifestReader } from "./manifest-reader.ts";
import type { BlobRegistry } from "./registry.ts";

/**
 * `POST /v1/snapshots/manifest` (docs/PROTOCOL.md "Incremental snapshots"): commits a tree of
 * blobs the owner has stored as a snapshot. The body is JSON, gzip-compressed or not (told
 * apart by the gzip signature, so a proxy that inflated it on the way changes nothing).
 *
 * A manifest is hostile input like an archive, and is refused rather than repaired: a path
 * an archive entry would be skipped for (absolute, `..`, unstorable name, a lone surrogate), a
 * duplicate, a file-and-folder conflict, a skipped path listed twice or also stored is 400
 * `invalid_manifest` naming it; more than 20,000 entries is 413 `snapshot_too_many_files` and
 * more than 8 MiB of JSON 413 `payload_too_large`, both while reading (`readManifest`); a
 * `base` the owner does not have is 400 `unknown_snapshot`;
 * blobs the owner has not stored are 409 `blobs_missing` with their ids; a tree that does not
 * hash to `id` is 400 `invalid_manifest`.
 *
 * @example
 * const receipt = await commitManifest(env.SNAPSHOTS, registry, owner, c.req.raw.body);
 */
export async function commitManifest(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  body: ReadableStream<Uint8Array>,
): Promise<Result<SnapshotReceipt, IngestError>> {
  try {
    const request = await readManifest(body);
    const tree = await resolveTree(bucket, registry, owner, request);
    const actual = await manifestId(tree.files, tree.skipped);
    if (actual !== request.id) {
      throw invalidManifest(
        `The manifest's tree hashes to ${actual}, not to the id ${request.id} it was sent with (docs/PROTOCOL.md "Incremental snapshots" defines the hash).`,
      );
    }
    return committed(await registry.commitSnapshot(request.id, tree.files, tree.skipped));
  } catch (error) {
    if (error instanceof IngestFailure) return err(error.error);
    throw error;
  }
}

/**
 * The request read as it arrives: bytes counted (inflated ones when gzip) and refused past
 * {@link MANIFEST_MAX_BYTES}, decoded as strict UTF-8, and read entry by entry by the
 * {@link ManifestReader}, which refuses the 20,001st entry before reading it. Nothing is
 * inflated or decoded beyond what the reader asked for, so refusing a bomb costs what
 * refusing a manifest just over a limit does.
 */
async function readManifest(body: ReadableStream<Uint8Array>): Promise<ManifestRequest> {
  const { head, stream } = await openBody(body, MANIFEST_MAX_BYTES, manifestTooLarge);
  const bytes = isGzip(head)
    ? gunzipWithLimit(stream, MANIFEST_MAX_BYTES, manifestTooLarge)
    : stream;
  const reader = new ManifestReader();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw invalidManifest("The manifest is not valid UTF-8; send it as UTF-8 JSON.");
    }
  };
  // Leaving the loop early (a refusal) cancels the stream: inflating stops, the body is dropped.
  for await (const chunk of bytes) reader.push(decode(chunk));
  reader.push(decode());
  return reader.end();
}

/** The whole tree the request stands for, checked entry by entry. */
async function resolveTree(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  request: ManifestRequest,
): Promise<{ files: ManifestFile[]; skipped: SkippedEntry[] }> {
  if (request.files.length + request.skipped.length > SNAPSHOT_MAX_FILES) throw tooManyFiles();
  const tree = new Map<string, string>();
  if (request.base !== undefined) {
    for (const [path, blob] of await baseFiles(bucket, registry, owner, request.base)) {
      tree.set(path, blob);
    }
    for (const [index, path] of (request.removed ?? []).entries()) {
      if (!tree.delete(path)) {
        throw invalidManifest(
          `removed[${index}]: ${JSON.stringify(printablePath(path))} is not a file of the base snapshot.`,
        );
      }
    }
  } else if (request.removed !== undefined && request.removed.length > 0) {
    throw invalidManifest("removed: a manifest without a base has nothing to remove from.");
  }
  const listed = new Set<string>();
  for (const [index, [path, blob]] of request.files.entries()) {
    if (listed.has(path)) {
      throw invalidManifest(
        `files[${index}]: ${JSON.stringify(printablePath(path))} is listed twice.`,
      );
    }
    listed.add(path);
    const problem = pathProblem(path);
    if (problem !== null)
      throw invalidManifest(`files[${index}]: ${JSON.stringify(printablePath(path))} ${problem}.`);
    tree.set(path, blob);
  }
  if (tree.size + request.skipped.length > SNAPSHOT_MAX_FILES) throw tooManyFiles();
  const files = [...tree]
    .map(([path, blob]) => ({ path, blob }))
    .sort((a, b) => comparePaths(a.path, b.path));
  const seen = new FileSet();
  for (const file of files) {
    const conflict = seen.admit(file.path);
    if (conflict !== null) {
      throw invalidManifest(
        `${JSON.stringify(printablePath(file.path))} is both a file and a folder.`,
      );
    }
  }
  const skippedPaths = new Set<string>();
  for (const [index, entry] of request.skipped.entries()) {
    const shown = JSON.stringify(printablePath(entry.path));
    const problem = skippedProblem(entry.path);
    if (problem !== null) throw invalidManifest(`skipped[${index}]: ${shown} ${problem}.`);
    // A tree holds a path once: listed twice, or as a file and as skipped, it is two trees.
    if (skippedPaths.has(entry.path))
      throw invalidManifest(`skipped[${index}]: ${shown} is listed twice.`);
    if (tree.has(entry.path)) {
      throw invalidManifest(`skipped[${index}]: ${shown} is also a stored file of the tree.`);
    }
    skippedPaths.add(entry.path);
  }
  return { files, skipped: request.skipped };
}

/** Why a skipped entry's path cannot be in a manifest, or null (see `manifestSkips`). */
function skippedProblem(path: string): string | null {
  if (path.length === 0) return "is empty";
  for (let i = 0; i < path.length; i++) {
    if (isLoneSurrogateAt(path, i)) {
      return `holds a lone UTF-16 surrogate at character ${i}, which no file name can (a manifest differing only there would hash alike)`;
    }
  }
  if (printablePath(path) !== path) {
    return "is not printable: control characters must be escaped, and at most 300 characters kept";
  }
  return null;
}

/** A stored file path as an archive entry of the same name would be stored, or why not. */
function pathProblem(path: string): string | null {
  const verdict = classifyEntry({ name: path, type: "file" });
  if (verdict.kind === "skip") return `cannot be stored (${verdict.reason.replaceAll("_", " ")})`;
  if (verdict.kind === "file" && verdict.path !== path) {
    return `is not in normal form (it would be stored as ${JSON.stringify(verdict.path)})`;
  }
  return null;
}

async function baseFiles(
  bucket: R2Bucket,
  registry: BlobRegistry,
  owner: string,
  base: string,
): Promise<[string, string][]> {
  const index =
    isSnapshotId(base) && (await registry.hasSnapshot(base))
      ? await loadIndex(bucket, snapshotPrefix(owner, base))
      : null;
  // A snapshot from before blobs has no blob ids to build on.
  if (index === null || index.files.some((f) => f.blob === "")) {
    throw new IngestFailure({
      status: 400,
      code: "unknown_snapshot",
      message: `The base snapshot ${base} is not stored (deleted after the retention period, or never yours); send the whole manifest without a base.`,
    });
  }
  return index.files.map((f) => [f.path, f.blob]);
}
