/**
 * A crash rig for end-to-end fault tests (issue 6): `wrangler dev` on a persist directory, a
 * tap in front of it for the CLI, crash-and-restart on the same directory and port, and the
 * real CLI attached through the tap. Node only.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type CliRun, isolatedHome, startCli } from "../client/run-cli.ts";
import { ApiClient } from "./api-client.ts";
import { waitUntil } from "./faults.ts";
import { failedRequest, startTap, type Tap, type TappedRequest } from "./faults-node.ts";

export interface CrashTimes {
  /** When the SIGKILL was sent, when the process group was gone, when the new one answered. */
  killAt: number;
  killedAt: number;
  upAt: number;
}

export interface FaultRig {
  /** The worker now running (a new one after each restart, same port and directory). */
  readonly worker: WorkerProcess;
  readonly tap: Tap;
  /** The API straight to the worker (the test plays the browser); only the CLI uses the tap. */
  readonly api: ApiClient;
  /**
   * SIGKILLs the worker's process group and starts it again on the same directory and port.
   * With `outageSeenBy`, the restart waits until that session's attached CLI has had a poll
   * fail, so the outage is one the CLI certainly noticed (a restart can beat a poll interval).
   */
  crashAndRestart(outageSeenBy?: string): Promise<CrashTimes>;
  /** Runs `planport attach <id> --json` through the tap, with its own home. */
  attach(sessionId: string): CliRun;
  close(): Promise<void>;
}

/** Selects the CLI's polls of one session among the tap's requests. */
export function pollsOf(sessionId: string): (request: TappedRequest) => boolean {
  return (r) => r.method === "GET" && r.path.startsWith(`/v1/sessions/${sessionId}`);
}

/**
 * @example
 * const rig = await startFaultRig({ token: "t", vars: { PLANPORT_TOKENS: "t" }, pollInterval: "2s" });
 * const cli = rig.attach(sessionId);
 * await rig.crashAndRestart(sessionId);
 * await rig.close();
 */
export async function startFaultRig(opts: {
  token: string;
  vars: Record<string, string>;
  pollInterval: string;
}): Promise<FaultRig> {
  const persistDir = mkdtempSync(join(tmpdir(), "planport-fault-"));
  const repoDir = mkdtempSync(join(tmpdir(), "planport-fault-repo-"));
  let worker = await startWorkerProcess({ persistDir, vars: opts.vars });
  const tap = await startTap(worker.url);
  const api = new ApiClient((request) => fetch(request), worker.url);
  const clis: CliRun[] = [];

  return {
    get worker() {
      return worker;
    },
    tap,
    api,
    async crashAndRestart(outageSeenBy) {
      const killAt = Date.now();
      await worker.kill();
      const killedAt = Date.now();
      const stillUp = await fetch(`${worker.url}/v1/healthz`).then(
        () => true,
        () => false,
      );
      if (stillUp) throw new Error(`the worker at ${worker.url} still answers after SIGKILL`);
      if (outageSeenBy !== undefined) {
        const polls = pollsOf(outageSeenBy);
        await waitUntil(
          () =>
            tap.requests.some((r) => polls(r) && r.at >= killAt && failedRequest(r)) || undefined,
          { what: "the attached CLI to notice the outage", timeoutMs: 10_000, everyMs: 20 },
        );
      }
      worker = await startWorkerProcess({ persistDir, port: worker.port, vars: opts.vars });
      return { killAt, killedAt, upAt: Date.now() };
    },
    attach(sessionId) {
      const home = isolatedHome();
      const args = ["attach", sessionId, "--server", tap.url, "--token", opts.token];
      const run = startCli(
        [...args, "--interval", opts.pollInterval, "--json", "--repo", repoDir],
        { env: home.env },
      );
      clis.push(run);
      return run;
    },
    async close() {
      // A failed test may leave a CLI polling: stop the ones started here.
      for (const run of clis) if (run.child.exitCode === null) run.child.kill("SIGKILL");
      await worker.kill();
      await tap.close();
      rmSync(persistDir, { recursive: true, force: true });
      rmSync(repoDir, { recursive: true, force: true });
    },
  };
}
