/**
 * Benchmark of the offline planner: time, CPU and memory to plan a task on a generated
 * 5,000-file repository and on this repository (planport itself) — in the real worker under
 * `wrangler dev`, and, as the baseline, the same engine in Node over the in-memory port.
 *
 *   npx tsx test/bench/offline-planner.ts                 # prints the table
 *   npx tsx test/bench/offline-planner.ts --files 20000
 *   import { benchOfflinePlanner } from "./offline-planner.ts"; await benchOfflinePlanner();
 *
 * Worker numbers: the client code snapshots and uploads the repository, a session is created
 * with the offline planner, and the time to `plan_ready` is read off the session's own event
 * times (system/init → the turn's result). The runtime hosting the worker is the workerd child
 * of wrangler that has an inspector address; its CPU time (/proc utime+stime) and resident
 * memory (VmRSS, and VmHWM reset before each run, i.e. the peak) are sampled around the run,
 * and the isolate's JS heap — what the Workers 128 MB memory limit is about — through the V8
 * inspector (Node 20 needs `--experimental-websocket`; the standalone run adds it itself).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PACKAGE_ROOT } from "../../local-client/embedded/worker-process.ts";
import { buildSnapshot } from "../../local-client/snapshot/build.ts";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { writeFiles } from "../e2e/planner-support.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { generatedRepository } from "../worker/planner/generated-repo.ts";
import {
  HEAP_PROBE_MS,
  inFreshWorker,
  measureInWorker,
  type Probe,
  STATUS_PROBE_MS,
  type WorkerRun,
} from "./offline-planner-worker.ts";

export interface BenchRow {
  name: string;
  /** planport's measurement. */
  value: number;
  /** The reference measurement, same unit. */
  baseline?: number;
  /** value / baseline, or value / target where there is no baseline. */
  ratio?: number;
  /** The limit or goal to stay under. */
  target?: number;
  note?: string;
}

/** The Workers memory limit per isolate (Cloudflare Workers limits), in MiB. */
export const WORKERS_MEMORY_LIMIT_MIB = 128;
const DEFAULT_FILES = 5_000;
const DEFAULT_RUNS = 3;
const MIB = 1024 * 1024;

const GENERATED_TASK = "Add GitHub OAuth login that reuses the existing session";
const THIS_REPO_TASK = "Add rate limiting to the events feed";

/**
 * Runs both measurements for both repositories and returns the table rows.
 *
 * @example
 * const rows = await benchOfflinePlanner({ runs: 1 });
 * console.table(rows);
 */
export async function benchOfflinePlanner(
  options: { files?: number; runs?: number } = {},
): Promise<BenchRow[]> {
  const count = options.files ?? DEFAULT_FILES;
  const runs = options.runs ?? DEFAULT_RUNS;
  const generated = generatedRepository(count);
  const generatedRoot = mkdtempSync(join(tmpdir(), "planport-bench-offline-"));
  writeFiles(generatedRoot, generated);
  const subjects = [
    {
      label: `generated ${count.toLocaleString("en-US")}-file repository`,
      root: generatedRoot,
      files: generated,
      task: GENERATED_TASK,
    },
    {
      label: "this repository (planport)",
      root: PACKAGE_ROOT,
      files: thisRepository(),
      task: THIS_REPO_TASK,
    },
  ];
  const rows: BenchRow[] = [];
  try {
    for (const subject of subjects) {
      const node = await measureInNode(subject.files, subject.task);
      rows.push(...(await inFreshWorker((worker) => measureSubject(worker, subject, node, runs))));
    }
    return rows;
  } finally {
    rmSync(generatedRoot, { recursive: true, force: true });
  }
}

async function measureSubject(
  probe: Probe,
  subject: { label: string; root: string; task: string },
  node: InNode,
  runs: number,
): Promise<BenchRow[]> {
  const snapshot = await buildSnapshot(subject.root);
  const uploadStart = performance.now();
  if (!(await probe.api.snapshotExists(snapshot.id)))
    await probe.api.uploadSnapshot(snapshot.bytes);
  const uploadMs = performance.now() - uploadStart;
  const measured: WorkerRun[] = [];
  for (let run = 0; run < runs; run++)
    measured.push(await measureInWorker(probe, snapshot.id, subject.task));
  return rowsFor(subject.label, {
    node,
    runs: measured,
    snapshotMiB: snapshot.bytes.byteLength / MIB,
    files: snapshot.files,
    uploadMs,
  });
}

interface InNode {
  wallMs: number;
  cpuMs: number;
  planningHeapMiB: number;
  outcome: string;
}

/** The same engine in Node over the in-memory port (the snapshot is held in memory). */
async function measureInNode(files: Record<string, string>, task: string): Promise<InNode> {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt: task } });
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const planner = offlinePlanner();
  const cpu = process.cpuUsage();
  const start = performance.now();
  let outcome = "";
  for (let steps = 0; steps < 100; steps++) {
    const result = await step(port, {}, { planner });
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    if (result.next !== "continue") {
      outcome = port.pendingWait()?.kind ?? result.next;
      break;
    }
  }
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return {
    wallMs,
    cpuMs: (used.user + used.system) / 1000,
    planningHeapMiB: (peak - baseline) / MIB,
    outcome,
  };
}

function rowsFor(
  label: string,
  m: { node: InNode; runs: WorkerRun[]; snapshotMiB: number; files: number; uploadMs: number },
): BenchRow[] {
  const { node, runs } = m;
  const phases = [...new Set(runs.map((r) => r.phase))].join("/");
  const heapPeak = maxOf(runs.map((r) => r.heapPeak));
  const heapBefore = maxOf(runs.map((r) => r.heapBefore));
  const heapTotal = maxOf(runs.map((r) => r.heapTotalPeak));
  const heapTotalBefore = maxOf(runs.map((r) => r.heapTotalBefore));
  const rssPeak = Math.max(...runs.map((r) => r.rssPeak));
  const what = `${label} (${m.files.toLocaleString("en-US")} files, ${round(m.snapshotMiB)} MiB tar.gz)`;
  const n = `median of ${runs.length}`;
  const rows: BenchRow[] = [
    {
      name: `${what}: time to plan_ready in wrangler dev (ms, ${n}; baseline: same engine in Node)`,
      value: round(median(runs.map((r) => r.serverMs))),
      baseline: round(node.wallMs),
      ratio: round2(median(runs.map((r) => r.serverMs)) / node.wallMs),
      note: `outcome ${phases} (Node: ${node.outcome}); seen by the client ${round(median(runs.map((r) => r.clientMs)))} ms (${STATUS_PROBE_MS} ms polling); upload ${round(m.uploadMs)} ms`,
    },
    {
      name: `${what}: workerd CPU while planning (ms, ${n}; baseline: Node CPU)`,
      value: round(median(runs.map((r) => r.cpuMs))),
      baseline: round(node.cpuMs),
      ratio: round2(median(runs.map((r) => r.cpuMs)) / node.cpuMs),
      note: `runtime hosting the worker; the proxy runtime used ${round(median(runs.map((r) => r.proxyCpuMs)))} ms more (status polls)`,
    },
  ];
  if (heapPeak !== null && heapTotal !== null) {
    // V8 only answers the inspector between the isolate's tasks, so the sampled live heap can
    // miss a peak inside a step; the heap V8 had committed cannot, so it is the reported value.
    rows.push({
      name: `${what}: isolate JS heap committed, peak while planning (MiB; Workers limit ${WORKERS_MEMORY_LIMIT_MIB} MB)`,
      value: round(heapTotal),
      target: WORKERS_MEMORY_LIMIT_MIB,
      ratio: round2(heapTotal / WORKERS_MEMORY_LIMIT_MIB),
      note: `via the V8 inspector every ${HEAP_PROBE_MS} ms: committed ${round(heapTotalBefore ?? 0)} MiB before the run; live objects ${round(heapBefore ?? 0)} MiB before, ${round(heapPeak)} MiB at the highest sample. Node's planning heap beyond the loaded snapshot: ${round(node.planningHeapMiB)} MiB`,
    });
  }
  rows.push({
    name: `${what}: workerd resident memory peak while planning (MiB, whole process)`,
    value: round(rssPeak),
    note: `before ${round(median(runs.map((r) => r.rssBefore)))}, after ${round(median(runs.map((r) => r.rssAfter)))} MiB; the whole local runtime (both isolates, SQLite, R2 files cache), an upper bound — not the per-isolate limit`,
  });
  return rows;
}

/** This repository as git sees it (tracked and untracked-but-not-ignored text files). */
function thisRepository(): Record<string, string> {
  const listed = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
  });
  const files: Record<string, string> = {};
  for (const path of listed.split("\n").filter(Boolean)) {
    try {
      const full = join(PACKAGE_ROOT, path);
      if (statSync(full).size > MIB) continue;
      const text = readFileSync(full, "utf8");
      if (!text.includes("\u0000")) files[path] = text;
    } catch {
      // deleted since listing
    }
  }
  return files;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function maxOf(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.max(...known);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const hasWebSocket = (globalThis as { WebSocket?: unknown }).WebSocket !== undefined;
  if (!hasWebSocket && process.env.PLANPORT_BENCH_REEXEC !== "1") {
    // Node 20 keeps its WebSocket client behind a flag (the isolate heap needs it); gc steadies
    // the Node heap baseline.
    const child = spawnSync(
      process.execPath,
      [
        "--experimental-websocket",
        "--expose-gc",
        "--import",
        "tsx",
        fileURLToPath(import.meta.url),
        ...process.argv.slice(2),
      ],
      { stdio: "inherit", env: { ...process.env, PLANPORT_BENCH_REEXEC: "1" } },
    );
    process.exit(child.status ?? 1);
  }
  const filesArg = process.argv.indexOf("--files");
  const runsArg = process.argv.indexOf("--runs");
  const rows = await benchOfflinePlanner({
    files: filesArg === -1 ? undefined : Number(process.argv[filesArg + 1]),
    runs: runsArg === -1 ? undefined : Number(process.argv[runsArg + 1]),
  });
  console.table(rows.map(({ note: _, ...row }) => row));
  rows.forEach((row, i) => {
    if (row.note) console.log(`[${i}] ${row.note}`);
  });
}
