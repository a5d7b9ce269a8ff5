import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { UsageError } from "./errors.ts";

/**
 * `planport pull --apply`: applies the diff of a remote execution to the local checkout with
 * `git apply --3way`, and refuses to touch files that have uncommitted work.
 */

/**
 * Paths a unified diff touches (both sides of renames), from its `diff --git a/… b/…` lines
 * and `---`/`+++` headers.
 *
 * @example
 * diffPaths("diff --git a/src/x.ts b/src/x.ts\n--- a/src/x.ts\n+++ b/src/x.ts\n…") // → ["src/x.ts"]
 */
export function diffPaths(diff: string): string[] {
  const paths = new Set<string>();
  for (const line of diff.split("\n")) {
    const header = /^(?:---|\+\+\+) (?:a|b)\/(.+?)\t?$/.exec(line);
    if (header?.[1]) paths.add(header[1]);
    const git = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (git?.[1] && git[2]) {
      paths.add(git[1]);
      paths.add(git[2]);
    }
  }
  return [...paths].sort();
}

function git(repo: string, args: string[], input?: string) {
  return spawnSync("git", args, { cwd: repo, encoding: "utf8", input });
}

/**
 * Files among `paths` with uncommitted changes (modified, staged, or untracked and in the way).
 * Throws a {@link UsageError} when `repo` is not a git work tree.
 */
export function dirtyPaths(repo: string, paths: readonly string[]): string[] {
  const inside = git(repo, ["rev-parse", "--is-inside-work-tree"]);
  if (inside.status !== 0 || inside.stdout.trim() !== "true") {
    throw new UsageError(
      `${repo} is not a git work tree; --apply needs git (or save the diff: planport pull <id> > changes.diff)`,
    );
  }
  if (paths.length === 0) return [];
  const status = git(repo, [
    "status",
    "--porcelain",
    "-z",
    "--untracked-files=all",
    "--",
    ...paths,
  ]);
  if (status.status !== 0) throw new Error(`git status failed: ${status.stderr.trim()}`);
  return status.stdout
    .split("\0")
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
}

/**
 * Applies `diff` in `repo` with `git apply --3way`, after checking that no file it touches has
 * uncommitted work (a 3-way merge into a dirty file could mix the user's edits with the
 * remote's with no clean way back).
 *
 * @example
 * const { ok, output } = await applyChanges("/src/app", diff);
 */
export async function applyChanges(
  repo: string,
  diff: string,
): Promise<{ ok: boolean; output: string }> {
  const paths = diffPaths(diff);
  const dirty = dirtyPaths(repo, paths);
  if (dirty.length > 0) {
    throw new UsageError(
      `refusing to apply: these files have uncommitted changes the diff would touch:\n  ${dirty.join("\n  ")}\n` +
        "Commit or stash them first, then run the command again.",
    );
  }
  const child = spawn("git", ["apply", "--3way", "--whitespace=nowarn", "-"], {
    cwd: repo,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stdin.end(diff);
  const [code] = (await once(child, "exit")) as [number | null];
  const ok = code === 0;
  // When the blob a diff names is not in the local repository (the snapshot held uncommitted
  // work) git says it "lacks the necessary blob" and applies directly; after a success that is
  // noise, not an error worth showing.
  const shown = ok
    ? output
        .split("\n")
        .filter((l) => !/lacks the necessary blob|Falling back to direct application/.test(l))
        .join("\n")
    : output;
  return { ok, output: shown.trim() };
}
