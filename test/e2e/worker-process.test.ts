import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { orphanedRuntimes, stopRecordedWorker } from "../../local-client/embedded/record.ts";
import { startWorkerProcess } from "../../local-client/embedded/worker-process.ts";
import { waitUntil } from "../support/faults.ts";
import { workerdProcesses } from "../support/workerd-proc.ts";

/** Pids in process group `groupId`. */
function groupMembers(groupId: number): number[] {
  return execFileSync("ps", ["-A", "-o", "pid=,pgid="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s*$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[2]) === groupId)
    .map((m) => Number(m[1]));
}

describe("wrangler dev harness", () => {
  const dir = mkdtempSync(join(tmpdir(), "planport-harness-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts, is killed with its whole process group, and restarts on the same port", async () => {
    const first = await startWorkerProcess({ persistDir: dir, vars: { PLANPORT_TOKENS: "t" } });
    expect((await fetch(`${first.url}/v1/healthz`)).status).toBe(200);
    await first.kill();
    await expect(fetch(`${first.url}/v1/healthz`)).rejects.toThrow();
    const second = await startWorkerProcess({ persistDir: dir, port: first.port });
    expect((await fetch(`${second.url}/v1/healthz`)).status).toBe(200);
    await second.stop();
  }, 120_000);

  it("leaves no workerd behind when wrangler itself died first", async () => {
    const worker = await startWorkerProcess({ persistDir: dir, vars: { PLANPORT_TOKENS: "t" } });
    expect(workerdProcesses(worker.pid).length).toBeGreaterThan(0);
    // Only wrangler (the group leader) dies, as in a crash of the Node side.
    process.kill(worker.pid, "SIGKILL");
    await worker.exited;
    await worker.kill();
    await waitUntil(async () => (workerdProcesses(worker.pid).length === 0 ? true : undefined), {
      what: "the workerd processes of the dead wrangler to be gone",
    });
    await expect(fetch(`${worker.url}/v1/healthz`)).rejects.toThrow();
  }, 120_000);

  it("a recorded embedded worker whose wrangler crashed has its orphaned runtimes stopped", async () => {
    const worker = await startWorkerProcess({ persistDir: dir, vars: { PLANPORT_TOKENS: "t" } });
    const record = join(dir, "worker.json");
    const recorded = {
      pid: worker.pid,
      port: worker.port,
      url: worker.url,
      persist_dir: dir,
      started_at: new Date().toISOString(),
    };
    writeFileSync(record, JSON.stringify(recorded));
    process.kill(worker.pid, "SIGKILL");
    await worker.exited;
    const orphans = orphanedRuntimes(recorded);
    expect(orphans.length).toBeGreaterThan(0);
    expect(orphans.sort()).toEqual(
      workerdProcesses(worker.pid)
        .map((p) => p.pid)
        .sort(),
    );
    // An unrelated group (this test's own) holds no workerd of ours.
    expect(orphanedRuntimes({ ...recorded, pid: process.pid })).toEqual([]);

    // wrangler's own Node process outlived its launcher too.
    expect(groupMembers(worker.pid).length).toBeGreaterThan(orphans.length);
    expect(await stopRecordedWorker(record)).toBe(true);
    await waitUntil(async () => (orphanedRuntimes(recorded).length === 0 ? true : undefined), {
      what: "the orphaned runtimes to be stopped",
    });
    // Nothing of the worker is left: not its runtimes, not wrangler's Node process (nor esbuild).
    await waitUntil(async () => (groupMembers(worker.pid).length === 0 ? true : undefined), {
      what: "every process of the crashed worker's group to be gone",
    });
    await expect(fetch(`${worker.url}/v1/healthz`)).rejects.toThrow();
    expect(await stopRecordedWorker(record)).toBe(false);
  }, 120_000);
});
