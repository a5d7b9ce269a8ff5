import { rm, writeFile } from "node:fs/promises";
import { GIT_CONFIG_FILE, GIT_DIR, STATE_DIR, WORKSPACE_DIR } from "./layout.ts";
import { succeed } from "./spawn.ts";

/**
 * The workspace's git view: a repository whose git directory lives OUTSIDE the workspace
 * (commands see no `.git` and cannot touch it), with a private index that tracks every file
 * the workspace was given, so `git add -A` + `git write-tree` name the tree as it is now while
 * honouring the repository's `.gitignore` for files commands create (node_modules, dist).
 * Configuration comes only from the file written here: nothing the workspace holds can
 * configure git (no hooks, filters or fsmonitor run).
 */

const INDEX_FILE = `${GIT_DIR}/planport-index`;

function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: STATE_DIR,
    GIT_DIR,
    GIT_WORK_TREE: WORKSPACE_DIR,
    GIT_INDEX_FILE: INDEX_FILE,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: GIT_CONFIG_FILE,
    GIT_LITERAL_PATHSPECS: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
  };
}

function git(args: string[], input?: Buffer): Promise<Buffer> {
  return succeed("git", args, { env: gitEnv(), cwd: WORKSPACE_DIR, input });
}

const NEUTRAL_CONFIG = `[safe]
\tdirectory = *
[core]
\tautocrlf = false
\tfsmonitor = false
\tuntrackedCache = false
\thooksPath = /dev/null
\texcludesFile = /dev/null
\tquotePath = false
[user]
\tname = planport
\temail = planport@localhost
`;

/**
 * A fresh baseline: every file now in the workspace is tracked, ignored or not (they are the
 * session's files).
 */
export async function recordBaseline(): Promise<void> {
  await rm(GIT_DIR, { recursive: true, force: true });
  await writeFile(GIT_CONFIG_FILE, NEUTRAL_CONFIG, { mode: 0o600 });
  await git(["init", "--quiet"]);
  await git(["add", "-A", "-f"]);
}

/** Tracks these paths even where `.gitignore` would ignore them (the overlay's own files). */
export async function trackFiles(paths: string[]): Promise<void> {
  if (paths.length === 0) return;
  const list = Buffer.from(`${paths.join("\0")}\0`);
  await git(["add", "-A", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"], list);
}

/** The tree the workspace holds now, as git's tree id. */
export async function snapshotTree(): Promise<string> {
  await git(["add", "-A"]);
  return (await git(["write-tree"])).toString("utf8").trim();
}

/** `git diff-tree -r -z --raw --no-renames` between two trees. */
export async function diffTrees(before: string, after: string): Promise<string> {
  if (before === after) return "";
  return (
    await git(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", before, after])
  ).toString("utf8");
}

/** Whether a baseline exists (a workspace was given). */
export async function hasBaseline(): Promise<boolean> {
  try {
    await git(["rev-parse", "--git-dir"]);
    return true;
  } catch {
    return false;
  }
}
