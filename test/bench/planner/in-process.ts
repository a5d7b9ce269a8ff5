import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { step } from "../../../src/planner/loop.ts";
import { offlinePlanner } from "../../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../../support/memory-port.ts";
import { rankBm25, TOP_FILES } from "./bm25.ts";
import { type BenchTask, TASKS_FILE, type TaskFile } from "./build-tasks.ts";
import { recallAt } from "./metrics.ts";
import { requireMirror } from "./mirrors.ts";
import { materialiseTree, readDocuments, snapshotTree } from "./parent-tree.ts";
import { filesLeadingLines, filesNamedByPlan, type NamedFile } from "./plan-files.ts";
import {
  type PlannerResult,
  type ResultsFile,
  reportMarkdown,
  type TaskResult,
  VARIANTS,
  type Variant,
  type VariantResult,
} from "./report.ts";
import { taskPrompt } from "./task-rules.ts";

/**
 * The planner benchmark read in-process, for development: the same tasks, trees, scoring
 * (`filesNamedByPlan`, recall@8, BM25) and tables as run.ts, but the offline planner runs in
 * this Node process over the in-memory session double (test/support/memory-port.ts) instead
 * of through `wrangler dev`. Recall is the same as run.ts measures — the planner is
 * deterministic and sees the same files through the same tools — but plan time is not
 * measured (no workerd, no R2): run.ts is the benchmark, this is the quick loop.
 *
 *   npx tsx test/bench/planner/in-process.ts --mirrors DIR [--only repo,repo] [--except repo]
 *       [--task ID] [--limit N] [--save-plans DIR] [--cache DIR] [--json FILE] [--quiet]
 *
 * Trees are cached as JSON under --cache (default: the temp folder), so a second run reads no
 * git at all.
 */

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    only: { type: "string" },
    except: { type: "string" },
    limit: { type: "string" },
    task: { type: "string" },
    "save-plans": { type: "string" },
    cache: { type: "string", default: join(tmpdir(), "planport-bench-trees") },
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
const taskFile = JSON.parse(readFileSync(TASKS_FILE, "utf8")) as TaskFile;
const names = (list: string | undefined) => list?.split(",").map((s) => s.trim().toLowerCase());
const only = names(values.only);
const except = names(values.except);
const matches = (t: BenchTask, list: string[]) =>
  list.includes(t.repo.toLowerCase()) || list.includes(t.repo.split("/")[1]!.toLowerCase());
let tasks = taskFile.tasks.filter(
  (t) =>
    (only === undefined || matches(t, only)) &&
    (except === undefined || !matches(t, except)) &&
    (values.task === undefined || t.id === values.task),
);
if (values.limit !== undefined) tasks = tasks.slice(0, Number(values.limit));
mkdirSync(cache, { recursive: true });

const results: TaskResult[] = [];
for (const task of tasks) {
  const files = await treeOf(task);
  const paths = new Set(Object.keys(files));
  const prompts = VARIANTS.map((v) => taskPrompt(task, v === "area"));
  const bm25 = rankBm25(
    Object.entries(files).map(([path, content]) => ({ path, content })),
    prompts,
  );
  const variants = {} as Record<Variant, VariantResult>;
  for (const [i, variant] of VARIANTS.entries()) {
    const started = performance.now();
    const plan = await planInProcess(files, prompts[i]!);
    const ms = performance.now() - started;
    if (values["save-plans"] !== undefined) {
      mkdirSync(values["save-plans"], { recursive: true });
      writeFileSync(join(values["save-plans"], `${task.id}.${variant}.md`), plan ?? "(no plan)");
    }
    const top = bm25[i]!.map((r) => r.path);
    variants[variant] = {
      prompt: prompts[i]!,
      planner: scored(task, plan, paths, ms),
      bm25: { recall: recallAt(task.gold, top), top },
    };
  }
  const result: TaskResult = {
    id: task.id,
    repo: task.repo,
    language: task.language,
    parent_files: task.parent_files,
    snapshot_files: paths.size,
    gold: task.gold,
    variants,
  };
  results.push(result);
  if (!values.quiet) {
    const cells = VARIANTS.map((v) => {
      const r = variants[v];
      return `${v} ${r.planner!.recall.toFixed(2)} (bm25 ${r.bm25.recall.toFixed(2)}, ${Math.round(r.planner!.client_ms)} ms)`;
    });
    console.error(`${task.id.padEnd(24)} ${cells.join(" · ")}`);
    for (const v of VARIANTS)
      if (variants[v].planner!.recall < 1)
        console.error(`    ${v}: ${variants[v].planner!.top.join(" ")}`);
  }
}

const file: ResultsFile = {
  meta: { command: `in-process.ts ${process.argv.slice(2).join(" ")}`, tasks: results.length },
  results,
};
console.log(reportMarkdown(file));
if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(file, null, 2)}\n`);

/** A plan scored as run.ts scores it (plan time: the Node process's, not the worker's). */
function scored(
  task: BenchTask,
  plan: string | null,
  paths: ReadonlySet<string>,
  ms: number,
): PlannerResult {
  const top = (plan === null ? [] : filesNamedByPlan(plan, paths)).slice(0, TOP_FILES);
  const leading = (plan === null ? [] : filesLeadingLines(plan, paths)).slice(0, TOP_FILES);
  const shown = (list: NamedFile[]) => list.map((f) => (f.isNew ? `+${f.path}` : f.path));
  return {
    outcome: plan === null ? "question" : "plan",
    recall: recallAt(
      task.gold,
      top.map((f) => f.path),
    ),
    top: shown(top),
    recall_leading: recallAt(
      task.gold,
      leading.map((f) => f.path),
    ),
    top_leading: shown(leading),
    named: top.length,
    server_ms: null,
    client_ms: ms,
  };
}

/** The task's parent tree as path → text, from the cache or the mirror. */
async function treeOf(task: BenchTask): Promise<Record<string, string>> {
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
