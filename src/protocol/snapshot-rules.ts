/**
 * Which repository files a snapshot holds: the limits and the per-file rules that the local
 * client (which packs the tarball) and the worker (which ingests it) both apply, so the two
 * ends skip the same files for the same reasons. Pure; imports nothing.
 */

const MIB = 1024 * 1024;

/** Largest accepted upload: the tar.gz body as sent (413 `payload_too_large`). */
export const SNAPSHOT_MAX_COMPRESSED_BYTES = 25 * MIB;
/**
 * Largest accepted tar stream after gunzip, headers and padding included
 * (413 `snapshot_too_large`). Counted while streaming, so a gzip bomb is cut off here.
 */
export const SNAPSHOT_MAX_UNCOMPRESSED_BYTES = 100 * MIB;
/** Most entries other than directories in one snapshot (413 `snapshot_too_many_files`). */
export const SNAPSHOT_MAX_FILES = 20_000;
/** Files larger than this are skipped (`too_large`): a planner reads source, not data dumps. */
export const SNAPSHOT_MAX_FILE_BYTES = 1 * MIB;
/** Paths longer than this (UTF-8 bytes) are skipped (`name_too_long`): keeps the index small. */
export const SNAPSHOT_MAX_PATH_BYTES = 1024;

/** Why an entry was left out of a snapshot; each is listed as `{path, reason}`. */
export const SKIP_REASON_TEXT = {
  absolute_path: "absolute path",
  parent_segment: "path has a '..' segment",
  invalid_name: "name is not valid UTF-8 or contains control characters",
  name_too_long: `path is longer than ${SNAPSHOT_MAX_PATH_BYTES} bytes`,
  symlink: "symbolic link (not followed)",
  hard_link: "hard link",
  special_file: "device, FIFO or other special file",
  submodule: "submodule or nested repository",
  binary: "binary file (NUL byte or invalid UTF-8)",
  too_large: "file is larger than 1 MiB",
  duplicate: "path appears more than once in the archive",
  path_conflict: "path is both a file and a folder",
  unreadable: "file could not be read",
} as const;
export type SkipReason = keyof typeof SKIP_REASON_TEXT;

export interface SkippedEntry {
  path: string;
  reason: SkipReason;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * True when a file's bytes are text a planner can read: valid UTF-8 with no NUL byte. The
 * whole file is checked (files are at most 1 MiB), so stored texts always decode exactly.
 *
 * @example
 * isTextContent(new TextEncoder().encode("export const a = 1;\n")); // true
 * isTextContent(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00])); // false (PNG header)
 */
export function isTextContent(bytes: Uint8Array): boolean {
  if (bytes.indexOf(0) !== -1) return false;
  try {
    strictUtf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The reason a relative path cannot be stored as a snapshot file name, or null when it can.
 * (Absolute paths and `..` segments are the archive reader's concern; see `src/snapshot`.)
 *
 * @example
 * pathNameProblem("src/app.ts"); // null
 * pathNameProblem("evil\u001b[2Jname"); // "invalid_name"
 */
export function pathNameProblem(path: string): "invalid_name" | "name_too_long" | null {
  if (path.length === 0) return "invalid_name";
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    // U+FFFD is what a lenient decoder made of bytes that are not UTF-8; a lone surrogate
    // (JSON can spell one, `"\ud800"`) has no UTF-8 form at all, so no file can be named by it.
    if (isControlCharacter(c) || c === REPLACEMENT_CHARACTER || isLoneSurrogateAt(path, i))
      return "invalid_name";
  }
  if (utf8Length(path) > SNAPSHOT_MAX_PATH_BYTES) return "name_too_long";
  return null;
}

/**
 * A path made safe to show in a skipped list: control characters and lone UTF-16 surrogates
 * escaped as `\uXXXX`, and overlong paths shortened (never between the two halves of a
 * surrogate pair, which would leave a lone one behind).
 *
 * @example
 * printablePath("a\u001bb"); // "a\\u001bb"
 */
export function printablePath(path: string): string {
  if (path.length <= PRINTABLE_PATH_MAX_CHARS && !needsEscape(path)) return path;
  let shown = "";
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    const pair = isHighSurrogate(c) && isLowSurrogate(path.charCodeAt(i + 1));
    const next = pair
      ? path.slice(i, i + 2)
      : isControlCharacter(c) || isLoneSurrogateAt(path, i)
        ? `\\u${c.toString(16).padStart(4, "0")}`
        : (path[i] as string);
    if (shown.length + next.length > PRINTABLE_PATH_MAX_CHARS) return `${shown}…`;
    shown += next;
    if (pair) i++;
  }
  return shown;
}
const PRINTABLE_PATH_MAX_CHARS = 300;

function needsEscape(path: string): boolean {
  for (let i = 0; i < path.length; i++) {
    if (isControlCharacter(path.charCodeAt(i)) || isLoneSurrogateAt(path, i)) return true;
  }
  return false;
}
const REPLACEMENT_CHARACTER = 0xfffd;

/** C0 controls, DEL and C1 controls: terminal escape sequences start with these. */
function isControlCharacter(c: number): boolean {
  return c <= 0x1f || (c >= 0x7f && c <= 0x9f);
}

/**
 * Orders paths by Unicode code point, which is the byte order of their UTF-8 form and so the
 * order git lists them in. (Plain `<` compares UTF-16 code units and puts characters beyond
 * U+FFFF before U+E000–U+FFFF.)
 *
 * @example
 * ["b", "a/b", "a"].sort(comparePaths); // ["a", "a/b", "b"]
 */
export function comparePaths(a: string, b: string): number {
  const shared = Math.min(a.length, b.length);
  for (let i = 0; i < shared; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/**
 * True when the code unit at `i` is half of a surrogate pair without its other half: not a
 * character, and encoders replace it with U+FFFD, so two texts that differ only there would
 * encode (and hash) alike.
 */
export function isLoneSurrogateAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (isHighSurrogate(c)) return !isLowSurrogate(text.charCodeAt(i + 1));
  if (isLowSurrogate(c)) return !isHighSurrogate(text.charCodeAt(i - 1));
  return false;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function codePointRank(codeUnit: number): number {
  return codeUnit >= 0xd800 && codeUnit <= 0xdfff ? codeUnit + 0x10000 : codeUnit;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
