import {
  comparePaths,
  err,
  MANIFEST_MAX_BYTES,
  type ManifestFile,
  type ManifestRequest,
  ManifestRequestSchema,
  manifestId,
  printablePath,
  type Result,
  type SkippedEntry,
  SNAPSHOT_MAX_FILES,
  type SnapshotReceipt,
} from "../protocol/index.ts";
import { isGzip, readCompressed } from "./archive.ts";
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
import type { BlobRegistry } from "./registry.ts";

/** Deepest JSON nesting a manifest has (`{files: [[path, blob]]}` is 3). */
const MANIFEST_MAX_DEPTH = 8;

/**
 * `POST /v1/snapshots/manifest` (docs/PROTOCOL.md "Incremental snapshots"): commits a tree of
 * blobs the owner has stored as a snapshot. The body is JSON, gzip-compressed or not (told
 * apart by the gzip signature, so a proxy that inflated it on the way changes nothing).
 *
 * A manifest is hostile input like an archive, and is refused rather than repaired: a path
 * an archive entry would be skipped for (absolute, `..`, unstorable name), a duplicate or a
 * file-and-folder conflict is 400 `invalid_manifest` naming it; more than 20,000 entries is
 * 413 `snapshot_too_many_files`; a `base` the owner does not have is 400 `unknown_snapshot`;
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

async function readManifest(body: ReadableStream<Uint8Array>): Promise<ManifestRequest> {
  let chunks = await readCompressed(body);
  if (isGzip(chunks)) chunks = await inflate(chunks);
  const total = chunks.reduce((sum, c) => sum + c.byteLength, 0);
  if (total > MANIFEST_MAX_BYTES) throw manifestTooLarge();
  const text = new TextDecoder().decode(await new Blob(chunks).arrayBuffer());
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") {
      if (++depth > MANIFEST_MAX_DEPTH)
        throw invalidManifest("The manifest nests deeper than any manifest does.");
    } else if (c === "]" || c === "}") depth--;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw invalidManifest(`The manifest is not valid JSON (${(cause as Error).message}).`);
  }
  const parsed = ManifestRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.map(String).join(".") : "body";
    throw invalidManifest(`Invalid manifest: ${where}: ${issue?.message ?? "wrong shape"}.`);
  }
  return parsed.data;
}

async function inflate(chunks: readonly Uint8Array[]): Promise<Uint8Array[]> {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const out: Uint8Array[] = [];
  for await (const chunk of gunzipWithLimit(source, MANIFEST_MAX_BYTES, manifestTooLarge)) {
    out.push(chunk);
  }
  return out;
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
    for (const path of request.removed ?? []) {
      if (!tree.delete(path)) {
        throw invalidManifest(
          `removed: ${JSON.stringify(printablePath(path))} is not a file of the base snapshot.`,
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
  for (const [index, entry] of request.skipped.entries()) {
    if (entry.path.length === 0 || printablePath(entry.path) !== entry.path) {
      throw invalidManifest(
        `skipped[${index}]: the path must be printable (control characters escaped) and at most 300 characters.`,
      );
    }
  }
  return { files, skipped: request.skipped };
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
