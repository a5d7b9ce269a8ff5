import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startWorkerProcess } from "../../local-client/embedded/worker-process.ts";
import { createApi } from "../../local-client/http/api.ts";
import {
  connectInspector,
  cpuMs,
  type IsolateInspector,
  resetPeakRss,
  rssMiB,
  workerdProcesses,
} from "./worker-probe.ts";

/**
 * One offline planning run in the real worker, measured from outside: a fresh `wrangler dev`,
 * the session created over HTTP, and the runtime's CPU, resident memory and isolate heap
 * sampled around it (worker-probe.ts). Used by offline-planner.ts.
 */

export const STATUS_PROBE_MS = 100;
export const HEAP_PROBE_MS = 20;
const TOKEN = "bench-offline-planner";

/** One planning run, measured in the worker. */
export interface WorkerRun {
  serverMs: number;
  clientMs: number;
  cpuMs: number;
  proxyCpuMs: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
  heapBefore: number | null;
  heapTotalBefore: number | null;
  heapPeak: number | null;
  heapTotalPeak: number | null;
  phase: string;
}

/** The running worker as a measurement sees it: its API, its two runtimes, its isolate. */
export interface Probe {
  api: ReturnType<typeof createApi>;
  host: number;
  proxy: number | null;
  inspector: IsolateInspector | null;
}

/**
 * Runs `fn` against a fresh `wrangler dev` (its own persist dir), so each subject starts clean.
 *
 * @example
 * const run = await inFreshWorker((probe) => measureInWorker(probe, snapshotId, "Add OAuth"));
 */
export async function inFreshWorker<T>(fn: (probe: Probe) => Promise<T>): Promise<T> {
  const persistDir = mkdtempSync(join(tmpdir(), "planport-bench-offline-persist-"));
  const worker = await startWorkerProcess({
    persistDir,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" },
  });
  let inspector: IsolateInspector | null = null;
  try {
    inspector = await connectInspector(worker.pid);
    const runtimes = workerdProcesses(worker.pid);
    const host = runtimes.find((p) => p.hostsWorker);
    if (host === undefined) throw new Error("no workerd runtime found under wrangler dev");
    return await fn({
      api: createApi({ server: worker.url, token: TOKEN }),
      host: host.pid,
      proxy: runtimes.find((p) => !p.hostsWorker)?.pid ?? null,
      inspector,
    });
  } finally {
    inspector?.close();
    await worker.stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
}

/**
 * Creates an offline session on an uploaded snapshot and measures it until the loop stops
 * (plan_ready), then archives it.
 *
 * @example
 * const run = await measureInWorker(probe, snapshot.id, "Add rate limiting to the events feed");
 */
export async function measureInWorker(
  probe: Probe,
  snapshotId: string,
  task: string,
): Promise<WorkerRun> {
  const { api } = probe;
  const heapBefore = (await probe.inspector?.heap()) ?? null;
  resetPeakRss(probe.host);
  const rssBefore = rssMiB(probe.host).now;
  const cpuBefore = cpuMs(probe.host);
  const proxyBefore = probe.proxy === null ? 0 : cpuMs(probe.proxy);
  const started = performance.now();

  const session = await api.createSession({ prompt: task, snapshot_id: snapshotId });
  let done = false;
  let heapPeak = heapBefore?.used ?? null;
  let heapTotalPeak = heapBefore?.total ?? null;
  const sampling = (async () => {
    while (!done && probe.inspector !== null) {
      const heap = await probe.inspector.heap();
      heapPeak = Math.max(heapPeak ?? 0, heap.used);
      heapTotalPeak = Math.max(heapTotalPeak ?? 0, heap.total);
      await sleep(HEAP_PROBE_MS);
    }
  })();
  let current = session;
  while (current.status === "running") {
    await sleep(STATUS_PROBE_MS);
    current = await api.getSession(session.id);
  }
  const clientMs = performance.now() - started;
  done = true;
  await sampling;

  const cpu = cpuMs(probe.host) - cpuBefore;
  const proxyCpuMs = probe.proxy === null ? 0 : cpuMs(probe.proxy) - proxyBefore;
  const rss = rssMiB(probe.host);
  const events = (await api.events(session.id, { limit: 1000 })).data;
  const firstAt = Date.parse(events[0]!.created_at);
  const lastAt = Date.parse(events.at(-1)!.created_at);
  await api.archive(session.id);
  return {
    serverMs: lastAt - firstAt,
    clientMs,
    cpuMs: cpu,
    proxyCpuMs,
    rssBefore,
    rssPeak: rss.peak,
    rssAfter: rss.now,
    heapBefore: heapBefore?.used ?? null,
    heapTotalBefore: heapBefore?.total ?? null,
    heapPeak,
    heapTotalPeak,
    phase: current.phase,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
