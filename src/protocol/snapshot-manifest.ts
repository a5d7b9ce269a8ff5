import { z } from "zod";
import { SNAPSHOT_ID_PATTERN } from "./requests.ts";
import { comparePaths, SKIP_REASON_TEXT, type SkippedEntry } from "./snapshot-rules.ts";

/**
 * Incremental snapshots (docs/PROTOCOL.md "Incremental snapshots"): a snapshot is a tree
 * manifest — every stored file's path and the id of its content — and the contents are blobs
 * the worker keeps per owner, deduplicated across snapshots and sessions. The client sends
 * only the blobs the worker lacks. Shared by both ends: the blob id, the request shapes and the
 * canonical text whose sha256 is a manifest snapshot's id. Pure.
 */

/**
 * A blob id is git's: the hex SHA-1 of `blob <size>\0` followed by the content, so the client
 * can take the ids of unchanged tracked files from git's index without reading them. The
 * worker checks every uploaded blob against its id.
 */
export const BLOB_ID_PATTERN = /^[0-9a-f]{40}$/;

/** Most ids in one `POST /v1/blobs/missing` (a snapshot's files fit in one call). */
export const MISSING_QUERY_MAX_BLOBS = 20_000;

/**
 * Largest manifest request body (JSON, after gunzip when sent gzip-encoded), counted while it
 * is read. 20,000 entries of a 350-byte path and a blob id fit (real trees average under 100);
 * every MiB admitted is heap the worker spends on one request.
 */
export const MANIFEST_MAX_BYTES = 8 * 1024 * 1024;

const BlobId = z.string().regex(BLOB_ID_PATTERN, "a blob id is 40 lowercase hex digits");
const SnapshotId = z
  .string()
  .regex(SNAPSHOT_ID_PATTERN, "a snapshot id is 64 lowercase hex digits");
const SkipReasonSchema = z.enum(
  Object.keys(SKIP_REASON_TEXT) as [
    keyof typeof SKIP_REASON_TEXT,
    ...(keyof typeof SKIP_REASON_TEXT)[],
  ],
);

/** `POST /v1/blobs/missing` body. */
export const MissingBlobsRequestSchema = z.strictObject({
  blobs: z.array(BlobId).max(MISSING_QUERY_MAX_BLOBS),
});
export type MissingBlobsRequest = z.infer<typeof MissingBlobsRequestSchema>;

/** `POST /v1/blobs/missing` answer: the asked ids this owner has not stored, in asked order. */
export const MissingBlobsSchema = z.object({ missing: z.array(z.string()) });
export type MissingBlobs = z.infer<typeof MissingBlobsSchema>;

/** `POST /v1/blobs` answer: how many of the sent blobs were new, and their bytes. */
export const BlobsReceiptSchema = z.object({
  received: z.number().int().nonnegative(),
  stored: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
});
export type BlobsReceipt = z.infer<typeof BlobsReceiptSchema>;

/**
 * `POST /v1/snapshots/manifest` body. Without `base`, `files` is the whole tree. With `base`
 * (a snapshot of the same owner), `files` holds only the paths that are new or changed since
 * `base` and `removed` the paths that are gone; the worker applies them to `base`'s files.
 * `skipped` is always the whole list. `id` is the canonical id of the resulting tree
 * ({@link manifestText}); the worker refuses a manifest whose tree does not hash to it, so
 * both ends agree on what was stored.
 *
 * Files are `[path, blob id]` pairs: the smallest JSON for 20,000 entries.
 */
export const ManifestRequestSchema = z.strictObject({
  id: SnapshotId,
  base: SnapshotId.optional(),
  files: z.array(z.tuple([z.string(), BlobId])),
  removed: z.array(z.string()).optional(),
  skipped: z.array(z.strictObject({ path: z.string(), reason: SkipReasonSchema })),
});
export type ManifestRequest = z.infer<typeof ManifestRequestSchema>;

/**
 * The schema of each member of a manifest, and of each element of its lists: the worker reads
 * a manifest entry by entry (it never holds the whole document) and checks each as it comes.
 */
export const MANIFEST_MEMBER_SCHEMAS = {
  id: SnapshotId,
  base: SnapshotId,
  files: ManifestRequestSchema.shape.files.element,
  removed: z.string(),
  skipped: ManifestRequestSchema.shape.skipped.element,
} as const;

/**
 * The skipped list a manifest carries for a tree: sorted by path, one entry per path, and none
 * for a path that is also a stored file. A skipped path is shown, not stored — shortened, its
 * control characters escaped, invalid UTF-8 decoded leniently — so two different names can be
 * shown alike, or like a stored file; a tree cannot hold a path twice, and the worker refuses a
 * manifest that lists one twice, so the first entry stands for them all.
 *
 * @example
 * manifestSkips(["a.ts"], [{ path: "b\uFFFD", reason: "invalid_name" }, { path: "b\uFFFD", reason: "invalid_name" }])
 * // [{ path: "b\uFFFD", reason: "invalid_name" }]
 */
export function manifestSkips(
  storedPaths: Iterable<string>,
  skipped: readonly SkippedEntry[],
): SkippedEntry[] {
  const taken = new Set(storedPaths);
  const kept: SkippedEntry[] = [];
  const sorted = [...skipped].sort(
    (a, b) => comparePaths(a.path, b.path) || comparePaths(a.reason, b.reason),
  );
  for (const entry of sorted) {
    if (taken.has(entry.path)) continue;
    taken.add(entry.path);
    kept.push(entry);
  }
  return kept;
}

/** One stored file of a manifest. */
export interface ManifestFile {
  path: string;
  blob: string;
}

const MANIFEST_HEADER = "planport-manifest 1\n";

/**
 * The canonical text of a tree: a header line, then `<blob> <path>` per file and
 * `skip <reason> <path>` per skipped entry, each list sorted by path (code point order) and
 * newline-terminated. Paths never hold a newline (control characters are unstorable names, and
 * skipped paths are printable), so the text is unambiguous. Its sha256 is the snapshot id.
 *
 * @example
 * manifestText([{ path: "a.ts", blob: "e69d…" }], []) // "planport-manifest 1\ne69d… a.ts\n"
 */
export function manifestText(
  files: readonly ManifestFile[],
  skipped: readonly SkippedEntry[],
): string {
  const sortedFiles = [...files].sort((a, b) => comparePaths(a.path, b.path));
  const sortedSkips = [...skipped].sort(
    (a, b) => comparePaths(a.path, b.path) || comparePaths(a.reason, b.reason),
  );
  const lines = [MANIFEST_HEADER];
  for (const f of sortedFiles) lines.push(`${f.blob} ${f.path}\n`);
  for (const s of sortedSkips) lines.push(`skip ${s.reason} ${s.path}\n`);
  return lines.join("");
}

/**
 * The snapshot id of a tree: hex sha256 of {@link manifestText} (Web Crypto, in both runtimes).
 *
 * @example
 * await manifestId(files, skipped) // "3f1c…" (64 hex digits)
 */
export async function manifestId(
  files: readonly ManifestFile[],
  skipped: readonly SkippedEntry[],
): Promise<string> {
  const bytes = new TextEncoder().encode(manifestText(files, skipped));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
