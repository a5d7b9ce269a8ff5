/**
 * The file names remote execution never writes and `pull --apply` never applies: one rule,
 * used by the worker's permission check (a write to such a name is denied) and by the local
 * client (a diff that touches one is refused before git sees it). Each is a name the tools that
 * later handle the diff on the user's machine read as something else. Pure; imports nothing.
 */

/** Longest file or folder name most file systems accept, in UTF-8 bytes. */
export const MAX_NAME_SEGMENT_BYTES = 255;

/**
 * Controls, format characters (bidi overrides, zero-width characters…) and the other characters
 * HFS+ ignores in names, so `.g\u200cit` would open `.git` on a Mac.
 */
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\u2060-\u206f]/u;

/**
 * Why a repository-relative path must never be written or applied, as a short phrase (it ends
 * a sentence such as "refused: …"), or null when it may be.
 *
 * @example
 * unsafeRepoName("src/app.ts")     // null
 * unsafeRepoName(":!src/app.ts")   // "it starts with \":\", which git reads as pathspec magic …"
 * unsafeRepoName(".GIT/config")    // "it is inside .git, the repository's own machinery"
 */
export function unsafeRepoName(path: string): string | null {
  if (path === "") return "it is empty";
  if (INVISIBLE_OR_CONTROL.test(path)) return "it contains control or invisible characters";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "it is an absolute path";
  if (path.includes("\\")) return "it contains a backslash";
  if (path.startsWith(":")) {
    return 'it starts with ":", which git reads as pathspec magic (":!a.ts" means "every file but a.ts")';
  }
  if (path.startsWith("-")) return 'it starts with "-", which command-line tools read as an option';
  const encoder = new TextEncoder();
  for (const segment of path.split("/")) {
    if (segment === "" || segment === "." || segment === "..") {
      return "it has an empty, '.' or '..' segment";
    }
    if (isGitFolderName(segment)) return "it is inside .git, the repository's own machinery";
    if (/[. ]$/.test(segment)) {
      return 'it has a name ending in "." or a space, which Windows drops (so it would overwrite another file there)';
    }
    if (encoder.encode(segment).byteLength > MAX_NAME_SEGMENT_BYTES) {
      return `it has a name longer than ${MAX_NAME_SEGMENT_BYTES} bytes, which file systems do not accept`;
    }
  }
  return null;
}

/**
 * True for a repository path inside the `.git` folder, however a case-insensitive or Windows
 * file system would spell it: `.GIT`, `.git.`, `.git `, `.git::$INDEX_ALLOCATION` and the 8.3
 * short names `GIT~1`, `GIT~2`… all open the same folder there.
 *
 * @example
 * isGitInternal("sub/.git/config") // true
 * isGitInternal(".gitignore") // false
 */
export function isGitInternal(path: string): boolean {
  return path.split("/").some(isGitFolderName);
}

function isGitFolderName(segment: string): boolean {
  const lower = segment.toLowerCase();
  // NTFS reads "name:stream" as the file "name" and drops trailing dots and spaces.
  const base = (lower.split(":")[0] ?? "").replace(/[. ]+$/, "");
  return base === ".git" || /^git~\d+$/.test(base);
}
