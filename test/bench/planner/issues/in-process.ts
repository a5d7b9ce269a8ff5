import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { step } from "../../../../src/planner/loop.ts";
import { offlinePlanner } from "../../../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../../../support/memory-port.ts";
import { rankBm25, TOP_FILES } from "../bm25.ts";
import { hitAt, recallAt } from "../metrics.ts";
import { requireMirror } from "../mirrors.ts";
import { materialiseTree, readDocuments, snapshotTree } from "../parent-tree.ts";
import { filesNamedByPlan } from "../plan-files.ts";
import { classifyPath } from "../task-rules.ts";
import { ISSUE_TASKS_FILE, type IssueTask, type IssueTaskFile, readIssuePrompts } from "./build.ts";
import { type IssueResultsFile, type IssueTaskResult, issueReportMarkdown } from "./report.ts";

/**
 * The issue benchmark read in-process, for development: the same tasks, trees, prompts and
 * scoring (`filesNamedByPlan`, Acc@1, Acc@5, recall@8, BM25 over non-test sources) as
 * `run.ts --issues`, but the offline planner runs in this Node process over the in-memory
 * session double instead of through `wrangler dev`. The scores are the ones run.ts measures
 * (the planner is deterministic and sees the same files through the same tools); plan time
 * is not the worker's. run.ts is the benchmark; this is the quick loop for tuning.
 *
 * It plans the **tuning** split unless `--split held-out` (or `all`) is given: tune on tuning
 * only.
 *
 *   npx tsx test/bench/planner/issues/in-process.ts --mirrors DIR [--only repo,repo]
 *       [--task ID] [--limit N] [--save-plans DIR] [--cache DIR] [--json FILE] [--quiet]
 *
 * Trees are cached as JSON under --cache (default: the temp folder), so a second run reads no
 * git at all.
 */

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    only: { type: "string" },
    split: { type: "string", default: "tuning" },
    limit: { type: "string" },
    task: { type: "string" },
    "save-plans": { type: "string" },
    cache: { type: "string", default: join(tmpdir(), "planport-bench-issue-trees") },
    json: { type: "string" },
    quiet: { type: "boolean", default: false },
  },
});
if (values.mirrors === undefined) {
  console.error("usage: in-process.ts --mirrors DIR [--only repo] [--limit N] [--save-plans DIR]");
  process.exit(2);
}
const mirrors = values.mirrors;
const cache = values.cache!;
const only = values.only?.split(",").map((s) => s.trim().toLowerCase());
const taskFile = JSON.parse(readFileSync(ISSUE_TASKS_FILE, "utf8")) as IssueTaskFile;
let tasks = taskFile.tasks.filter(
  (t) =>
    (values.split === "all" || t.split === values.split) &&
    (only === undefined ||
      only.includes(t.repo.toLowerCase()) ||
      only.includes(t.repo.split("/")[1]!.toLowerCase())) &&
    (values.task === undefined || t.id === values.task),
);
if (values.limit !== undefined) tasks = tasks.slice(0, Number(values.limit));
mkdirSync(cache, { recursive: true });
const prompts = await readIssuePrompts(mirrors, tasks);

const results: IssueTaskResult[] = [];
for (const task of tasks) {
  const files = await treeOf(task);
  const paths = new Set(Object.keys(files));
  const prompt = prompts.get(task.id)!;
  const sources = Object.entries(files)
    .filter(([path]) => classifyPath(path) === "source")
    .map(([path, content]) => ({ path, content }));
  const bm25Top = rankBm25(sources, [prompt])[0]!.map((r) => r.path);
  const started = performance.now();
  const plan = await planInProcess(files, prompt);
  const ms = performance.now() - started;
  if (values["save-plans"] !== undefined) {
    mkdirSync(values["save-plans"], { recursive: true });
    writeFileSync(join(values["save-plans"], `${task.id}.md`), plan ?? "(no plan)");
  }
  const top = (plan === null ? [] : filesNamedByPlan(plan, paths))
    .slice(0, TOP_FILES)
    .map((f) => (f.isNew ? `+${f.path}` : f.path));
  const plain = top.map((p) => p.replace(/^\+/, ""));
  results.push({
    id: task.id,
    repo: task.repo,
    language: task.language,
    split: task.split,
    blind: task.blind,
    parent_files: task.parent_files,
    snapshot_files: paths.size,
    gold: task.gold,
    prompt_chars: prompt.length,
    planner: {
      outcome: plan === null ? "question" : "plan",
      recall: recallAt(task.gold, plain),
      top,
      recall_leading: 0,
      top_leading: [],
      named: top.length,
      server_ms: ms,
      client_ms: ms,
    },
    bm25: { top: bm25Top },
  });
  if (!values.quiet) {
    const rank = (list: readonly string[]) => {
      const at = list.findIndex((p) => task.gold.includes(p));
      return at === -1 ? "miss" : `#${at + 1}`;
    };
    const mark = hitAt(task.gold, plain, 1) ? "✓" : hitAt(task.gold, plain, 5) ? "~" : "✗";
    console.error(
      `${mark} ${task.id.padEnd(36)} planner ${rank(plain).padEnd(4)} bm25 ${rank(bm25Top).padEnd(4)} ${Math.round(ms)} ms`,
    );
    if (!hitAt(task.gold, plain, 1)) {
      console.error(`    gold: ${task.gold.join(" ")}`);
      console.error(`    plan: ${plain.slice(0, 5).join(" ")}`);
    }
  }
}

const file: IssueResultsFile = {
  meta: {
    command: `issues/in-process.ts ${process.argv.slice(2).join(" ")}`,
    tasks: results.length,
  },
  results,
};
console.log(issueReportMarkdown(file));
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(file, null, 2)}\n`);

/** The task's base tree as path → text (the snapshot's files), from the cache or the mirror. */
async function treeOf(task: IssueTask): Promise<Record<string, string>> {
  const cached = join(cache, `${task.id}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, "utf8")) as Record<string, string>;
  const gitDir = await requireMirror(mirrors, task.repo, false);
  const tree = await materialiseTree(gitDir, task.parent);
  try {
    const snapshot = await snapshotTree(tree.root);
    const files: Record<string, string> = {};
    for (const doc of readDocuments(tree.root, snapshot.files)) files[doc.path] = doc.content;
    writeFileSync(cached, JSON.stringify(files));
    return files;
  } finally {
    tree.remove();
  }
}

/** Runs the offline planner on the files until it waits; the plan's text, or null (a question). */
async function planInProcess(
  files: Record<string, string>,
  prompt: string,
): Promise<string | null> {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt } });
  const planner = offlinePlanner();
  for (let i = 0; i < 60; i++) {
    const result = await step(port, {}, { planner });
    if (result.next !== "continue") break;
  }
  return port.pendingWait()?.kind === "plan" ? (port.readPlan()?.content ?? null) : null;
}
