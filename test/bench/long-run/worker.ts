import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../../local-client/http/api.ts";
import { buildSnapshot } from "../../../local-client/snapshot/build.ts";
import { collectRepository, uploadRepository } from "../../../local-client/snapshot/upload.ts";
import { filesNamedByPlan } from "../planner/plan-files.ts";
import { planOnce } from "../planner/plan-session.ts";
import { cpuMs, workerdProcesses } from "../worker-probe.ts";

/**
 * One `wrangler dev` as the long-run benchmark drives it: the offline planner, one token, no
 * rate limits; a tree uploaded the way a path uploads it; a plan timed by the server (session
 * created → plan pending) and by the CPU the hosting workerd spent on it.
 */

export type UploadPath = "incremental" | "tarball";

export const TOKEN = "long-run-token";
const PLAN_TIMEOUT_MS = 300_000;

export interface BenchWorker {
  readonly process: WorkerProcess;
  readonly api: Api;
  readonly who: { server: string; token: string };
  /** The workerd that hosts the worker (its CPU time is the plan's cost). */
  readonly hostPid: number;
  stop(): Promise<void>;
}

export async function startLongRunWorker(
  persistDir: string,
  vars: Record<string, string> = {},
): Promise<BenchWorker> {
  const process = await startWorkerProcess({
    persistDir,
    vars: {
      PLANPORT_TOKENS: TOKEN,
      PLANPORT_PLANNER: "offline",
      PLANPORT_RATE_LIMITS: "off",
      ...vars,
    },
  });
  const host = workerdProcesses(process.pid).find((p) => p.hostsWorker);
  if (host === undefined) {
    await process.stop();
    throw new Error("no workerd hosting the worker");
  }
  const who = { server: process.url, token: TOKEN };
  return { process, api: createApi(who), who, hostPid: host.pid, stop: () => process.stop() };
}

/**
 * Uploads the tree at `root` as `path` does and answers the snapshot id: the CLI's incremental
 * upload (its state folder `clientState` remembers the base), or the whole tar.gz after a HEAD.
 */
export async function uploadTree(
  worker: BenchWorker,
  path: UploadPath,
  root: string,
  clientState: string,
): Promise<string> {
  if (path === "tarball") {
    const build = await buildSnapshot(root);
    if (!(await worker.api.snapshotExists(build.id))) await worker.api.uploadSnapshot(build.bytes);
    return build.id;
  }
  const env = { ...process.env, XDG_DATA_HOME: clientState };
  const tree = await collectRepository(root, { env });
  return (await uploadRepository(worker.api, worker.who, tree, { env })).id;
}

export interface Planned {
  ok: boolean;
  /** Session created → plan (or question) pending, by the server's clock. */
  planMs: number;
  /** CPU of the hosting workerd from the create request to the archive. */
  cpuMs: number;
  /** The repository files the plan names, in order (empty for a question or a failure). */
  named: string[];
  /** Why it failed, when it did. */
  failure: string | null;
}

/** Plans `task` on the snapshot; the session is archived after it (planOnce). */
export async function planAndArchive(
  worker: BenchWorker,
  snapshotId: string,
  task: string,
  files: ReadonlySet<string>,
): Promise<Planned> {
  const before = cpuMs(worker.hostPid);
  const outcome = await planOnce(worker.api, snapshotId, task, PLAN_TIMEOUT_MS);
  const cpu = cpuMs(worker.hostPid) - before;
  if (outcome.kind === "failure") {
    return { ok: false, planMs: Number.NaN, cpuMs: cpu, named: [], failure: outcome.reason };
  }
  const named = outcome.kind === "plan" ? filesNamedByPlan(outcome.text, files) : [];
  return {
    ok: true,
    planMs: outcome.serverMs,
    cpuMs: cpu,
    named: named.map((n) => n.path),
    failure: null,
  };
}
