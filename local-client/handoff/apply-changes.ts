import { unsafeRepoName } from "../../src/protocol/index.ts";
import { UsageError } from "../errors.ts";
import { runGit, runGitSync } from "../git/run.ts";
import { type ApplyCheckReport, parseApplyCheck } from "./apply-check.ts";
import { diffPaths, refusedModes } from "./diff-names.ts";

/**
 * `planport pull --apply`: applies the diff of a remote execution to the local checkout with
 * `git apply --3way`. The diff was written by a remote session (a model, perhaps a
 * prompt-injected one), so before anything is applied: every name it touches must be one that
 * may be written here (never inside `.git`, never outside the checkout, never a pathspec, a
 * symbolic link or a submodule), and none may have uncommitted work. `pull --check` runs the
 * same checks and `git apply --check --3way`, writing nothing; `--branch` applies on a new
 * branch.
 */

/**
 * Why nothing was applied, thrown before anything is written. `names` are the refused names
 * (`unsafe_names`) or the files with uncommitted work (`dirty_files`). A usage error (exit 2);
 * the CLI adds what to do next.
 */
export class ApplyRefusedError extends UsageError {
  constructor(
    readonly reason:
      | "unreadable_diff"
      | "not_a_work_tree"
      | "unsafe_names"
      | "dirty_files"
      | "invalid_branch"
      | "branch_exists",
    message: string,
    readonly names: readonly string[] = [],
  ) {
    super(message);
    this.name = "ApplyRefusedError";
  }
}

/**
 * git in the user's repository through the one runner (git/run.ts): literal pathspecs, and no
 * command the repository's configuration names (merge drivers, hooks, filters) ever runs.
 */
function git(repo: string, args: string[], input?: string, env?: Record<string, string>) {
  const outcome = runGitSync(repo, args, { input, env });
  return {
    status: outcome.status,
    stdout: outcome.stdout.toString("utf8"),
    stderr: outcome.stderr,
  };
}

/**
 * The paths `git apply` itself reads in `diff` (`--numstat -z`: raw names, renames as both
 * sides): what it would write, whatever {@link diffPaths} makes of the text.
 */
function gitPatchPaths(repo: string, diff: string): string[] {
  const result = git(repo, ["apply", "--numstat", "-z", "-"], diff);
  if (result.status !== 0) {
    throw new ApplyRefusedError(
      "unreadable_diff",
      `refusing to apply: git cannot read the diff (${result.stderr.trim() || `exit ${result.status}`})`,
    );
  }
  const paths: string[] = [];
  const fields = result.stdout.split("\0");
  for (let i = 0; i < fields.length; i += 1) {
    const entry = /^(?:\d+|-)\t(?:\d+|-)\t([\s\S]*)$/.exec(fields[i] ?? "");
    if (!entry) continue;
    if (entry[1] !== "") {
      paths.push(entry[1] ?? "");
      continue;
    }
    // A rename or copy: the old and the new name follow as fields of their own.
    paths.push(fields[i + 1] ?? "", fields[i + 2] ?? "");
    i += 2;
  }
  return paths;
}

/**
 * Files among `paths` with uncommitted changes (modified, staged, or untracked and in the way).
 * Throws an {@link ApplyRefusedError} when `repo` is not a git work tree.
 */
export function dirtyPaths(repo: string, paths: readonly string[]): string[] {
  assertWorkTree(repo);
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
  const dirty: string[] = [];
  const fields = status.stdout.split("\0");
  for (let i = 0; i < fields.length; i += 1) {
    const entry = fields[i] ?? "";
    if (entry.length <= 3) continue;
    dirty.push(entry.slice(3));
    // A staged rename or copy names its source in the next field, without a status.
    if (entry[0] === "R" || entry[0] === "C") {
      dirty.push(fields[i + 1] ?? "");
      i += 1;
    }
  }
  return dirty;
}

function assertWorkTree(repo: string): void {
  const inside = git(repo, ["rev-parse", "--is-inside-work-tree"]);
  if (inside.status !== 0 || inside.stdout.trim() !== "true") {
    throw new ApplyRefusedError("not_a_work_tree", `${repo} is not a git work tree`);
  }
}

/**
 * Every name `diff` touches (as we read the diff and as git does), sorted; an
 * {@link ApplyRefusedError} when one of them may not be written here.
 */
function touchedPaths(repo: string, diff: string): string[] {
  assertWorkTree(repo);
  const paths = [...new Set([...diffPaths(diff), ...gitPatchPaths(repo, diff)])].sort();
  const refused = paths.flatMap((path) => {
    const reason = unsafeRepoName(path);
    // JSON quoting shows invisible characters instead of printing them.
    return reason === null ? [] : [`${JSON.stringify(path)}: ${reason}`];
  });
  for (const mode of refusedModes(diff)) {
    refused.push(`file mode ${mode}: ${mode === "120000" ? "a symbolic link" : "a submodule"}`);
  }
  if (refused.length > 0) {
    throw new ApplyRefusedError(
      "unsafe_names",
      `refusing to apply: the diff touches names that are never written here:\n  ${refused.join("\n  ")}\n` +
        "Nothing was applied.",
      refused,
    );
  }
  return paths;
}

/** What `pull --check` found: the names touched, those with uncommitted work, git's verdict. */
export interface ChangeCheck extends ApplyCheckReport {
  /** Every file the diff touches. */
  paths: string[];
  /** Touched files with uncommitted work (`--apply` refuses to touch them). */
  dirty: string[];
  /** Nothing in the way: `pull --apply` would apply every file without conflicts. */
  appliesCleanly: boolean;
}

/**
 * The dry run of {@link applyChanges}: the same refusals (unsafe names, not a work tree), then
 * which touched files have uncommitted work and what `git apply --check --3way` says it would
 * do. Writes nothing: not the work tree, not the index.
 *
 * @example
 * const check = checkChanges(repo, diff);
 * if (!check.appliesCleanly) console.log(check.conflicts, check.dirty);
 */
export function checkChanges(repo: string, diff: string): ChangeCheck {
  const paths = touchedPaths(repo, diff);
  const dirty = dirtyPaths(repo, paths);
  // git's own English messages, whatever the user's locale: they are parsed.
  const result = git(repo, ["apply", "--check", "--3way", "--whitespace=nowarn", "-"], diff, {
    LC_ALL: "C",
    LANGUAGE: "C",
  });
  const report = parseApplyCheck(`${result.stdout}\n${result.stderr}`);
  // A dirty file is listed as such; git's "does not match index" about it says the same.
  const dirtySet = new Set(dirty);
  report.unappliable = report.unappliable.filter((u) => !dirtySet.has(u.path));
  if (result.status !== 0 && report.unappliable.length === 0 && report.problems.length === 0) {
    if (dirty.length === 0) report.problems.push(`git apply --check exited ${result.status}`);
  }
  const appliesCleanly =
    result.status === 0 &&
    dirty.length === 0 &&
    report.conflicts.length === 0 &&
    report.unappliable.length === 0 &&
    report.problems.length === 0;
  return { ...report, paths, dirty, appliesCleanly };
}

/**
 * Refuses a `--branch` name git would not take as a new branch (`git check-ref-format
 * --branch`: no spaces, `..`, a leading `-`, `@{…}`…) or one that exists already (an existing
 * branch is the user's work: applying there is what `--apply` without `--branch` does).
 *
 * @example
 * assertNewBranch(repo, "planport/oauth"); // throws ApplyRefusedError "branch_exists" if it exists
 */
export function assertNewBranch(repo: string, name: string): void {
  assertWorkTree(repo);
  const shown = JSON.stringify(name);
  const checked = git(repo, ["check-ref-format", "--branch", name]);
  // `@{-1}` and friends are expanded to another branch's name: only a literal name is taken.
  if (checked.status !== 0 || checked.stdout.trim() !== name || name === "@") {
    throw new ApplyRefusedError(
      "invalid_branch",
      `--branch ${shown} is not a valid branch name (git check-ref-format --branch refuses it)`,
      [name],
    );
  }
  const exists = git(repo, ["show-ref", "--verify", "--quiet", `refs/heads/${name}`]);
  if (exists.status === 0) {
    throw new ApplyRefusedError(
      "branch_exists",
      `--branch ${shown}: that branch exists already; name a new one, or leave out --branch to apply on the current branch`,
      [name],
    );
  }
}

/**
 * Applies `diff` in `repo` with `git apply --3way`, after checking every name it touches (as we
 * read the diff and as git does) may be written here and has no uncommitted work (a 3-way merge
 * into a dirty file could mix the user's edits with the remote's with no clean way back). With
 * `branch`, a new branch of that name is created from HEAD and checked out first (uncommitted
 * work elsewhere comes along, as `git checkout -b` does).
 * Refusals are {@link ApplyRefusedError}s, thrown before anything is written; `ok: false` is git's
 * own failure to merge, with its `output`.
 */
export async function applyChanges(
  repo: string,
  diff: string,
  opts: { branch?: string } = {},
): Promise<{ ok: boolean; output: string }> {
  const paths = touchedPaths(repo, diff);
  const dirty = dirtyPaths(repo, paths);
  if (dirty.length > 0) {
    throw new ApplyRefusedError(
      "dirty_files",
      `refusing to apply: these files have uncommitted changes the diff would touch:\n  ${dirty.join("\n  ")}`,
      dirty,
    );
  }
  if (opts.branch !== undefined) {
    assertNewBranch(repo, opts.branch);
    const created = git(repo, ["checkout", "-q", "-b", opts.branch]);
    if (created.status !== 0) {
      return {
        ok: false,
        output: created.stderr.trim() || `git checkout -b exited ${created.status}`,
      };
    }
  }
  const applied = await runGit(repo, ["apply", "--3way", "--whitespace=nowarn", "-"], {
    input: diff,
  });
  const output = `${applied.stdout.toString("utf8")}${applied.stderr}`;
  const ok = applied.status === 0;
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
