import { z } from "zod";
import { git } from "../mirrors.ts";
import { issuePrompt, statementPrompt } from "./rules.ts";
import { type DatasetKey, ISSUE_DATASETS, type IssueSource } from "./sources.ts";

/**
 * The instances of the issue datasets, read from their mirrors at the pinned commits, in one
 * shape whatever the dataset's format: Multi-SWE-bench's (`resolved_issues`, `base.sha`,
 * `fix_patch`) or SWE-bench's (`problem_statement`, `base_commit`, `patch`).
 */

/** One dataset instance as the benchmark reads it. */
export interface DatasetInstance {
  /** `<owner>__<name>-<pull request>`. */
  id: string;
  /** The pull request that fixed the issue. */
  number: number;
  /** The issues it resolved, where the dataset says (SWE-bench's format may not). */
  issues: number[];
  /** The prompt the planner is given (rules.ts `issuePrompt`, `statementPrompt`). */
  prompt: string;
  /** The base commit of the fix. */
  base: string;
  /** The fix's patch (source and, in Multi-SWE-bench, no tests). */
  patch: string;
  /** The dataset file it was read from. */
  file: string;
}

const Sha = z.string().regex(/^[0-9a-f]{40}$/);

/** The fields of a Multi-SWE-bench instance the benchmark reads. */
const MultiSweSchema = z.object({
  org: z.string(),
  repo: z.string(),
  number: z.number().int(),
  instance_id: z.string().optional(),
  base: z.object({ sha: Sha }),
  resolved_issues: z.array(
    z.object({ number: z.number().int(), title: z.string(), body: z.string().nullable() }),
  ),
  fix_patch: z.string(),
});

/** The fields of a SWE-bench-format instance the benchmark reads. */
const SweBenchSchema = z.object({
  repo: z.string(),
  instance_id: z.string(),
  base_commit: Sha,
  problem_statement: z.string(),
  patch: z.string(),
});

/** The JSONL text of one dataset file at its pinned commit. */
async function datasetText(gitDir: string, dataset: DatasetKey, file: string): Promise<string> {
  const text = await git(gitDir, ["show", `${ISSUE_DATASETS[dataset].commit}:${file}`]);
  if (text.startsWith("version https://git-lfs")) {
    throw new Error(`${file} is a Git LFS pointer in the dataset's mirror: no instances to read`);
  }
  return text;
}

function jsonLines(text: string): unknown[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as unknown);
}

/**
 * The instances of one source's repository in its dataset files, each once (the first file
 * that holds an id wins), in file order.
 */
export async function readInstances(
  datasetGitDir: string,
  source: Pick<IssueSource, "repo" | "dataset" | "files">,
): Promise<DatasetInstance[]> {
  const seen = new Set<string>();
  const out: DatasetInstance[] = [];
  for (const file of source.files) {
    for (const row of jsonLines(await datasetText(datasetGitDir, source.dataset, file))) {
      const instance = toInstance(source, file, row);
      if (instance === null || seen.has(instance.id)) continue;
      seen.add(instance.id);
      out.push(instance);
    }
  }
  return out;
}

/** A dataset row as an instance of `source.repo`, or null when it is another repository's. */
function toInstance(
  source: Pick<IssueSource, "repo" | "dataset">,
  file: string,
  row: unknown,
): DatasetInstance | null {
  if (ISSUE_DATASETS[source.dataset].format === "multi-swe-bench") {
    const i = MultiSweSchema.parse(row);
    return {
      id: i.instance_id ?? `${i.org}__${i.repo}-${i.number}`,
      number: i.number,
      issues: i.resolved_issues.map((issue) => issue.number),
      prompt: i.resolved_issues.length === 0 ? "" : issuePrompt(i.resolved_issues),
      base: i.base.sha,
      patch: i.fix_patch,
      file,
    };
  }
  // A SWE-bench-format file may hold several repositories: only this source's rows are read.
  const repo = (row as { repo?: unknown }).repo;
  if (typeof repo !== "string" || repo.toLowerCase() !== source.repo.toLowerCase()) return null;
  const i = SweBenchSchema.parse(row);
  return {
    id: i.instance_id,
    number: Number(/-(\d+)$/.exec(i.instance_id)?.[1] ?? Number.NaN),
    issues: [],
    prompt: statementPrompt(i.problem_statement),
    base: i.base_commit,
    patch: i.patch,
    file,
  };
}
