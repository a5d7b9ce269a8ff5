import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { StepOptions } from "../../../src/planner/loop.ts";
import type { Planner } from "../../../src/planner/models/types.ts";
import type { StepResult } from "../../../src/planner/port.ts";
import { generatedRepository } from "../../worker/planner/generated-repo.ts";
import {
  ISSUE_TASKS_FILE,
  type IssueTask,
  type IssueTaskFile,
  readIssuePrompts,
} from "./issues/build.ts";
import { requireMirror } from "./mirrors.ts";
import { materialiseTree, readDocuments, snapshotTree } from "./parent-tree.ts";
import { SCALE_TASK } from "./scale.ts";

/**
 * The offline planner's own time on real-issue trees (issue 31's "plan time"), in this Node
 * process over the in-memory session double: the planner and its tools (Grep, Glob, Read…) from
 * the first step to the plan, with no R2, no HTTP and no poll. Each plan's **CPU time** (this
 * process's user + system time) is reported beside its wall time: on a shared machine the wall
 * time measures the neighbours as much as the planner, the CPU time much less so. The worker's
 * own figure (session created → plan waiting, R2 reads included) is run.ts `--issues`' plan time.
 *
 *   npx tsx test/bench/planner/plan-time.ts --mirrors DIR                 # tuning split
 *   npx tsx test/bench/planner/plan-time.ts --mirrors DIR --split all --scale --out FILE
 *   npx tsx test/bench/planner/plan-time.ts --mirrors DIR --src /other/checkout  # before/after
 *
 * `--src DIR` plans with the planner of another planport checkout (its src/), so two versions
 * are timed by the same script on the same trees. `--scale` adds the generated 1,000- and
 * 20,000-file repositories. Trees are cached as JSON under --cache (shared with
 * issues/in-process.ts).
 */

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    split: { type: "string", default: "tuning" },
    only: { type: "string" },
    limit: { type: "string" },
    src: { type: "string", default: resolve(import.meta.dirname, "../../..") },
    cache: { type: "string", default: join(tmpdir(), "planport-bench-issue-trees") },
    scale: { type: "boolean", default: false },
    out: { type: "string" },
  },
});
if (values.mirrors === undefined) {
  console.error("usage: plan-time.ts --mirrors DIR [--split tuning|held-out|all] [--src DIR]");
  process.exit(2);
}
const mirrors = values.mirrors;
const cache = values.cache!;
const src = resolve(values.src!);
const { step } = (await import(pathToFileURL(join(src, "src/planner/loop.ts")).href)) as {
  step: (port: unknown, env: object, options: StepOptions) => Promise<StepResult>;
};
const { offlinePlanner } = (await import(
  pathToFileURL(join(src, "src/planner/models/offline/index.ts")).href
)) as { offlinePlanner: () => Planner };
const { MemoryPort } = (await import(
  pathToFileURL(join(src, "test/support/memory-port.ts")).href
)) as typeof import("../../support/memory-port.ts");

const only = values.only?.split(",").map((s) => s.trim().toLowerCase());
let tasks = (JSON.parse(readFileSync(ISSUE_TASKS_FILE, "utf8")) as IssueTaskFile).tasks.filter(
  (t) =>
    (values.split === "all" || t.split === values.split) &&
    (only === undefined ||
      only.includes(t.repo.toLowerCase()) ||
      only.includes(t.repo.split("/")[1]!.toLowerCase())),
);
if (values.limit !== undefined) tasks = tasks.slice(0, Number(values.limit));
mkdirSync(cache, { recursive: true });
const prompts = await readIssuePrompts(mirrors, tasks);

interface Timed {
  id: string;
  files: number;
  cpuMs: number;
  wallMs: number;
}

const began = Date.now();
const startLoad = loadavg().map((n) => n.toFixed(2));
const timed: Timed[] = [];
for (const task of tasks) {
  const files = await treeOf(task);
  const t = await timePlan(files, prompts.get(task.id)!);
  timed.push({ id: task.id, files: Object.keys(files).length, ...t });
  console.error(
    `${task.id.padEnd(32)} ${String(Object.keys(files).length).padStart(6)} files  cpu ${Math.round(t.cpuMs)} ms  wall ${Math.round(t.wallMs)} ms`,
  );
}
const scale: Timed[] = [];
if (values.scale) {
  for (const size of [1_000, 20_000]) {
    const files = generatedRepository(size);
    const t = await timePlan(files, SCALE_TASK);
    scale.push({
      id: `generated ${size.toLocaleString("en-US")}`,
      files: Object.keys(files).length,
      ...t,
    });
    console.error(
      `generated ${size} files  cpu ${Math.round(t.cpuMs)} ms  wall ${Math.round(t.wallMs)} ms`,
    );
  }
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const ms = (n: number) => (Number.isNaN(n) ? "—" : `${Math.round(n).toLocaleString("en-US")} ms`);
const row = (name: string, rows: Timed[]) =>
  `| ${name} | ${rows.length} | ${ms(median(rows.map((r) => r.cpuMs)))} | ${ms(
    quantile(
      rows.map((r) => r.cpuMs),
      0.95,
    ),
  )} | ${ms(Math.max(...rows.map((r) => r.cpuMs)))} | ${ms(median(rows.map((r) => r.wallMs)))} |`;
const largest = [...timed].sort((a, b) => b.files - a.files).slice(0, 5);
const report = [
  `- **Run:** ${new Date(began).toISOString()}, ${((Date.now() - began) / 60_000).toFixed(1)} min; planner from \`${src}\`; split ${values.split}`,
  `- **Command:** \`npx tsx test/bench/planner/plan-time.ts ${process.argv.slice(2).join(" ")}\``,
  `- **Machine:** \`nproc\` ${cpus().length}; load average at start ${startLoad.join(", ")}, at end ${loadavg()
    .map((n) => n.toFixed(2))
    .join(", ")}`,
  "",
  "| trees | n | CPU median | CPU p95 | CPU max | wall median |",
  "|---|---|---|---|---|---|",
  row(
    "< 3,000 files",
    timed.filter((r) => r.files < 3_000),
  ),
  row(
    "≥ 3,000 files",
    timed.filter((r) => r.files >= 3_000),
  ),
  row("all", timed),
  ...scale.map((r) => row(`${r.id} (${r.files.toLocaleString("en-US")} files)`, [r])),
  "",
  `Largest trees: ${largest.map((r) => `${r.id} (${r.files.toLocaleString("en-US")} files) ${ms(r.cpuMs)} CPU`).join("; ")}.`,
].join("\n");
console.log(report);
if (values.out !== undefined) writeFileSync(values.out, `${report}\n`);

/** Plans once, until the session waits; this process's CPU time and the wall time it took. */
async function timePlan(
  files: Record<string, string>,
  prompt: string,
): Promise<{ cpuMs: number; wallMs: number }> {
  // The session double's set-up (it encodes every file) is not the planner's time.
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt } });
  const planner = offlinePlanner();
  const cpu = process.cpuUsage();
  const wall = performance.now();
  for (let i = 0; i < 60; i++) {
    const result = await step(port, {}, { planner });
    if (result.next !== "continue") break;
  }
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - wall };
}

/** The task's parent tree as path → text, from the cache or the mirror. */
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
