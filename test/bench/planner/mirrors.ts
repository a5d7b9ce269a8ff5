import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * The folder of repositories the benchmark reads: `DIR/<owner>+<name>`, a bare mirror, a
 * clone, or a folder holding one as `repo/` (the layout the search tool's `fetch` leaves).
 * Only ever read (`git log`, `git show`, `git archive`); nothing is written into a mirror.
 */

const run = promisify(execFile);
/** `git log --name-status` of a long history is several megabytes. */
export const GIT_MAX_BUFFER_BYTES = 512 * 1024 * 1024;

/** `owner/name` → `owner+name`, the folder name a mirror is kept under. */
export function mirrorFolderName(repo: string): string {
  return repo.replace("/", "+");
}

/**
 * The git directory (or work tree) of `repo` under `dir`, or null when there is none.
 *
 * @example
 * findMirror("/work/.mirror", "tj/commander.js"); // "/work/.mirror/tj+commander.js/repo"
 */
export function findMirror(dir: string, repo: string): string | null {
  const base = join(dir, mirrorFolderName(repo));
  for (const candidate of [join(base, "repo"), base, `${base}.git`]) {
    if (existsSync(candidate) && isGitRepository(candidate)) return candidate;
  }
  return null;
}

function isGitRepository(path: string): boolean {
  try {
    execFileSync("git", ["-C", path, "rev-parse", "--git-dir"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds `repo` under `dir`, cloning it from GitHub first (a bare clone, full history) when it
 * is missing and `cloneFromNetwork` is set. Throws with the fix when it can be had neither way.
 */
export async function requireMirror(
  dir: string,
  repo: string,
  cloneFromNetwork: boolean,
): Promise<string> {
  const found = findMirror(dir, repo);
  if (found !== null) return found;
  if (!cloneFromNetwork) {
    throw new Error(
      `no mirror of ${repo} under ${dir} (looked for ${mirrorFolderName(repo)}[/repo]); clone it there or pass --clone-from-network`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const target = join(dir, mirrorFolderName(repo));
  await run("git", ["clone", "--bare", "--quiet", `https://github.com/${repo}.git`, target], {
    maxBuffer: GIT_MAX_BUFFER_BYTES,
  });
  return target;
}

/** Runs git against a repository and returns its standard output. */
export async function git(gitDir: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run("git", ["-C", gitDir, "-c", "core.quotePath=false", ...args], {
    maxBuffer: GIT_MAX_BUFFER_BYTES,
    encoding: "utf8",
  });
  return stdout;
}

/** True when `sha` is a commit the repository holds. */
export async function hasCommit(gitDir: string, sha: string): Promise<boolean> {
  try {
    await git(gitDir, ["cat-file", "-e", `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}
