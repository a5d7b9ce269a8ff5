import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { resolve } from "node:path";

/**
 * Whether `top` is the work tree of the git directory `gitDir`: its `.git` is that directory, or
 * a file naming it (`gitdir: …`, as a linked worktree or an absorbed submodule has). A
 * repository's own `core.worktree` can point git at any folder — a home directory, say — and
 * planport must then neither snapshot it nor apply changes there.
 *
 * @example
 * ownsWorkTree("/home/me/project", "/home/me/project/.git") // true
 * ownsWorkTree("/home/me", "/home/me/Downloads/project/.git") // false: core.worktree = /home/me
 */
export function ownsWorkTree(top: string, gitDir: string): boolean {
  const dotGit = resolve(top, ".git");
  try {
    const named = lstatSync(dotGit).isFile()
      ? resolve(top, /^gitdir: (.*)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim() ?? "")
      : dotGit;
    return realpathSync(named) === realpathSync(gitDir);
  } catch {
    return false;
  }
}
