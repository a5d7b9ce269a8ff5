import { err, ok, type Result } from "../protocol/index.ts";

/**
 * Workspace paths as the model spells them. Repository files are addressed relative to the
 * repository root (`src/app.ts`) or under `/repo` (`/repo/src/app.ts`); the plan file lives at
 * `/plans/<slug>.md`, outside the repository tree. Parsing is strict on purpose: a path is
 * never decoded, resolved or case-folded, so there is exactly one spelling of each file and a
 * prompt-injected path cannot reach anything the permission check did not see.
 */

/** The virtual root the repository is mounted at. */
export const REPO_ROOT = "/repo";
/** The virtual folder the plan file lives in. */
export const PLANS_DIR = "/plans";

const MAX_PATH_CHARS = 1_024;

/**
 * C0/C1 controls (NUL included), zero-width, bidirectional-override and the other characters
 * HFS+ ignores in names (so `.g\u200cit` would be `.git` on a Mac).
 */
const INVISIBLE_OR_CONTROL: readonly (readonly [number, number])[] = [
  [0x0000, 0x001f],
  [0x007f, 0x009f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0xfeff, 0xfeff],
];

function hasInvisibleOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (INVISIBLE_OR_CONTROL.some(([from, to]) => code >= from && code <= to)) return true;
  }
  return false;
}

/** A path relative to the repository root, without a leading slash ("" is the root), or why not. */
export type RepoPath = Result<string, string>;

/**
 * Parses a repository path the model wrote into the canonical relative form.
 *
 * Accepts `src/a.ts`, `./src/a.ts` and `/repo/src/a.ts`. Refuses `..` and `.` segments, empty
 * segments (`a//b`), backslashes, control and invisible characters, surrounding whitespace and
 * any other absolute path. A trailing slash is accepted only when `dir` is set.
 *
 * @example
 * parseRepoPath("/repo/src/app.ts")  // { ok: true, value: "src/app.ts" }
 * parseRepoPath("src/../.env")       // err("…'..'…")
 * parseRepoPath("/repo", { dir: true }) // { ok: true, value: "" }
 */
export function parseRepoPath(raw: string, opts: { dir?: boolean } = {}): RepoPath {
  const problem = spellingProblem(raw);
  if (problem) return err(problem);

  let rest = raw;
  if (rest === REPO_ROOT || rest === `${REPO_ROOT}/`) rest = "";
  else if (rest.startsWith(`${REPO_ROOT}/`)) rest = rest.slice(REPO_ROOT.length + 1);
  else if (rest.startsWith("/")) {
    return err(
      `"${raw}" is outside the repository: use a path relative to the repository root or under ${REPO_ROOT}/.`,
    );
  } else if (rest === "." || rest === "./") rest = "";
  else if (rest.startsWith("./")) rest = rest.slice(2);

  if (rest.endsWith("/")) {
    if (!opts.dir) return err(`"${raw}" names a folder, not a file.`);
    rest = rest.slice(0, -1);
  }
  if (rest === "") {
    return opts.dir ? ok("") : err(`"${raw}" is the repository root, not a file.`);
  }
  for (const segment of rest.split("/")) {
    if (segment === "") return err(`"${raw}" contains an empty path segment.`);
    if (segment === "..") return err(`"${raw}" contains '..': paths may not leave their folder.`);
    if (segment === ".") return err(`"${raw}" contains a '.' segment.`);
  }
  return ok(rest);
}

/** Why a path spelling is refused before any segment is looked at, or null when it is fine. */
function spellingProblem(raw: string): string | null {
  if (raw.length === 0) return "The path is empty.";
  if (raw.length > MAX_PATH_CHARS) return `The path is longer than ${MAX_PATH_CHARS} characters.`;
  if (hasInvisibleOrControl(raw)) return "The path contains control or invisible characters.";
  if (raw.includes("\\")) return "The path contains a backslash: use forward slashes.";
  if (raw.trim() !== raw) return "The path starts or ends with whitespace.";
  return null;
}

/**
 * `src/app.ts` → `/repo/src/app.ts`, the spelling tool results use.
 *
 * @example
 * displayRepoPath("src/app.ts") // "/repo/src/app.ts"
 */
export function displayRepoPath(path: string): string {
  return path === "" ? REPO_ROOT : `${REPO_ROOT}/${path}`;
}
