import { pathNameProblem, printablePath, type SkippedEntry } from "../../src/protocol/index.ts";
import { GitNotFoundError, type GitOutcome, readGitConfig, runGit } from "../git/run.ts";
import { SnapshotError } from "./error.ts";
import { walkFolder } from "./walk.ts";

/**
 * Which paths a snapshot considers: the working tree as git sees it, or, outside git, the
 * folder with its `.gitignore` rules. Paths only; reading and filtering happen later.
 */

/** A path to look at: POSIX, relative to the snapshot root. */
export interface TreeListing {
  /** `git` when the root is inside a work tree, `folder` otherwise. */
  source: "git" | "folder";
  paths: string[];
  /** Names that cannot be stored (not UTF-8, control characters, too long). */
  skipped: SkippedEntry[];
  /**
   * Blob ids git already knows for tracked regular files that are unchanged since git last
   * looked (absent from `git diff-files`, one stage): their content need not be read or hashed
   * (docs/DESIGN.md "Incremental snapshots"). Empty outside git.
   */
  indexed: Map<string, string>;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/**
 * Lists the candidate paths under `root`: in a git work tree, tracked files plus untracked
 * files that are not ignored (`git ls-files -z --cached --others --exclude-standard`, so
 * `.gitignore`, `.git/info/exclude` and the global excludes all apply); elsewhere, a walk
 * that honours every `.gitignore` below `root`.
 *
 * @example
 * const { source, paths } = await listTree("/home/me/project"); // "git", ["README.md", …]
 */
export async function listTree(root: string): Promise<TreeListing> {
  if (!(await insideGitWorkTree(root))) {
    return { source: "folder", ...(await walkFolder(root)), indexed: new Map() };
  }
  const [output, indexed] = await Promise.all([
    git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]),
    unchangedBlobIds(root),
  ]);
  const paths = new Set<string>();
  const skipped: SkippedEntry[] = [];
  let start = 0;
  while (start < output.byteLength) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.byteLength;
    const raw = output.subarray(start, end);
    start = end + 1;
    if (raw.byteLength === 0) continue;
    let path: string;
    try {
      path = strictUtf8.decode(raw);
    } catch {
      skipped.push({ path: printablePath(lenientUtf8.decode(raw)), reason: "invalid_name" });
      continue;
    }
    // An untracked nested repository is listed once, as its folder with a trailing slash.
    if (path.endsWith("/")) {
      skipped.push({ path: path.slice(0, -1), reason: "submodule" });
      continue;
    }
    const problem = pathNameProblem(path);
    if (problem !== null) {
      skipped.push({ path: printablePath(path), reason: problem });
      continue;
    }
    // Unmerged paths are listed once per conflict stage.
    paths.add(path);
  }
  return { source: "git", paths: [...paths], skipped, indexed };
}

/**
 * path → blob id for tracked regular files (mode 100644/100755, stage 0) that `git diff-files`
 * does not report as changed. git compares stat data, and the content of a file whose stat data
 * cannot be trusted (the "racy git" case), so an id here is the id of the file as it is. Only
 * the answers of git itself are used; a path git lists oddly is simply not in the map (its file
 * is read and hashed instead).
 */
async function unchangedBlobIds(root: string): Promise<Map<string, string>> {
  const [stage, changed] = await Promise.all([
    git(root, ["ls-files", "-z", "--stage"]),
    git(root, ["diff-files", "-z", "--name-only", "--relative"]),
  ]);
  const dirty = new Set<string>();
  for (const raw of splitNul(changed)) dirty.add(lenientUtf8.decode(raw));
  const ids = new Map<string, string>();
  const seen = new Set<string>();
  for (const raw of splitNul(stage)) {
    const line = lenientUtf8.decode(raw);
    const tab = line.indexOf("\t");
    const match = /^(100644|100755) ([0-9a-f]{40}) ([0-3])$/.exec(line.slice(0, tab));
    const path = line.slice(tab + 1);
    if (tab === -1) continue;
    if (seen.has(path)) {
      ids.delete(path); // unmerged: several stages
      continue;
    }
    seen.add(path);
    if (match === null || match[3] !== "0" || dirty.has(path)) continue;
    ids.set(path, match[2] as string);
  }
  for (const path of await filteredPaths(root, [...ids.keys()])) ids.delete(path);
  return ids;
}

/**
 * Paths among `paths` whose `filter` attribute names a driver. Their index id is that of what a
 * clean filter made of the file, and planport never runs the repository's filters (git/run.ts):
 * the snapshot holds such a file as it is on disk, what the user sees and a diff applies to, so
 * it is read and hashed like a changed file. Asked only when some filter driver is configured.
 */
async function filteredPaths(root: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const config = await readGitConfig(root);
  if (!config.some((entry) => entry.key.toLowerCase().startsWith("filter."))) return [];
  const answer = await git(root, ["check-attr", "-z", "--stdin", "filter"], paths.join("\0"));
  // `path NUL attribute NUL value NUL` per path.
  const fields = lenientUtf8.decode(answer).split("\0");
  const filtered: string[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const value = fields[i + 2] as string;
    if (value !== "unspecified" && value !== "unset" && value !== "set") {
      filtered.push(fields[i] as string);
    }
  }
  return filtered;
}

function splitNul(output: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  while (start < output.byteLength) {
    let end = output.indexOf(0, start);
    if (end === -1) end = output.byteLength;
    if (end > start) parts.push(output.subarray(start, end));
    start = end + 1;
  }
  return parts;
}

/** True inside a git work tree; false when git is missing or the folder is not in a repository. */
async function insideGitWorkTree(root: string): Promise<boolean> {
  try {
    const answer = await git(root, ["rev-parse", "--is-inside-work-tree"]);
    return lenientUtf8.decode(answer).trim() === "true";
  } catch (error) {
    if (error instanceof GitUnavailable) return false;
    throw error;
  }
}

class GitUnavailable extends Error {}

async function git(cwd: string, args: string[], input?: string): Promise<Buffer> {
  let outcome: GitOutcome;
  try {
    // git's English messages, whatever the user's locale: "not a git repository" is matched.
    outcome = await runGit(cwd, args, { input, env: { LC_ALL: "C", LANGUAGE: "C" } });
  } catch (error) {
    if (error instanceof GitNotFoundError) throw new GitUnavailable(error.message);
    throw error;
  }
  if (outcome.status === 0) return outcome.stdout;
  const message = outcome.stderr.trim();
  // Not a repository: snapshot the plain folder instead.
  if (/not a git repository/i.test(message)) throw new GitUnavailable(message);
  throw new SnapshotError(
    "git_failed",
    `git ${args[0]} failed in ${cwd}: ${message || `exit ${outcome.status}`}. Fix the repository (or run outside it) and try again.`,
  );
}
