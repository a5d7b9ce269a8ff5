import { formatPatch, structuredPatch } from "diff";

/**
 * The workspace overlay as a unified diff against the snapshot, in the form `git apply`
 * accepts: a `diff --git a/… b/…` header per file, `new file mode` / `deleted file mode` for
 * creations and deletions (`--- /dev/null`, `+++ /dev/null`), `\ No newline at end of file`
 * where a side lacks the final newline, and git's quoting of unusual path characters. Pure.
 */

export interface FileChange {
  /** Relative POSIX path inside the repository. */
  path: string;
  /** Content in the snapshot; null when the file did not exist there. */
  before: string | null;
  /** Content in the overlay; null when the overlay deleted the file. */
  after: string | null;
  /**
   * Git blob ids of both sides (see {@link gitBlobId}). When given, the patch carries git's
   * `index` line, which lets `git apply --3way` fall back to a real three-way merge when the
   * local file moved on since the snapshot.
   */
  blobs?: { before: string | null; after: string | null };
}

/** Git's id for a missing side of a creation or deletion. */
const NULL_BLOB_ID = "0".repeat(40);
const REGULAR_FILE_MODE = "100644";

/** Lines of unchanged context around each change, as git's default. */
const CONTEXT_LINES = 3;

/**
 * Formats the changes as one patch, files in path order; unchanged files are left out and an
 * empty string means nothing changed.
 *
 * @example
 * unifiedDiff([{ path: "a.txt", before: "x\n", after: "y\n" }])
 * // "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n"
 */
export function unifiedDiff(changes: readonly FileChange[]): string {
  return [...changes]
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
    .map(fileDiff)
    .join("");
}

function fileDiff(change: FileChange): string {
  const { path, before, after } = change;
  if (before === after || (before === null && after === null)) return "";
  const isCreate = before === null;
  const isDelete = after === null;
  const patch = structuredPatch(
    isCreate ? "/dev/null" : `a/${path}`,
    isDelete ? "/dev/null" : `b/${path}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: CONTEXT_LINES },
  );
  const text = formatPatch({ ...patch, isGit: true, isCreate, isDelete });
  return change.blobs ? withIndexLine(text, change.blobs, isCreate || isDelete) : text;
}

/** Inserts `index <old>..<new>[ <mode>]` where git puts it: after the extended headers. */
function withIndexLine(
  text: string,
  blobs: { before: string | null; after: string | null },
  modeInHeader: boolean,
): string {
  const lines = text.split("\n");
  let at = 1;
  while (at < lines.length && /^(new|deleted) file mode /.test(lines[at] ?? "")) at++;
  const ids = `${blobs.before ?? NULL_BLOB_ID}..${blobs.after ?? NULL_BLOB_ID}`;
  lines.splice(at, 0, `index ${ids}${modeInHeader ? "" : ` ${REGULAR_FILE_MODE}`}`);
  return lines.join("\n");
}

/** Git's blob id (one definition: src/protocol/blob-id.ts), beside the diff that carries it. */
export { gitBlobId } from "../../protocol/index.ts";
