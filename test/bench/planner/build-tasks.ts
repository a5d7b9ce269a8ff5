import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../../../local-client/embedded/worker-process.ts";
import { git, hasCommit, requireMirror } from "./mirrors.ts";
import { LEFT_OUT_BY_HAND, REPOSITORIES, type RepositoryChoice } from "./repositories.ts";
import {
  type AreaSource,
  areaHint,
  classifyPath,
  languageOf,
  taskFromSubject,
  taskPrompt,
} from "./task-rules.ts";

/**
 * Rebuilds tasks.json from repository mirrors: for each repository below, the commits of its
 * history up to the pinned head that pass the rules of task-rules.ts, a spread of `cap` of
 * them (a fixed sample), each with its parent, bare subject, area hint and gold files.
 *
 *   npx tsx test/bench/planner/build-tasks.ts --mirrors /work/.mirror
 *   npx tsx test/bench/planner/build-tasks.ts --mirrors DIR --clone-from-network --out tasks.json
 *
 * To extend the set, add a repository (and its head) to REPOSITORIES in repositories.ts; to
 * refresh one, move its head. The choice is a pure function of the history up to the head, so the same mirrors
 * give the same file.
 */

/** Whether a commit is in {@link LEFT_OUT_BY_HAND} (keys may be abbreviated shas). */
function leftOutByHand(sha: string): boolean {
  return Object.keys(LEFT_OUT_BY_HAND).some((key) => sha.startsWith(key));
}

/** Only the newest this many passing commits of a repository are spread over. */
const WINDOW_COMMITS = 150;
/** Older history is left out: layouts and conventions of years ago say little about today's. */
export const HISTORY_SINCE = "2020-01-01";
const MAX_GOLD_FILES = 4;
/** Commits that touch more files than this (tests and docs included) are not one task. */
const MAX_CHANGED_FILES = 12;
/** Source lines added + deleted: fewer is a one-liner (often a typo), more a rewrite. */
const MIN_SOURCE_LINES = 2;
const MAX_SOURCE_LINES = 400;
const MAX_FILE_BYTES = 1024 * 1024;

/** One benchmark task, as tasks.json holds it. */
export interface BenchTask {
  id: string;
  repo: string;
  commit: string;
  parent: string;
  committed_at: string;
  /** The bare task: the commit subject without its prefix and references. */
  subject: string;
  /** The subject as written in the commit. */
  original_subject: string;
  area: string;
  area_source: AreaSource;
  /** The non-test source files the commit changed (paths in the parent, or new paths). */
  gold: string[];
  /** Which of `gold` the commit created (not in the parent tree). */
  gold_new: string[];
  language: string;
  /** Files in the parent tree (git ls-tree), for size buckets. */
  parent_files: number;
}

export interface TaskFile {
  version: 1;
  built_at: string;
  history_since: string;
  repositories: (RepositoryChoice & { eligible: number; tasks: number; head_files: number })[];
  tasks: BenchTask[];
}

interface CommitChange {
  status: string;
  path: string;
}

interface Commit {
  sha: string;
  parents: string[];
  date: string;
  subject: string;
  changes: CommitChange[];
}

/** Builds the task file from the mirrors under `mirrors` (cloning where allowed). */
export async function buildTasks(options: {
  mirrors: string;
  cloneFromNetwork?: boolean;
  repositories?: RepositoryChoice[];
  log?: (line: string) => void;
}): Promise<TaskFile> {
  const log = options.log ?? (() => {});
  const repositories: TaskFile["repositories"] = [];
  const tasks: BenchTask[] = [];
  for (const choice of options.repositories ?? REPOSITORIES) {
    const gitDir = await requireMirror(
      options.mirrors,
      choice.repo,
      options.cloneFromNetwork ?? false,
    );
    if (!(await hasCommit(gitDir, choice.head))) {
      throw new Error(
        `${choice.repo}: the mirror has no commit ${choice.head}; fetch a newer mirror`,
      );
    }
    const history = await readHistory(gitDir, choice.head);
    const eligible: BenchTask[] = [];
    const subjects = new Set<string>();
    for (const commit of history) {
      const task = await taskOf(gitDir, choice.repo, commit);
      // The same change landed twice (a backport, a cherry-pick): one task.
      if (task === null || subjects.has(task.subject.toLowerCase())) continue;
      subjects.add(task.subject.toLowerCase());
      eligible.push(task);
      if (eligible.length >= WINDOW_COMMITS) break;
    }
    const picked = sample(eligible, choice.cap);
    for (const task of picked) {
      task.parent_files = (await git(gitDir, ["ls-tree", "-r", "--name-only", task.parent]))
        .split("\n")
        .filter(Boolean).length;
    }
    const headFiles = (await git(gitDir, ["ls-tree", "-r", "--name-only", choice.head]))
      .split("\n")
      .filter(Boolean).length;
    log(`${choice.repo}: ${eligible.length} eligible, ${picked.length} taken`);
    repositories.push({
      ...choice,
      eligible: eligible.length,
      tasks: picked.length,
      head_files: headFiles,
    });
    tasks.push(...picked);
  }
  return {
    version: 1,
    built_at: new Date().toISOString(),
    history_since: HISTORY_SINCE,
    repositories,
    tasks,
  };
}

/**
 * `count` of the items, chosen by their commit sha (the smallest first: a sha is a hash, so this
 * is a fixed pseudo-random sample), returned newest first. Leaving one commit out by hand
 * replaces it with the next one and leaves the rest of the choice as it was.
 */
export function sample<T extends { commit: string }>(items: readonly T[], count: number): T[] {
  const chosen = new Set(
    [...items]
      .sort((a, b) => (a.commit < b.commit ? -1 : 1))
      .slice(0, count)
      .map((item) => item.commit),
  );
  return items.filter((item) => chosen.has(item.commit));
}

/** Every non-merge commit reachable from `head`, newest first, with its changes. */
async function readHistory(gitDir: string, head: string): Promise<Commit[]> {
  const RS = "\u001e";
  const US = "\u001f";
  const statusLog = await git(gitDir, [
    "log",
    "--no-merges",
    `--since=${HISTORY_SINCE}`,
    // Rename detection reads blobs, and a mirror may lack old large ones: it is asked per
    // commit where it matters (renamedSource).
    "--no-renames",
    `--format=${RS}%H${US}%P${US}%cI${US}%s`,
    "--name-status",
    head,
  ]);
  const commits: Commit[] = [];
  for (const record of statusLog.split(RS).slice(1)) {
    const [header, ...rest] = record.split("\n");
    const [sha, parents, date, subject] = (header ?? "").split(US);
    if (sha === undefined || parents === undefined || date === undefined) continue;
    const changes: CommitChange[] = [];
    for (const line of rest) {
      if (line.trim() === "") continue;
      const fields = line.split("\t");
      const status = fields[0]!;
      // Renames and copies name the new path last.
      changes.push({ status, path: fields.at(-1)! });
    }
    const commit: Commit = {
      sha,
      parents: parents.split(" ").filter(Boolean),
      date,
      subject: subject ?? "",
      changes,
    };
    commits.push(commit);
  }
  return commits;
}

/** The task a commit makes, or null when a rule leaves it out. */
async function taskOf(gitDir: string, repo: string, commit: Commit): Promise<BenchTask | null> {
  if (commit.parents.length !== 1) return null;
  if (leftOutByHand(commit.sha)) return null;
  const subject = taskFromSubject(commit.subject);
  if (!subject.ok) return null;
  if (commit.changes.length === 0 || commit.changes.length > MAX_CHANGED_FILES) return null;
  const sources = commit.changes.filter((c) => classifyPath(c.path) === "source");
  if (sources.length === 0 || sources.length > MAX_GOLD_FILES) return null;
  if (sources.some((c) => !["M", "A", "D"].includes(c.status))) return null;
  // A renamed source file has no single right answer.
  if (await renamedSource(gitDir, commit, sources)) return null;
  // At least one file the planner could find in the parent tree was edited.
  if (!sources.some((c) => c.status === "M")) return null;
  const parent = commit.parents[0]!;
  const lines = await sourceLines(gitDir, parent, commit.sha, sources);
  if (lines === null || lines < MIN_SOURCE_LINES || lines > MAX_SOURCE_LINES) return null;
  for (const change of sources.filter((c) => c.status !== "A")) {
    const size = Number((await git(gitDir, ["cat-file", "-s", `${parent}:${change.path}`])).trim());
    // The snapshot leaves out files over 1 MiB: no planner could name them from it.
    if (!(size <= MAX_FILE_BYTES)) return null;
  }
  const gold = sources.map((c) => c.path).sort();
  const hint = areaHint(subject.value.scope, gold);
  return {
    id: `${repo.split("/")[1]}-${commit.sha.slice(0, 8)}`,
    repo,
    commit: commit.sha,
    parent,
    committed_at: commit.date,
    subject: subject.value.task,
    original_subject: commit.subject,
    area: hint.area,
    area_source: hint.source,
    gold,
    gold_new: sources
      .filter((c) => c.status === "A")
      .map((c) => c.path)
      .sort(),
    language: languageOf(gold),
    parent_files: 0,
  };
}

/** True when git sees a source file of the commit as renamed or copied (or cannot tell). */
async function renamedSource(
  gitDir: string,
  commit: Commit,
  sources: readonly CommitChange[],
): Promise<boolean> {
  if (!sources.some((c) => c.status === "A") || !commit.changes.some((c) => c.status === "D")) {
    return false;
  }
  try {
    const out = await git(gitDir, ["diff", "-M", "--name-status", commit.parents[0]!, commit.sha]);
    const renamed = out
      .split("\n")
      .filter((line) => /^[RC]/.test(line))
      .map((line) => line.split("\t").at(-1));
    return sources.some((c) => renamed.includes(c.path));
  } catch {
    return true;
  }
}

/**
 * Lines added + deleted in the source files, or null when git cannot read them. Asked per
 * commit and per path: a mirror may lack old large blobs (videos, data), which would stop a
 * `git log --numstat` of the whole history.
 */
async function sourceLines(
  gitDir: string,
  parent: string,
  commit: string,
  sources: readonly CommitChange[],
): Promise<number | null> {
  let out: string;
  try {
    out = await git(gitDir, [
      "diff",
      "--numstat",
      parent,
      commit,
      "--",
      ...sources.map((c) => `:(literal)${c.path}`),
    ]);
  } catch {
    return null;
  }
  let total = 0;
  for (const line of out.split("\n")) {
    const [added, deleted] = line.split("\t");
    if (deleted === undefined) continue;
    // Binary files show "-": not source lines.
    if (added === "-") return null;
    total += Number(added) + Number(deleted);
  }
  return total;
}

/** Formats the file with the repository's biome, so a rebuild of an unchanged set diffs clean. */
function formatLikeTheRepository(path: string): void {
  try {
    execFileSync(join(PACKAGE_ROOT, "node_modules", ".bin", "biome"), ["format", "--write", path], {
      stdio: "ignore",
    });
  } catch {
    console.error(`(biome could not format ${path}; the content is the same either way)`);
  }
}

/** The default location of the task file: beside this script. */
export const TASKS_FILE = join(dirname(fileURLToPath(import.meta.url)), "tasks.json");

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
      "clone-from-network": { type: "boolean", default: false },
      out: { type: "string", default: TASKS_FILE },
      show: { type: "boolean", default: false },
    },
  });
  if (values.mirrors === undefined) {
    console.error("usage: build-tasks.ts --mirrors DIR [--clone-from-network] [--out FILE]");
    process.exit(2);
  }
  const file = await buildTasks({
    mirrors: values.mirrors,
    cloneFromNetwork: values["clone-from-network"],
    log: (line) => console.error(line),
  });
  if (values.show) {
    for (const t of file.tasks) {
      console.log(`${t.id}\t${taskPrompt(t, true)}\t${t.gold.join(", ")}`);
    }
  }
  writeFileSync(values.out, `${JSON.stringify(file, null, 2)}\n`);
  formatLikeTheRepository(values.out);
  console.error(`${file.tasks.length} tasks written to ${values.out}`);
}
