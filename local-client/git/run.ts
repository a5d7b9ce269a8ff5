import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { UsageError } from "../errors.ts";
import { type ConfigEntry, cameWithRepository, parseConfigListing } from "./config-listing.ts";
import { ALWAYS_SET, type ConfigOverride, neutralisingOverrides } from "./neutralise.ts";
import { ownsWorkTree } from "./work-tree.ts";

/**
 * The one way the client runs git on a user's repository. A repository may come with its `.git/`
 * from someone else (a tarball, a zip, a shared drive), and git executes commands its
 * configuration names: the fsmonitor hook on every index read, clean filters when it hashes a
 * file, merge drivers in `git apply --3way`, hooks on `checkout`. Before each run the runner
 * reads the configuration git would read, as data, and sets on git's command line what makes
 * every such command inert (neutralise.ts); git's own subcommands only, with the flags that keep
 * them from submodules and external diff programs; no transport, no prompt, no pager.
 * The configuration is read again for every run: a branch switch can bring in an
 * `includeIf "onbranch:…"` file, and nothing cached can go stale.
 */

/** What a git run answered. `status` is null when git was killed by a signal. */
export interface GitOutcome {
  status: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface GitRunOptions {
  /** Written to git's stdin. */
  input?: string;
  /** More environment (e.g. `LC_ALL: "C"` where git's messages are parsed). */
  env?: Record<string, string>;
}

/** No git on PATH: the caller decides what that means (a snapshot walks the folder instead). */
export class GitNotFoundError extends Error {
  constructor() {
    super("git was not found on PATH");
    this.name = "GitNotFoundError";
  }
}

/**
 * The repository's configuration sets a key that may name a command and that planport does not
 * know how to make inert (a newer git's, perhaps), or names a work tree elsewhere: git is not
 * run at all.
 */
export class RepositoryConfigError extends UsageError {
  constructor(
    readonly repo: string,
    readonly keys: readonly { key: string; origin: string }[],
    /** `command`: a key that may run one; `worktree`: core.worktree names a folder elsewhere. */
    readonly reason: "command" | "worktree" = "command",
  ) {
    const listed = keys.map((k) => `${k.key} (${k.origin.replace(/^file:/, "")})`).join(", ");
    const what =
      reason === "worktree"
        ? "which points git at a folder that is not this repository's work tree"
        : "which may run a command, and planport does not know how to keep git from running it";
    super(
      `The repository at ${repo} configures ${listed}, ${what}. ` +
        "Remove it from the repository's git configuration, or use a fresh clone, and try again.",
    );
    this.name = "RepositoryConfigError";
  }
}

/**
 * git's subcommands the client uses, each with the flags that keep it from what the overrides
 * cannot reach: a submodule's own configuration, external diff programs and textconv.
 */
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  "rev-parse": [],
  "ls-files": [],
  "diff-files": ["--ignore-submodules=all", "--no-ext-diff", "--no-textconv"],
  status: ["--ignore-submodules=all"],
  "check-attr": [],
  apply: [],
  "check-ref-format": [],
  "show-ref": [],
  checkout: ["--no-recurse-submodules"],
};

/** `git ls-files` output can be large on big trees (20,000 paths ≈ 1 MB); allow plenty. */
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/**
 * Runs `git <args>` in `cwd` with the repository's commands made inert. Throws
 * {@link GitNotFoundError} without git, {@link RepositoryConfigError} when the configuration
 * cannot be made safe; git's own failures are in the outcome.
 *
 * @example
 * const { status, stdout } = await runGit(repo, ["ls-files", "-z"]);
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  options: GitRunOptions = {},
): Promise<GitOutcome> {
  const overrides = overridesFor(cwd, await readGitConfig(cwd));
  return spawnGit(cwd, command(args), environment(overrides, options), options.input);
}

/**
 * {@link runGit}, synchronously.
 *
 * @example
 * const inside = runGitSync(repo, ["rev-parse", "--is-inside-work-tree"]);
 */
export function runGitSync(
  cwd: string,
  args: readonly string[],
  options: GitRunOptions = {},
): GitOutcome {
  const listing = outcomeOf(spawnSync("git", CONFIG_LISTING, syncOptions(cwd, environment([]))));
  const overrides = overridesFor(cwd, configEntries(cwd, listing));
  return outcomeOf(
    spawnSync(
      "git",
      command(args),
      syncOptions(cwd, environment(overrides, options), options.input),
    ),
  );
}

/** Reads, never executes: every scope, includes followed, with where each entry came from. */
const CONFIG_LISTING = [
  "--no-pager",
  "config",
  "--list",
  "--null",
  "--show-scope",
  "--show-origin",
];

/**
 * The configuration git would read in `cwd`, as data (nothing in it runs).
 *
 * @example
 * (await readGitConfig(repo)).some((e) => e.key.startsWith("filter.")) // a filter is configured
 */
export async function readGitConfig(cwd: string): Promise<ConfigEntry[]> {
  return configEntries(cwd, await spawnGit(cwd, CONFIG_LISTING, environment([])));
}

function configEntries(cwd: string, listing: GitOutcome): ConfigEntry[] {
  if (listing.status !== 0) {
    throw new UsageError(
      `git cannot read the configuration of the repository at ${cwd}: ${listing.stderr.trim() || `exit ${listing.status}`}`,
    );
  }
  return parseConfigListing(listing.stdout.toString("utf8"));
}

function overridesFor(cwd: string, entries: readonly ConfigEntry[]): ConfigOverride[] {
  const decided = neutralisingOverrides(entries);
  if (!decided.ok) throw new RepositoryConfigError(cwd, decided.error);
  const worktree = entries.findLast((e) => e.key === "core.worktree" && cameWithRepository(e));
  if (worktree !== undefined) assertOwnWorkTree(cwd, worktree);
  return decided.value;
}

/**
 * The repository names its work tree itself (`core.worktree`): git would read and write there.
 * That is allowed only where the folder's `.git` leads back to this repository (a submodule's
 * absorbed git directory sets it so); anywhere else git is not run at all.
 */
function assertOwnWorkTree(cwd: string, entry: ConfigEntry): void {
  const answer = outcomeOf(
    spawnSync(
      "git",
      ["--no-pager", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
      syncOptions(cwd, environment(ALWAYS_SET)),
    ),
  );
  const [top, gitDir] = answer.stdout.toString("utf8").split("\n");
  if (answer.status !== 0 || !top || !gitDir || !ownsWorkTree(top, gitDir)) {
    throw new RepositoryConfigError(cwd, [{ key: entry.key, origin: entry.origin }], "worktree");
  }
}

function command(args: readonly string[]): string[] {
  const [subcommand, ...rest] = args;
  const flags = subcommand === undefined ? undefined : SUBCOMMANDS[subcommand];
  if (subcommand === undefined || flags === undefined) {
    throw new Error(`the git runner does not run "git ${subcommand ?? ""}"`);
  }
  // Paths are literal names, never pathspec magic (`:!x` excludes x).
  return ["--no-pager", "--literal-pathspecs", subcommand, ...flags, ...rest];
}

/**
 * The user's environment, with command-line configuration appended to any they set (theirs is
 * theirs to set; ours comes later and wins), and nothing that could start a transport, prompt,
 * page or take a lock the user's own git might be waiting for.
 */
function environment(overrides: readonly ConfigOverride[], options: GitRunOptions = {}) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    GIT_PAGER: "cat",
    GIT_EDITOR: ":",
    GIT_SEQUENCE_EDITOR: ":",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_LITERAL_PATHSPECS: "1",
    // An empty list allows no transport: no fetch of a missing object, no ssh, no helper.
    GIT_ALLOW_PROTOCOL: "",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_NO_LAZY_FETCH: "1",
    ...options.env,
  };
  const given = Number.parseInt(env.GIT_CONFIG_COUNT ?? "0", 10);
  const start = Number.isSafeInteger(given) && given > 0 ? given : 0;
  overrides.forEach(({ key, value }, i) => {
    env[`GIT_CONFIG_KEY_${start + i}`] = key;
    env[`GIT_CONFIG_VALUE_${start + i}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(start + overrides.length);
  return env;
}

function syncOptions(cwd: string, env: NodeJS.ProcessEnv, input?: string) {
  return { cwd, env, input, maxBuffer: MAX_OUTPUT_BYTES };
}

function outcomeOf(result: SpawnSyncReturns<Buffer>): GitOutcome {
  if (result.error !== undefined) {
    if ((result.error as NodeJS.ErrnoException).code === "ENOENT") throw new GitNotFoundError();
    throw result.error;
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr.toString("utf8") };
}

function spawnGit(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  input?: string,
): Promise<GitOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const errors: Buffer[] = [];
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes > MAX_OUTPUT_BYTES) child.kill();
      else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => errors.push(chunk));
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(error.code === "ENOENT" ? new GitNotFoundError() : error),
    );
    child.on("close", (status) => {
      if (bytes > MAX_OUTPUT_BYTES) {
        reject(new Error(`git ${args.join(" ")} wrote more than ${MAX_OUTPUT_BYTES} bytes`));
        return;
      }
      resolve({
        status,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(errors).toString("utf8"),
      });
    });
    // git may exit before reading all of its input (a refusal): that is its answer, not ours.
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
  });
}
