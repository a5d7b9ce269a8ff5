import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../local-client/http/api.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";

/**
 * The set-up most end-to-end suites share: one real `wrangler dev` with the offline planner and
 * one token, in a persist folder of its own, started before the file's tests and stopped (its
 * folder removed) after them; the client's API for that token; and a fixture repository.
 *
 * @example
 * const suite = offlineWorkerSuite("e2e-cli-token", "planport-e2e-cli-");
 * it("…", async () => { await waitForPlan(suite.api, id); runCli(["plan", "--repo", suite.repo]) });
 */
export interface OfflineWorkerSuite {
  readonly worker: WorkerProcess;
  readonly api: Api;
  readonly repo: string;
}

export function offlineWorkerSuite(
  token: string,
  persistPrefix: string,
  /** More of the worker's variables (`PLANPORT_ALLOW_SCRIPTED`…). */
  vars: Record<string, string> = {},
): OfflineWorkerSuite {
  const persist = mkdtempSync(join(tmpdir(), persistPrefix));
  let started: OfflineWorkerSuite | null = null;
  beforeAll(async () => {
    const worker = await startWorkerProcess({
      persistDir: persist,
      vars: { PLANPORT_TOKENS: token, PLANPORT_PLANNER: "offline", ...vars },
    });
    started = { worker, api: createApi({ server: worker.url, token }), repo: fixtureRepo() };
  }, 120_000);
  afterAll(async () => {
    await started?.worker.stop();
    rmSync(persist, { recursive: true, force: true });
  });
  const get = (): OfflineWorkerSuite => {
    if (started === null)
      throw new Error("the suite's worker is not started (use it inside a test)");
    return started;
  };
  return {
    get worker() {
      return get().worker;
    },
    get api() {
      return get().api;
    },
    get repo() {
      return get().repo;
    },
  };
}
