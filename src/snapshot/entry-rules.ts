import {
  pathNameProblem,
  printablePath,
  type SkipReason,
  SNAPSHOT_MAX_PATH_BYTES,
} from "../protocol/index.ts";

/**
 * What the ingest does with one tar entry, decided from its header alone (pure). Files still
 * pass the size, duplicate and text checks afterwards; see `file-set.ts` and `ingest.ts`.
 */
export type EntryVerdict =
  /** A regular file to store under `path` (normalised: no `./`, no empty or `.` segments). */
  | { kind: "file"; path: string }
  /** A folder: not a file, nothing to store or report. */
  | { kind: "directory" }
  /** Left out and listed with its reason. */
  | { kind: "skip"; path: string; reason: SkipReason };

/** The header fields the verdict depends on (a subset of modern-tar's `TarHeader`). */
export interface EntryHeader {
  name: string;
  type?: string;
}

const TYPE_SKIP_REASONS: Record<string, SkipReason> = {
  symlink: "symlink",
  link: "hard_link",
  "character-device": "special_file",
  "block-device": "special_file",
  fifo: "special_file",
};

/**
 * A raw name longer than this cannot normalise to a storable path (at most
 * {@link SNAPSHOT_MAX_PATH_BYTES} bytes) short of thousands of `./` segments, so it is refused
 * before it is split: PAX and GNU long names may be 8 MiB, millions of segments.
 */
const MAX_RAW_NAME_CHARS = 4 * SNAPSHOT_MAX_PATH_BYTES;

/**
 * Classifies a tar entry. Unsafe names are refused before the type is looked at, so a
 * symlink called `../x` is reported for its path, the more alarming of the two. Every path in
 * a verdict is bounded (a skipped one is shortened for display): the skip list goes into the
 * receipt and the stored index, so a name must never be kept whole just because it was refused.
 *
 * @example
 * classifyEntry({ name: "./src/app.ts", type: "file" }); // { kind: "file", path: "src/app.ts" }
 * classifyEntry({ name: "../etc/passwd", type: "file" }); // { kind: "skip", …, reason: "parent_segment" }
 * classifyEntry({ name: "link", type: "symlink" }); // { kind: "skip", path: "link", reason: "symlink" }
 */
export function classifyEntry(header: EntryHeader): EntryVerdict {
  const type = header.type ?? "file";
  const name = header.name;
  if (name.length > MAX_RAW_NAME_CHARS) {
    return type === "directory"
      ? { kind: "directory" }
      : { kind: "skip", path: printablePath(name), reason: "name_too_long" };
  }
  // The tar reader decodes names leniently: invalid UTF-8 arrives as U+FFFD.
  if (name.length > 0 && pathNameProblem(name) === "invalid_name") {
    return { kind: "skip", path: printablePath(name), reason: "invalid_name" };
  }
  if (name.startsWith("/") || /^[A-Za-z]:[\\/]/.test(name)) {
    return { kind: "skip", path: printablePath(name), reason: "absolute_path" };
  }
  const segments = name.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) {
    return { kind: "skip", path: printablePath(name), reason: "parent_segment" };
  }
  if (type === "directory") return { kind: "directory" };
  const path = segments.join("/");
  if (path === "") return { kind: "skip", path: printablePath(name), reason: "invalid_name" };
  const typeReason = TYPE_SKIP_REASONS[type];
  if (typeReason !== undefined)
    return { kind: "skip", path: printablePath(path), reason: typeReason };
  const problem = pathNameProblem(path);
  if (problem !== null) return { kind: "skip", path: printablePath(path), reason: problem };
  return { kind: "file", path };
}
