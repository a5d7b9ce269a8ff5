import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startWorkerProcess } from "../../local-client/embedded/worker-process.ts";
import { connectInspector, rssMiB, workerdProcesses } from "./worker-probe.ts";

/**
 * Where does the local runtime's memory go when many sessions are created? (issue 10 "also
 * found", issue 16 item 4.) Three phases against one `wrangler dev`, each of N requests:
 *
 * 1. `touch`: N requests that each wake a Durable Object that holds nothing (an unknown session
 *    id: the object answers 404 after one SQLite schema probe). planport code keeps nothing.
 * 2. `create`: N real sessions (offline planner, no snapshot: it asks one clarifying question
 *    and goes quiet).
 * 3. `idle`: nothing for a while, to see whether the runtime gives memory back;
 * then all three again, to see whether the memory of evicted objects is reused (a plateau) or
 * keeps growing (a leak).
 *
 * It prints the hosting workerd's RSS and the isolate's JS heap after each phase. If RSS grows
 * per object in phase 1 as much as in phase 2, the memory is the runtime's (live Durable Object
 * instances and their SQLite databases), not planport's.
 *
 * Run: `node --experimental-websocket --import tsx test/bench/session-memory.ts [N]`
 */

const N = Number(process.argv[2] ?? 1200);
const TOKEN = "memory-token";
const CONCURRENCY = 20;
const IDLE_MS = 120_000;

async function main(): Promise<void> {
  const persist = mkdtempSync(join(tmpdir(), "planport-memory-"));
  const worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_RATE_LIMITS: "off" },
  });
  const host = workerdProcesses(worker.pid).find((p) => p.hostsWorker);
  if (!host) throw new Error("no workerd hosting the worker");
  const inspector = await connectInspector(worker.pid);
  const rows: string[] = [];
  const measure = async (phase: string) => {
    const heap = await inspector?.heap();
    const rss = rssMiB(host.pid).now;
    rows.push(
      `| ${phase} | ${rss.toFixed(0)} | ${heap ? heap.used.toFixed(1) : "n/a"} | ${heap ? heap.total.toFixed(1) : "n/a"} |`,
    );
    console.error(rows.at(-1));
  };
  const auth = { authorization: `Bearer ${TOKEN}` };
  const inParallel = async (job: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < N) await job(next++);
      }),
    );
  };
  try {
    await sleep(2_000);
    await measure("start");
    const touch = (round: number) =>
      inParallel(async (i) => {
        const id = `ses_${"0".repeat(9)}${round}${i.toString(36).padStart(16, "0")}`;
        const res = await fetch(`${worker.url}/v1/sessions/${id}`, { headers: auth });
        await res.body?.cancel();
        if (res.status !== 404) throw new Error(`touch ${id}: ${res.status}`);
      });
    const create = () =>
      inParallel(async () => {
        const res = await fetch(`${worker.url}/v1/sessions`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ prompt: "Which database does this use?" }),
        });
        await res.body?.cancel();
        if (res.status !== 201) throw new Error(`create: ${res.status}`);
      });
    // Round 2 runs after the idle time in which the runtime evicts idle objects: if memory is
    // given back to the runtime's allocator, round 2 reuses it and RSS plateaus.
    for (const round of [1, 2]) {
      await touch(round);
      await measure(`round ${round}: touch ${N} empty objects`);
      await create();
      await measure(`round ${round}: create ${N} sessions`);
      await sleep(IDLE_MS);
      await measure(`round ${round}: idle ${IDLE_MS / 1000} s`);
    }
    console.log(`| phase | workerd RSS (MiB) | JS heap used (MiB) | JS heap total (MiB) |`);
    console.log(`|---|---|---|---|`);
    for (const row of rows) console.log(row);
  } finally {
    inspector?.close();
    await worker.stop();
    rmSync(persist, { recursive: true, force: true });
  }
}

await main();
