import { CHANGE_MAX_BYTES, type FileChange } from "../../src/protocol/execution.ts";

/**
 * What a command did to the tree, from git's point of view (pure): the parsing of
 * `git diff-tree -r -z --raw --no-renames` and the rules for which new contents travel back.
 */

/** One changed path as git's raw diff lists it. */
export interface RawChange {
  path: string;
  kind: FileChange["kind"];
  /** The mode after the change ("000000" when deleted): 100644/100755 file, 120000 symlink, 160000 a nested repository. */
  mode: string;
}

const STATUS_KINDS: Record<string, FileChange["kind"]> = {
  A: "created",
  M: "modified",
  T: "modified",
  D: "deleted",
};

/**
 * Parses the NUL-separated raw output of `git diff-tree -r -z --no-renames A B`.
 *
 * @example
 * parseRawDiff(":000000 100644 0000 e69d A\0new.txt\0")
 * // → [{ path: "new.txt", kind: "created", mode: "100644" }]
 */
export function parseRawDiff(text: string): RawChange[] {
  const fields = text.split("\0");
  const changes: RawChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const head = fields[i] ?? "";
    const path = fields[i + 1] ?? "";
    const match = /^:(\d{6}) (\d{6}) [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/.exec(head);
    if (match === null) throw new Error(`git diff-tree printed an unexpected line: ${head}`);
    const kind = STATUS_KINDS[match[3] ?? ""];
    if (kind === undefined) throw new Error(`git diff-tree printed status ${match[3]} for ${path}`);
    changes.push({ path, kind, mode: match[2] ?? "" });
  }
  return changes;
}

/** The new contents of a file, or why they are not carried back. */
export type ChangeContent = { content: string } | { skipped: "binary" | "too_large" };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether bytes travel as text: not when larger than {@link CHANGE_MAX_BYTES}, not when they
 * hold a NUL byte or are not valid UTF-8.
 *
 * @example
 * changeContent(Buffer.from("hi\n")) // → { content: "hi\n" }
 * changeContent(Buffer.from([0, 1])) // → { skipped: "binary" }
 */
export function changeContent(bytes: Uint8Array, max = CHANGE_MAX_BYTES): ChangeContent {
  if (bytes.length > max) return { skipped: "too_large" };
  if (bytes.includes(0)) return { skipped: "binary" };
  try {
    return { content: strictUtf8.decode(bytes) };
  } catch {
    return { skipped: "binary" };
  }
}

/** Sorted by path, code unit order (the order the protocol promises). */
export function byPath(a: { path: string }, b: { path: string }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}
