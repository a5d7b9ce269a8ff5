/**
 * Benchmark of the offline planner: time, CPU and memory to plan a task on a generated
 * 5,000-file repository and on this repository (planport itself).
 *
 *   npx tsx --expose-gc test/bench/offline-planner.ts            # both
 *   npx tsx --expose-gc test/bench/offline-planner.ts --files 20000
 *
 * It runs the real engine (`step` from src/planner/loop.ts, the real tools and permission
 * check) over the in-memory TEST DOUBLE of the session port, in Node. The Worker streams the
 * snapshot from R2 instead of holding it, so the number that approximates the Worker's memory
 * is the heap growth *beyond* the loaded snapshot ("planning heap"), printed separately.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { generatedRepository } from "../worker/planner/generated-repo.ts";

const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;

interface Measurement {
  label: string;
  files: number;
  snapshotMB: number;
  steps: number;
  modelCalls: number;
  events: number;
  eventLogMB: number;
  wallMs: number;
  cpuMs: number;
  planningHeapMB: number;
  planFiles: string[];
  outcome: string;
}

async function measure(
  label: string,
  files: Record<string, string>,
  task: string,
): Promise<Measurement> {
  gc?.();
  const snapshotBytes = Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0);
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt: task } });
  gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  const planner = offlinePlanner();
  const cpu = process.cpuUsage();
  const start = performance.now();
  let steps = 0;
  let outcome = "";
  for (; steps < 100; ) {
    steps++;
    const result = await step(port, {}, { planner });
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    if (result.next !== "continue") {
      outcome = `${result.next}${port.pendingWait() ? ` (${port.pendingWait()!.kind})` : ""}`;
      break;
    }
  }
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  clearInterval(sample);
  const events = port.listEvents();
  const plan = port.readPlan()?.content ?? "";
  const section = plan.slice(plan.indexOf("## Files to change"), plan.indexOf("## Steps"));
  return {
    label,
    files: Object.keys(files).length,
    snapshotMB: round(snapshotBytes / MB),
    steps,
    modelCalls: events.filter((e) => e.type === "assistant").length,
    events: events.length,
    eventLogMB: round(Buffer.byteLength(JSON.stringify(events)) / MB),
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((used.user + used.system) / 1000),
    planningHeapMB: round((peak - baseline) / MB),
    planFiles: [...section.matchAll(/^(?:\d+\.|-) `([^`]+)`/gm)].map((m) => m[1]!),
    outcome,
  };
}

/** This repository as git sees it (tracked and untracked-but-not-ignored text files). */
function thisRepository(): Record<string, string> {
  const root = join(import.meta.dirname, "..", "..");
  const listed = execFileSync("git", ["ls-files", "-co", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  });
  const files: Record<string, string> = {};
  for (const path of listed.split("\n").filter(Boolean)) {
    try {
      const full = join(root, path);
      if (statSync(full).size > 1_000_000) continue;
      const text = readFileSync(full, "utf8");
      if (!text.includes("\u0000")) files[path] = text;
    } catch {
      // deleted since listing
    }
  }
  return files;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

const countArg = process.argv.indexOf("--files");
const count = countArg === -1 ? 5_000 : Number(process.argv[countArg + 1]);
if (!gc) console.warn("(run with --expose-gc for steadier heap numbers)");
const results = [
  await measure(
    `generated ${count}-file repository`,
    generatedRepository(count),
    "Add GitHub OAuth login that reuses the existing session",
  ),
  await measure(
    "this repository (planport)",
    thisRepository(),
    "Add a retry budget to the poller so consecutive network failures back off",
  ),
];
for (const r of results) {
  console.log(`\n${r.label}: ${r.files} files, ${r.snapshotMB} MB`);
  console.log(
    `  outcome: ${r.outcome} after ${r.steps} steps, ${r.modelCalls} planner replies, ${r.events} events (${r.eventLogMB} MB of event log)`,
  );
  console.log(
    `  wall ${r.wallMs} ms, CPU ${r.cpuMs} ms, planning heap +${r.planningHeapMB} MB beyond the loaded snapshot`,
  );
  console.log(`  files in the plan: ${r.planFiles.join(", ")}`);
}
