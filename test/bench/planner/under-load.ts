import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startWorkerProcess } from "../../../local-client/embedded/worker-process.ts";
import { createApi } from "../../../local-client/http/api.ts";
import type { Event } from "../../../src/protocol/index.ts";
import { ISSUE_TASKS_FILE, type IssueTaskFile, readIssuePrompts } from "./issues/build.ts";
import { requireMirror } from "./mirrors.ts";
import { materialiseTree, snapshotTree } from "./parent-tree.ts";
import { type PlanOutcome, planOnce } from "./plan-session.ts";

/**
 * The same plan, whatever the load (issue 31): each task planned in N fresh workers, one after
 * another, each worker started for that one plan and stopped after it, while `--burners` CPU
 * burners (busy loops, one process each) run beside them — the issue's "11 fresh workers next
 * to two CPU burners". Counts the plans that differ by a byte from the first run's and, when one
 * does, names the first tool result that differed between the two sessions' event logs (the
 * planner reads nothing else, so that is where the machine's speed got in).
 *
 *   npx tsx test/bench/planner/under-load.ts --mirrors DIR                  # default tasks, 11 runs
 *   npx tsx test/bench/planner/under-load.ts --mirrors DIR --task nlohmann__json-1303 --runs 15
 *   npx tsx test/bench/planner/under-load.ts --mirrors DIR --burners 0      # the quiet control
 *
 * Tasks are issue tasks (issues/tasks.json ids, `--task a,b`); the tree is the task's parent
 * commit from the mirror, snapshotted once and uploaded to each fresh worker. `--runtime built`
 * (default) runs the embedded worker's bundle (rebuilt first when stale), `wrangler` runs
 * `wrangler dev` on the sources. `--save DIR` keeps every plan and event log.
 */

const DEFAULT_TASKS = ["alibaba__fastjson2-2559", "simdjson__simdjson-958", "tokio-rs__tokio-6409"];
const TOKEN = "bench-under-load";
const PLAN_TIMEOUT_MS = 600_000;

const { values } = parseArgs({
  options: {
    mirrors: { type: "string", default: process.env.PLANPORT_BENCH_MIRRORS },
    task: { type: "string" },
    runs: { type: "string", default: "11" },
    burners: { type: "string", default: "2" },
    runtime: { type: "string", default: "built" },
    save: { type: "string" },
    out: { type: "string" },
  },
});
if (values.mirrors === undefined) {
  console.error("usage: under-load.ts --mirrors DIR [--task ID[,ID]] [--runs 11] [--burners 2]");
  process.exit(2);
}
const mirrors = values.mirrors;
const runs = Number(values.runs);
const burnerCount = Number(values.burners);
const runtime = values.runtime === "wrangler" ? "wrangler" : "built";
const wanted = values.task?.split(",").map((s) => s.trim()) ?? DEFAULT_TASKS;
const all = (JSON.parse(readFileSync(ISSUE_TASKS_FILE, "utf8")) as IssueTaskFile).tasks;
const tasks = wanted.map((id) => {
  const task = all.find((t) => t.id === id);
  if (task === undefined) {
    console.error(`no issue task ${id} in ${ISSUE_TASKS_FILE}`);
    process.exit(2);
  }
  return task;
});
const prompts = await readIssuePrompts(mirrors, tasks);
if (runtime === "built") execFileSync("npx", ["tsx", "scripts/build.ts", "--if-stale"]);

/** Busy loops beside the workers, stopped (by their own pids) when the run ends. */
const burners: ChildProcess[] = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
);
const stopBurners = () => {
  for (const b of burners) b.kill("SIGKILL");
};
process.once("exit", stopBurners);
process.once("SIGINT", () => process.exit(130));

interface Run {
  hash: string;
  outcome: PlanOutcome["kind"];
  serverMs: number;
  events: Event[];
  text: string;
}

const began = Date.now();
const startLoad = loadavg().map((n) => n.toFixed(2));
const rows: string[] = [];
let differing = 0;
try {
  for (const task of tasks) {
    const gitDir = await requireMirror(mirrors, task.repo, false);
    const tree = await materialiseTree(gitDir, task.parent);
    try {
      const snapshot = await snapshotTree(tree.root);
      const done: Run[] = [];
      for (let i = 0; i < runs; i++) {
        const run = await planOnFreshWorker(snapshot.build.bytes, snapshot.build.id, task.id, i);
        done.push(run);
        const same = run.hash === done[0]!.hash;
        console.error(
          `${task.id} run ${i + 1}/${runs}: ${run.outcome} ${run.hash} in ${Math.round(run.serverMs)} ms${same ? "" : ` DIFFERS: ${firstDifference(done[0]!.events, run.events)}`}`,
        );
        if (values.save !== undefined) {
          mkdirSync(values.save, { recursive: true });
          writeFileSync(join(values.save, `${task.id}.${i + 1}.md`), run.text);
          writeFileSync(
            join(values.save, `${task.id}.${i + 1}.events.json`),
            JSON.stringify(run.events),
          );
        }
      }
      const counts = new Map<string, number>();
      for (const r of done) counts.set(r.hash, (counts.get(r.hash) ?? 0) + 1);
      const other = done.filter((r) => r.hash !== done[0]!.hash).length;
      differing += other;
      const ms = done.map((r) => r.serverMs).sort((a, b) => a - b);
      rows.push(
        `| ${task.id} | ${snapshot.files.size.toLocaleString("en-US")} | ${runs} | ${counts.size} | ${other} | ${Math.round(ms[0]!)}–${Math.round(ms.at(-1)!)} ms |`,
      );
    } finally {
      tree.remove();
    }
  }
} finally {
  stopBurners();
}

const report = [
  `- **Run:** ${new Date(began).toISOString()}, ${((Date.now() - began) / 60_000).toFixed(1)} min; ${runs} fresh workers (${runtime}) per task, ${burnerCount} CPU burner${burnerCount === 1 ? "" : "s"} beside them`,
  `- **Command:** \`npx tsx test/bench/planner/under-load.ts ${process.argv.slice(2).join(" ")}\``,
  `- **Machine:** \`nproc\` ${cpus().length}; load average at start ${startLoad.join(", ")}, at end ${loadavg()
    .map((n) => n.toFixed(2))
    .join(", ")}`,
  "",
  "| task | files | runs | distinct plans | plans differing from run 1 | plan time (server) |",
  "|---|---|---|---|---|---|",
  ...rows,
  "",
  `Plans differing from their task's first run: **${differing}** of ${runs * tasks.length}.`,
].join("\n");
console.log(report);
if (values.out !== undefined) writeFileSync(values.out, `${report}\n`);

/** Starts a worker on a new state folder, uploads the tree, plans once, stops the worker. */
async function planOnFreshWorker(
  bytes: Uint8Array,
  snapshotId: string,
  taskId: string,
  index: number,
): Promise<Run> {
  const persistDir = mkdtempSync(join(tmpdir(), "planport-under-load-"));
  const worker = await startWorkerProcess({
    persistDir,
    runtime,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: "off" },
  });
  try {
    const api = createApi({ server: worker.url, token: TOKEN });
    await api.uploadSnapshot(bytes);
    const outcome = await planOnce(api, snapshotId, prompts.get(taskId)!, PLAN_TIMEOUT_MS);
    if (outcome.kind === "failure") throw new Error(`run ${index + 1}: ${outcome.reason}`);
    const events = await allEvents(api, outcome.sessionId);
    const text = `${outcome.kind}\n${outcome.text}`;
    return {
      hash: createHash("sha256").update(text).digest("hex").slice(0, 12),
      outcome: outcome.kind,
      serverMs: outcome.serverMs,
      events,
      text,
    };
  } finally {
    await worker.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
}

async function allEvents(api: ReturnType<typeof createApi>, id: string): Promise<Event[]> {
  const events: Event[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await api.events(id, { afterId: after, limit: 1000 });
    events.push(...page.data);
    if (!page.has_more || page.data.length === 0) return events;
    after = page.data.at(-1)!.id;
  }
}

/** The first tool call whose result differs between two sessions (by tool_use_id). */
function firstDifference(a: readonly Event[], b: readonly Event[]): string {
  const results = (events: readonly Event[]) => {
    const out = new Map<string, string>();
    for (const e of events) {
      if (e.type !== "user" || typeof e.message.content === "string") continue;
      for (const block of e.message.content)
        if (block.type === "tool_result") out.set(block.tool_use_id, JSON.stringify(block.content));
    }
    return out;
  };
  const ra = results(a);
  const rb = results(b);
  for (const [id, text] of ra) {
    const other = rb.get(id);
    if (other === undefined) return `${id} has no result in this run`;
    if (other !== text) return `${id}: ${text.length} → ${other.length} characters`;
  }
  for (const id of rb.keys()) if (!ra.has(id)) return `${id} was not called in run 1`;
  return "every tool result the same (the difference is after the tools)";
}
