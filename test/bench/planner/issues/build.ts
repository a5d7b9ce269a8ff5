import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../../../../local-client/embedded/worker-process.ts";
import {
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../../../../src/protocol/index.ts";
import { git, hasCommit, requireMirror } from "../mirrors.ts";
import { type DatasetInstance, readInstances } from "./datasets.ts";
import { filesOfPatch, issueGold, type Split, sampleById } from "./rules.ts";
import { type DatasetKey, ISSUE_DATASETS, ISSUE_SOURCES, type IssueSource } from "./sources.ts";

/**
 * Builds issues/tasks.json from mirrors: the datasets' instances of each repository of
 * sources.ts that pass the rules of rules.ts, a fixed sample of at most `cap` of them, each
 * with its base commit and gold files. The issue texts stay in the datasets' mirrors: a task
 * names its instance, and the runner reads the text from there (readIssuePrompts).
 *
 *   npx tsx test/bench/planner/issues/build.ts --mirrors /work/.mirror [--show]
 */

/** An issue of fewer words than this (a bare title) says too little to be a task. */
const MIN_PROMPT_WORDS = 5;

/** One issue task, as issues/tasks.json holds it. */
export interface IssueTask {
  /** The dataset's instance id, `<owner>__<name>-<pull request>`. */
  id: string;
  repo: string;
  language: string;
  split: Split;
  /** Held out and chosen blind in issue 31 (sources.ts `blind`). */
  blind: boolean;
  dataset: DatasetKey;
  /** The dataset file (in ISSUE_DATASETS[dataset] at its commit) that holds the instance. */
  dataset_file: string;
  pull_request: number;
  /** The issues the pull request resolved, where the dataset says: their text is the prompt. */
  issues: number[];
  /** The base commit of the fix: the tree the planner is given. */
  parent: string;
  /** The non-test source files the fix changed (paths in the parent, or new paths). */
  gold: string[];
  gold_new: string[];
  parent_files: number;
  prompt_chars: number;
  /** SHA-256 of the prompt: the runner checks the text it reads is the one chosen. */
  prompt_sha256: string;
}

export interface IssueTaskFile {
  version: 2;
  kind: "issues";
  built_at: string;
  datasets: typeof ISSUE_DATASETS;
  held_out: string[];
  repositories: (IssueSource & { instances: number; eligible: number; tasks: number })[];
  /** Why instances were left out, counted over every repository. */
  left_out: Record<string, number>;
  tasks: IssueTask[];
}

/**
 * The prompt of every task, read from the dataset's mirror, checked against the hash the task
 * file recorded (a different text would be a different benchmark).
 */
export async function readIssuePrompts(
  mirrors: string,
  tasks: readonly IssueTask[],
): Promise<Map<string, string>> {
  const prompts = new Map<string, string>();
  for (const dataset of new Set(tasks.map((t) => t.dataset))) {
    const gitDir = await requireMirror(mirrors, ISSUE_DATASETS[dataset].repo, false);
    for (const repo of new Set(tasks.filter((t) => t.dataset === dataset).map((t) => t.repo))) {
      const mine = tasks.filter((t) => t.dataset === dataset && t.repo === repo);
      const files = [...new Set(mine.map((t) => t.dataset_file))];
      const byId = new Map(
        (await readInstances(gitDir, { repo, dataset, files })).map((i) => [i.id, i]),
      );
      for (const task of mine) {
        const instance = byId.get(task.id);
        if (instance === undefined) throw new Error(`${task.id}: not in ${task.dataset_file}`);
        if (sha256(instance.prompt) !== task.prompt_sha256) {
          throw new Error(`${task.id}: the issue text differs from the one the task file recorded`);
        }
        prompts.set(task.id, instance.prompt);
      }
    }
  }
  return prompts;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Builds the issue task file from the mirrors under `mirrors`. */
export async function buildIssueTasks(options: {
  mirrors: string;
  log?: (line: string) => void;
}): Promise<IssueTaskFile> {
  const log = options.log ?? (() => {});
  const repositories: IssueTaskFile["repositories"] = [];
  const leftOut: Record<string, number> = {};
  const tasks: IssueTask[] = [];
  for (const source of ISSUE_SOURCES) {
    const gitDir = await requireMirror(options.mirrors, source.repo, false);
    const datasetGitDir = await requireMirror(
      options.mirrors,
      ISSUE_DATASETS[source.dataset].repo,
      false,
    );
    const instances = await readInstances(datasetGitDir, source);
    const eligible: IssueTask[] = [];
    const prompts = new Set<string>();
    // Oldest pull request first: when two fixed the same issue (a backport), the first is kept.
    for (const instance of [...instances].sort((a, b) => a.number - b.number)) {
      const verdict = await taskOf(gitDir, source, instance);
      const reason =
        typeof verdict === "string"
          ? verdict
          : prompts.has(verdict.prompt_sha256)
            ? "the same issue as an earlier pull request"
            : null;
      if (reason !== null || typeof verdict === "string") {
        leftOut[reason!] = (leftOut[reason!] ?? 0) + 1;
        continue;
      }
      prompts.add(verdict.prompt_sha256);
      eligible.push(verdict);
    }
    const picked = sampleById(eligible, source.cap).sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const task of picked) {
      task.parent_files = (await git(gitDir, ["ls-tree", "-r", "--name-only", task.parent]))
        .split("\n")
        .filter(Boolean).length;
    }
    log(
      `${source.repo}: ${instances.length} instances, ${eligible.length} eligible, ${picked.length} taken`,
    );
    repositories.push({
      ...source,
      instances: instances.length,
      eligible: eligible.length,
      tasks: picked.length,
    });
    tasks.push(...picked);
  }
  return {
    version: 2,
    kind: "issues",
    built_at: new Date().toISOString(),
    datasets: ISSUE_DATASETS,
    held_out: ISSUE_SOURCES.filter((s) => s.split === "held-out").map((s) => s.repo),
    repositories,
    left_out: leftOut,
    tasks,
  };
}

/** The task an instance makes, or the reason it is left out. */
async function taskOf(
  gitDir: string,
  source: IssueSource,
  instance: DatasetInstance,
): Promise<IssueTask | string> {
  if (instance.prompt === "") return "no resolved issue";
  const prompt = instance.prompt;
  if (prompt.split(/\s+/).filter((w) => /[A-Za-z]/.test(w)).length < MIN_PROMPT_WORDS) {
    return `issue text under ${MIN_PROMPT_WORDS} words`;
  }
  const gold = issueGold(filesOfPatch(instance.patch));
  if (!gold.ok) return gold.reason;
  const parent = instance.base;
  if (!(await hasCommit(gitDir, parent))) return "base commit not in the mirror";
  for (const path of gold.gold.filter((p) => !gold.goldNew.includes(p))) {
    let size: number;
    try {
      size = Number((await git(gitDir, ["cat-file", "-s", `${parent}:${path}`])).trim());
    } catch {
      return "a modified gold file is not in the base tree";
    }
    // The snapshot leaves out files over 1 MiB: a gold file that large could never be named.
    if (!(size <= SNAPSHOT_MAX_FILE_BYTES)) return "a gold file over the snapshot's 1 MiB limit";
  }
  // A tree the snapshot refuses whole could never be planned (jackson-core once kept 130 MiB of
  // test data). Binary files count too here, so the check errs on the side of leaving out.
  const tree = await treeSize(gitDir, parent);
  if (tree.bytes > SNAPSHOT_MAX_UNCOMPRESSED_BYTES || tree.files > SNAPSHOT_MAX_FILES) {
    return "the base tree is over the snapshot's limits";
  }
  return {
    id: instance.id,
    repo: source.repo,
    language: source.language,
    split: source.split,
    blind: source.blind,
    dataset: source.dataset,
    dataset_file: instance.file,
    pull_request: instance.number,
    issues: instance.issues,
    parent,
    gold: gold.gold,
    gold_new: gold.goldNew,
    parent_files: 0,
    prompt_chars: prompt.length,
    prompt_sha256: sha256(prompt),
  };
}

/** Files of at most 1 MiB in a tree (what a snapshot could hold), and their bytes. */
async function treeSize(gitDir: string, commit: string): Promise<{ files: number; bytes: number }> {
  const listing = await git(gitDir, ["ls-tree", "-r", "-l", "-z", commit]);
  let files = 0;
  let bytes = 0;
  for (const entry of listing.split("\0")) {
    // "<mode> blob <sha> <size>\t<path>"; a size of "-" or "BAD" is not a readable blob.
    const fields = entry.slice(0, entry.indexOf("\t")).trim().split(/\s+/);
    const size = Number(fields[3]);
    if (fields[1] !== "blob" || !(size <= SNAPSHOT_MAX_FILE_BYTES)) continue;
    files++;
    bytes += size;
  }
  return { files, bytes };
}

/** The default location of the issue task file: beside this script. */
export const ISSUE_TASKS_FILE = join(dirname(fileURLToPath(import.meta.url)), "tasks.json");

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
      out: { type: "string", default: ISSUE_TASKS_FILE },
      show: { type: "boolean", default: false },
    },
  });
  if (values.mirrors === undefined) {
    console.error("usage: issues/build.ts --mirrors DIR [--out FILE] [--show]");
    process.exit(2);
  }
  const file = await buildIssueTasks({
    mirrors: values.mirrors,
    log: (line) => console.error(line),
  });
  if (values.show) {
    const prompts = await readIssuePrompts(values.mirrors, file.tasks);
    for (const t of file.tasks) {
      const firstLine = prompts.get(t.id)?.split("\n")[0] ?? "";
      console.log(`${t.id}\t${t.split}\t${t.parent_files}\t${firstLine}\t${t.gold.join(", ")}`);
    }
  }
  writeFileSync(values.out, `${JSON.stringify(file, null, 2)}\n`);
  try {
    execFileSync(
      join(PACKAGE_ROOT, "node_modules", ".bin", "biome"),
      ["format", "--write", values.out],
      {
        stdio: "ignore",
      },
    );
  } catch {
    console.error(`(biome could not format ${values.out}; the content is the same either way)`);
  }
  const count = (split: Split) => file.tasks.filter((t) => t.split === split).length;
  console.error(
    `${file.tasks.length} tasks (${count("tuning")} tuning, ${count("held-out")} held out) written to ${values.out}`,
  );
  console.error(`left out: ${JSON.stringify(file.left_out)}`);
}
