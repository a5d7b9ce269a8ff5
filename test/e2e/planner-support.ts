import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../local-client/http/api.ts";
import { buildSnapshot } from "../../local-client/snapshot/build.ts";
import type { Session } from "../../src/protocol/index.ts";
import { ApiClient } from "../support/api-client.ts";

/**
 * Shared by the planner end-to-end tests: the worker under `wrangler dev` (through
 * worker-process.ts), the real client's snapshot upload, and small git helpers.
 */

const SETTLE_PROBE_MS = 100;

export interface PlanportWorker {
  worker: WorkerProcess;
  /** The test API client (raw responses, status checks). */
  api: ApiClient;
  /** The local client's own API (what the CLI uses). */
  client: Api;
  auth: { token: string };
  /** Stops the worker and removes its persist directory. */
  close(): Promise<void>;
}

/**
 * Starts the worker in `wrangler dev` with one token and the given vars.
 *
 * @example
 * const pp = await startPlanportWorker({ PLANPORT_ALLOW_SCRIPTED: "true" });
 * await pp.close();
 */
export async function startPlanportWorker(vars: Record<string, string>): Promise<PlanportWorker> {
  const token = `e2e-${crypto.randomUUID()}`;
  const persistDir = mkdtempSync(join(tmpdir(), "planport-e2e-planner-"));
  const worker = await startWorkerProcess({
    persistDir,
    vars: { PLANPORT_TOKENS: token, ...vars },
  });
  return {
    worker,
    api: new ApiClient((request) => fetch(request), worker.url),
    client: createApi({ server: worker.url, token }),
    auth: { token },
    async close() {
      await worker.stop();
      rmSync(persistDir, { recursive: true, force: true });
    },
  };
}

/** Snapshots `root` with the real client code and uploads it when the server lacks it. */
export async function uploadRepository(
  client: Api,
  root: string,
): Promise<{ id: string; files: number }> {
  const snapshot = await buildSnapshot(root);
  if (!(await client.snapshotExists(snapshot.id))) await client.uploadSnapshot(snapshot.bytes);
  return { id: snapshot.id, files: snapshot.files };
}

/** Waits until the session's loop stopped (waiting for the user, idle, or ended). */
export async function settled(
  pp: Pick<PlanportWorker, "api" | "auth">,
  id: string,
  timeoutMs = 60_000,
): Promise<Session> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const session = await pp.api.getSession(pp.auth, id);
    if (session.status !== "running") return session;
    if (Date.now() > deadline)
      throw new Error(`session ${id} was still ${session.phase} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PROBE_MS));
  }
}

/** Runs git in `cwd` and returns its stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "planport e2e",
      GIT_AUTHOR_EMAIL: "e2e@planport.invalid",
      GIT_COMMITTER_NAME: "planport e2e",
      GIT_COMMITTER_EMAIL: "e2e@planport.invalid",
    },
  });
}

/** A committed git repository holding exactly `files` (path → content, written byte for byte). */
export function gitRepository(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "planport-e2e-repo-"));
  writeFiles(root, files);
  git(root, "init", "--quiet", "--initial-branch=main");
  git(root, "config", "core.autocrlf", "false");
  git(root, "add", "--all");
  git(root, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", "original tree");
  return root;
}

/** Writes `files` under `root`, creating folders. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}
