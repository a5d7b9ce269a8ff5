import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import {
  PACKAGE_ROOT,
  startWorkerProcess,
  type WorkerProcess,
} from "../../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../../local-client/http/api.ts";
import { rankBm25, TOP_FILES } from "./bm25.ts";
import { type BenchTask, TASKS_FILE, type TaskFile } from "./build-tasks.ts";
import {
  ISSUE_TASKS_FILE,
  type IssueTask,
  type IssueTaskFile,
  readIssuePrompts,
} from "./issues/build.ts";
import {
  type IssueResultsFile,
  type IssueTaskResult,
  issueReportMarkdown,
} from "./issues/report.ts";
import { recallAt } from "./metrics.ts";
import { requireMirror } from "./mirrors.ts";
import { materialiseTree, readDocuments, snapshotTree } from "./parent-tree.ts";
import { filesLeadingLines, filesNamedByPlan, type NamedFile } from "./plan-files.ts";
import { type PlanOutcome, planOnce } from "./plan-session.ts";
import {
  type PlannerResult,
  type ResultsFile,
  reportMarkdown,
  type TaskResult,
  VARIANTS,
  type Variant,
  type VariantResult,
} from "./report.ts";
import { measureScale } from "./scale.ts";
import { classifyPath, taskPrompt } from "./task-rules.ts";

/**
 * `npm run bench:planner`: recall@8 of the offline planner, end to end through the real worker,
 * beside a BM25 baseline on the same snapshot trees, for every task of tasks.json — each with
 * the area hint and with the bare subject — plus plan time. See README.md beside this file.
 * With `--issues`, the task set is issues/tasks.json instead: real issue texts, scored by
 * Acc@1, Acc@5 and recall@8 against a BM25 over the tree's non-test source files, per split.
 *
 *   npx tsx test/bench/planner/run.ts --mirrors DIR [--clone-from-network] [--only repo[,repo]]
 *       [--limit N] [--out results.md] [--json results.json] [--scale] [--bm25-only]
 *       [--timeout-s 120] [--tasks tasks.json] [--save-plans DIR]
 *       [--issues [--split tuning|held-out] [--twice]]
 *
 * One `wrangler dev` (offline planner, rate limits off) serves the whole run; tasks run one
 * after another. A task that cannot be measured, or a plan that fails, is recorded with its
 * reason and the run goes on.
 */

const TOKEN = "bench-planner";
const DEFAULT_TIMEOUT_S = 120;

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    "clone-from-network": { type: "boolean", default: false },
    only: { type: "string" },
    limit: { type: "string" },
    out: { type: "string" },
    json: { type: "string" },
    tasks: { type: "string" },
    issues: { type: "boolean", default: false },
    split: { type: "string" },
    twice: { type: "boolean", default: false },
    "timeout-s": { type: "string", default: String(DEFAULT_TIMEOUT_S) },
    scale: { type: "boolean", default: false },
    "bm25-only": { type: "boolean", default: false },
    "save-plans": { type: "string" },
  },
});
if (values.mirrors === undefined) {
  console.error(
    "usage: run.ts --mirrors DIR [--clone-from-network] [--only repo] [--limit N] [--out file.md] [--json file.json] [--scale] [--bm25-only]",
  );
  process.exit(2);
}
const mirrors = values.mirrors;
const timeoutMs = Number(values["timeout-s"]) * 1000;
const issueMode = values.issues ?? false;
const tasksPath = values.tasks ?? (issueMode ? ISSUE_TASKS_FILE : TASKS_FILE);
if (values.twice && !issueMode) {
  console.error("--twice is an option of --issues runs");
  process.exit(2);
}
const only = values.only?.split(",").map((s) => s.trim().toLowerCase());
/** The tasks of the file that --only, --split and --limit keep. */
function chosen<T extends { repo: string; split?: string }>(all: readonly T[]): T[] {
  let kept = all.filter(
    (t) =>
      (only === undefined ||
        only.includes(t.repo.toLowerCase()) ||
        only.includes(t.repo.split("/")[1]!.toLowerCase())) &&
      (values.split === undefined || t.split === values.split),
  );
  if (values.limit !== undefined) kept = kept.slice(0, Number(values.limit));
  if (kept.length === 0) {
    console.error(
      `no task matches --only ${values.only ?? "(any)"} --split ${values.split ?? "(any)"}`,
    );
    process.exit(2);
  }
  return kept;
}
const tasks: BenchTask[] = issueMode
  ? []
  : chosen((JSON.parse(readFileSync(tasksPath, "utf8")) as TaskFile).tasks);
const issueTasks: IssueTask[] = issueMode
  ? chosen((JSON.parse(readFileSync(tasksPath, "utf8")) as IssueTaskFile).tasks)
  : [];
/** The issue texts, read from the dataset's mirror (never stored in this repository). */
const issuePrompts = issueMode ? await readIssuePrompts(mirrors, issueTasks) : new Map();
const taskCount = issueMode ? issueTasks.length : tasks.length;

const meta: ResultsFile["meta"] = {
  date: new Date().toISOString(),
  command: `npx tsx test/bench/planner/run.ts ${process.argv.slice(2).join(" ")}`,
  planport_commit: gitOutput(["rev-parse", "HEAD"]),
  planport_changes: gitOutput(["status", "--porcelain", "--", "src", "local-client"])
    .split("\n")
    .filter(Boolean).length,
  tasks_file: tasksPath,
  tasks: taskCount,
  node: process.version,
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
  load_at_start: loadavg()
    .map((n) => n.toFixed(2))
    .join(", "),
};
console.error(
  `planner bench${issueMode ? " (issues)" : ""} · ${taskCount} tasks · planport ${String(meta.planport_commit).slice(0, 10)}${meta.planport_changes ? ` (+${meta.planport_changes} changed files in src/local-client)` : ""} · load ${meta.load_at_start}`,
);

/** The worker and its API; restarted when it stops answering. */
class BenchWorker {
  private worker: WorkerProcess | null = null;
  private readonly persistDir = mkdtempSync(join(tmpdir(), "planport-bench-planner-persist-"));
  api: Api | null = null;

  async start(): Promise<void> {
    this.worker = await startWorkerProcess({
      persistDir: this.persistDir,
      vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: "off" },
    });
    this.api = createApi({ server: this.worker.url, token: TOKEN });
  }

  /** Restarts the worker when it no longer answers its health check. */
  async ensureHealthy(): Promise<void> {
    if (this.api !== null && (await this.api.healthz())) return;
    console.error("the worker stopped answering; restarting it");
    await this.worker?.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.worker?.stop();
    rmSync(this.persistDir, { recursive: true, force: true });
  }
}

const worker = values["bm25-only"] ? null : new BenchWorker();
const stopOnSignal = () => {
  void (worker?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
};
process.once("SIGINT", stopOnSignal);
process.once("SIGTERM", stopOnSignal);

const results: TaskResult[] = [];
const file: ResultsFile = { meta, results };
const issueResults: IssueTaskResult[] = [];
const issueFile: IssueResultsFile = { meta, results: issueResults };
const runStart = performance.now();
try {
  if (worker !== null) {
    console.error("starting wrangler dev (offline planner)…");
    await worker.start();
  }
  for (const [index, task] of tasks.entries()) {
    const taskStart = performance.now();
    const result = await measureTask(task);
    results.push(result);
    const seconds = ((performance.now() - taskStart) / 1000).toFixed(1);
    console.error(
      `[${String(index + 1).padStart(3)}/${tasks.length}] ${progressLine(result)} (${seconds} s)`,
    );
  }
  for (const [index, task] of issueTasks.entries()) {
    const taskStart = performance.now();
    const result = await measureIssueTask(task, issuePrompts.get(task.id)!);
    issueResults.push(result);
    const seconds = ((performance.now() - taskStart) / 1000).toFixed(1);
    console.error(
      `[${String(index + 1).padStart(3)}/${issueTasks.length}] ${issueProgressLine(result)} (${seconds} s)`,
    );
  }
  if (values.scale && worker !== null) {
    await worker.ensureHealthy();
    file.scale = await measureScale(worker.api!, timeoutMs, (line) => console.error(line));
    issueFile.scale = file.scale;
  }
} finally {
  await worker?.stop();
}
meta.load_at_end = loadavg()
  .map((n) => n.toFixed(2))
  .join(", ");
meta.duration_s = Math.round((performance.now() - runStart) / 1000);

const markdown = `## Offline planner vs BM25${issueMode ? " on real issues" : ""} — ${meta.date}\n\n- Command: \`${meta.command}\`\n- planport: ${meta.planport_commit}${meta.planport_changes ? ` with ${meta.planport_changes} uncommitted changes in src/ and local-client/` : ""}\n- ${meta.tasks} tasks, ${meta.duration_s} s; ${meta.cpus}, Node ${meta.node}; load ${meta.load_at_start} → ${meta.load_at_end}\n\n${issueMode ? issueReportMarkdown(issueFile) : reportMarkdown(file)}`;
console.log(markdown);
if (values.out !== undefined) writeFileSync(values.out, markdown);
const jsonPath =
  values.json ??
  (values.out !== undefined
    ? values.out.replace(/(\.md)?$/, ".json")
    : join(tmpdir(), `planport-bench-planner-${Date.now()}.json`));
writeFileSync(jsonPath, `${JSON.stringify(issueMode ? issueFile : file, null, 2)}\n`);
console.error(`per-task results: ${jsonPath}`);

/** Materialises the task's parent tree, ranks it with BM25 and plans it (both variants). */
async function measureTask(task: BenchTask): Promise<TaskResult> {
  const base: TaskResult = {
    id: task.id,
    repo: task.repo,
    language: task.language,
    parent_files: task.parent_files,
    snapshot_files: null,
    gold: task.gold,
  };
  let tree: Awaited<ReturnType<typeof materialiseTree>> | null = null;
  try {
    const gitDir = await requireMirror(mirrors, task.repo, values["clone-from-network"] ?? false);
    tree = await materialiseTree(gitDir, task.parent);
    const snapshot = await snapshotTree(tree.root);
    base.snapshot_files = snapshot.files.size;
    const existing = task.gold.filter((path) => !task.gold_new.includes(path));
    const missing = existing.filter((path) => !snapshot.files.has(path));
    if (missing.length > 0) {
      return { ...base, error: `gold file(s) not in the snapshot: ${missing.join(", ")}` };
    }
    const prompts = VARIANTS.map((variant) => taskPrompt(task, variant === "area"));
    const ranked = rankBm25(readDocuments(tree.root, snapshot.files), prompts);
    if (worker !== null) {
      await worker.ensureHealthy();
      const api = worker.api!;
      if (!(await api.snapshotExists(snapshot.build.id))) {
        await api.uploadSnapshot(snapshot.build.bytes);
      }
    }
    const variants = {} as Record<Variant, VariantResult>;
    for (const [i, variant] of VARIANTS.entries()) {
      const bm25Top = ranked[i]!.map((r) => r.path);
      variants[variant] = {
        prompt: prompts[i]!,
        planner:
          worker === null
            ? null
            : await plannerResult(
                worker.api!,
                snapshot.build.id,
                prompts[i]!,
                task,
                snapshot.files,
                `${task.id}.${variant}`,
              ),
        bm25: { recall: recallAt(task.gold, bm25Top), top: bm25Top },
      };
    }
    return { ...base, variants };
  } catch (error) {
    return { ...base, error: error instanceof Error ? error.message : String(error) };
  } finally {
    tree?.remove();
  }
}

async function plannerResult(
  api: Api,
  snapshotId: string,
  prompt: string,
  task: { gold: readonly string[] },
  files: ReadonlySet<string>,
  name: string,
): Promise<PlannerResult> {
  return scorePlan(await planSaved(api, snapshotId, prompt, name), task, files);
}

/** Plans once, keeping the plan under --save-plans when asked. */
async function planSaved(
  api: Api,
  snapshotId: string,
  prompt: string,
  name: string,
): Promise<PlanOutcome> {
  const outcome = await planOnce(api, snapshotId, prompt, timeoutMs);
  if (values["save-plans"] !== undefined && outcome.kind !== "failure") {
    mkdirSync(values["save-plans"], { recursive: true });
    writeFileSync(join(values["save-plans"], `${name}.${outcome.kind}.md`), outcome.text);
  }
  return outcome;
}

/** What a plan (or question, or failure) scores against the task's gold. */
function scorePlan(
  outcome: PlanOutcome,
  task: { gold: readonly string[] },
  files: ReadonlySet<string>,
): PlannerResult {
  if (outcome.kind === "failure") {
    return {
      outcome: "failure",
      recall: 0,
      top: [],
      recall_leading: 0,
      top_leading: [],
      named: 0,
      server_ms: null,
      client_ms: outcome.clientMs,
      reason: outcome.reason,
    };
  }
  // A clarifying question names no file to change: it counts as a plan with none.
  const named = outcome.kind === "plan" ? filesNamedByPlan(outcome.text, files) : [];
  const top = named.slice(0, TOP_FILES);
  const leading = (outcome.kind === "plan" ? filesLeadingLines(outcome.text, files) : []).slice(
    0,
    TOP_FILES,
  );
  const shown = (list: NamedFile[]) => list.map((f) => (f.isNew ? `+${f.path}` : f.path));
  return {
    outcome: outcome.kind,
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
    named: named.length,
    server_ms: outcome.serverMs,
    client_ms: outcome.clientMs,
  };
}

function progressLine(result: TaskResult): string {
  if (result.variants === undefined) return `${result.id}  not measured: ${result.error}`;
  const parts = VARIANTS.map((variant) => {
    const v = result.variants![variant];
    const p = v.planner;
    const planner =
      p === null
        ? ""
        : p.outcome === "failure"
          ? `planner FAILED (${p.reason}) `
          : `planner ${p.recall.toFixed(2)} (${p.outcome}, ${Math.round(p.server_ms ?? 0)} ms) `;
    return `${variant}: ${planner}bm25 ${v.bm25.recall.toFixed(2)}`;
  });
  return `${result.id.padEnd(22)} ${parts.join(" · ")}`;
}

function gitOutput(args: string[]): string {
  try {
    return execFileSync("git", ["-C", PACKAGE_ROOT, ...args], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/**
 * Materialises an issue task's parent tree, ranks its non-test source files with BM25 on the
 * issue text, and plans the issue text (twice with --twice, comparing the two plans' bytes).
 */
async function measureIssueTask(task: IssueTask, prompt: string): Promise<IssueTaskResult> {
  const base: IssueTaskResult = {
    id: task.id,
    repo: task.repo,
    language: task.language,
    split: task.split,
    blind: task.blind,
    parent_files: task.parent_files,
    snapshot_files: null,
    gold: task.gold,
    prompt_chars: prompt.length,
  };
  let tree: Awaited<ReturnType<typeof materialiseTree>> | null = null;
  try {
    const gitDir = await requireMirror(mirrors, task.repo, values["clone-from-network"] ?? false);
    tree = await materialiseTree(gitDir, task.parent);
    const snapshot = await snapshotTree(tree.root);
    base.snapshot_files = snapshot.files.size;
    const existing = task.gold.filter((path) => !task.gold_new.includes(path));
    const missing = existing.filter((path) => !snapshot.files.has(path));
    if (missing.length > 0) {
      return { ...base, error: `gold file(s) not in the snapshot: ${missing.join(", ")}` };
    }
    // The baseline the issue names: BM25 over the tree's non-test source files only.
    const sources = [...snapshot.files].filter((path) => classifyPath(path) === "source");
    const bm25Top = rankBm25(readDocuments(tree.root, sources), [prompt])[0]!.map((r) => r.path);
    if (worker === null) return { ...base, planner: null, bm25: { top: bm25Top } };
    await worker.ensureHealthy();
    const api = worker.api!;
    if (!(await api.snapshotExists(snapshot.build.id))) {
      await api.uploadSnapshot(snapshot.build.bytes);
    }
    const first = await planSaved(api, snapshot.build.id, prompt, task.id);
    const result: IssueTaskResult = {
      ...base,
      planner: scorePlan(first, task, snapshot.files),
      bm25: { top: bm25Top },
    };
    if (values.twice) {
      const second = await planSaved(api, snapshot.build.id, prompt, `${task.id}.again`);
      result.repeat =
        first.kind === "failure" || second.kind === "failure"
          ? "failed"
          : first.kind === second.kind && first.text === second.text
            ? "same"
            : "different";
    }
    return result;
  } catch (error) {
    return { ...base, error: error instanceof Error ? error.message : String(error) };
  } finally {
    tree?.remove();
  }
}

function issueProgressLine(result: IssueTaskResult): string {
  if (result.error !== undefined) return `${result.id}  not measured: ${result.error}`;
  const mark = (top: readonly string[]) => {
    const rank = top.findIndex((path) => result.gold.includes(path.replace(/^\+/, "")));
    return rank === -1 ? "miss" : `#${rank + 1}`;
  };
  const p = result.planner;
  const planner =
    p === null || p === undefined
      ? ""
      : p.outcome === "failure"
        ? `planner FAILED (${p.reason}) · `
        : `planner ${mark(p.top)} (${p.outcome}, ${Math.round(p.server_ms ?? 0)} ms) · `;
  const repeat = result.repeat === undefined ? "" : ` · twice: ${result.repeat}`;
  return `${result.id.padEnd(40)} ${planner}bm25 ${mark(result.bm25?.top ?? [])}${repeat}`;
}
