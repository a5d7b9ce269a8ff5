import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { z } from "zod";
import { PACKAGE_ROOT } from "../../../../local-client/embedded/worker-process.ts";
import {
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../../../../src/protocol/index.ts";
import { git, hasCommit, requireMirror } from "../mirrors.ts";
import { filesOfPatch, issueGold, issuePrompt, type Split, sampleById } from "./rules.ts";
import { ISSUE_DATASET, ISSUE_SOURCES, type IssueSource } from "./sources.ts";

/**
 * Builds issues/tasks.json from mirrors: the dataset's instances of each repository of
 * sources.ts that pass the rules of rules.ts, a fixed sample of at most `cap` of them, each
 * with its base commit and gold files. The issue texts stay in the dataset's mirror: a task
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
  /** The dataset file (in ISSUE_DATASET at its commit) that holds the instance. */
  dataset_file: string;
  pull_request: number;
  /** The issues the pull request resolved: their title and body are the prompt. */
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
  version: 1;
  kind: "issues";
  built_at: string;
  dataset: typeof ISSUE_DATASET;
  held_out: string[];
  repositories: (IssueSource & { instances: number; eligible: number; tasks: number })[];
  /** Why instances were left out, counted over every repository. */
  left_out: Record<string, number>;
  tasks: IssueTask[];
}

/** The fields of a Multi-SWE-bench instance the benchmark reads. */
const InstanceSchema = z.object({
  org: z.string(),
  repo: z.string(),
  number: z.number().int(),
  instance_id: z.string().optional(),
  base: z.object({ sha: z.string().regex(/^[0-9a-f]{40}$/) }),
  resolved_issues: z.array(
    z.object({ number: z.number().int(), title: z.string(), body: z.string().nullable() }),
  ),
  fix_patch: z.string(),
});
type Instance = z.infer<typeof InstanceSchema>;

function instanceId(instance: Instance): string {
  return instance.instance_id ?? `${instance.org}__${instance.repo}-${instance.number}`;
}

/** The instances of one dataset file, read from the dataset's mirror at its pinned commit. */
export async function readInstances(datasetGitDir: string, file: string): Promise<Instance[]> {
  const text = await git(datasetGitDir, ["show", `${ISSUE_DATASET.commit}:${file}`]);
  if (text.startsWith("version https://git-lfs")) {
    throw new Error(`${file} is a Git LFS pointer in the dataset's mirror: no instances to read`);
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => InstanceSchema.parse(JSON.parse(line)));
}

/**
 * The prompt of every task, read from the dataset's mirror, checked against the hash the task
 * file recorded (a different text would be a different benchmark).
 */
export async function readIssuePrompts(
  mirrors: string,
  tasks: readonly IssueTask[],
): Promise<Map<string, string>> {
  const gitDir = await requireMirror(mirrors, ISSUE_DATASET.repo, false);
  const prompts = new Map<string, string>();
  for (const file of new Set(tasks.map((t) => t.dataset_file))) {
    const byId = new Map((await readInstances(gitDir, file)).map((i) => [instanceId(i), i]));
    for (const task of tasks.filter((t) => t.dataset_file === file)) {
      const instance = byId.get(task.id);
      if (instance === undefined) throw new Error(`${task.id}: not in ${file}`);
      const prompt = issuePrompt(instance.resolved_issues);
      if (sha256(prompt) !== task.prompt_sha256) {
        throw new Error(`${task.id}: the issue text differs from the one the task file recorded`);
      }
      prompts.set(task.id, prompt);
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
  const datasetGitDir = await requireMirror(options.mirrors, ISSUE_DATASET.repo, false);
  const repositories: IssueTaskFile["repositories"] = [];
  const leftOut: Record<string, number> = {};
  const tasks: IssueTask[] = [];
  for (const source of ISSUE_SOURCES) {
    const gitDir = await requireMirror(options.mirrors, source.repo, false);
    const instances = await readInstances(datasetGitDir, source.file);
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
    version: 1,
    kind: "issues",
    built_at: new Date().toISOString(),
    dataset: ISSUE_DATASET,
    held_out: ISSUE_SOURCES.filter((s) => s.heldOut).map((s) => s.repo),
    repositories,
    left_out: leftOut,
    tasks,
  };
}

/** The task an instance makes, or the reason it is left out. */
async function taskOf(
  gitDir: string,
  source: IssueSource,
  instance: Instance,
): Promise<IssueTask | string> {
  if (instance.resolved_issues.length === 0) return "no resolved issue";
  const prompt = issuePrompt(instance.resolved_issues);
  if (prompt.split(/\s+/).filter((w) => /[A-Za-z]/.test(w)).length < MIN_PROMPT_WORDS) {
    return `issue text under ${MIN_PROMPT_WORDS} words`;
  }
  const gold = issueGold(filesOfPatch(instance.fix_patch));
  if (!gold.ok) return gold.reason;
  const parent = instance.base.sha;
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
    id: instanceId(instance),
    repo: source.repo,
    language: source.language,
    split: source.heldOut ? "held-out" : "tuning",
    dataset_file: source.file,
    pull_request: instance.number,
    issues: instance.resolved_issues.map((i) => i.number),
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
