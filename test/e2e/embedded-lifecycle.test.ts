import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createApi } from "../../local-client/http/api.ts";
import { isAlive } from "../../local-client/poll/pid-lock.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { type CliRun, isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { waitUntil } from "../support/faults.ts";

/**
 * Issue 30: the embedded worker goes away when nothing needs it — read-only commands never
 * start it, it stops once no command uses it and no session is open, and local sessions nobody
 * waits for or reviews expire — and it keeps running while a command or a session needs it.
 */

const runs: CliRun[] = [];
afterEach(() => {
  for (const run of runs.splice(0)) run.child.kill("SIGKILL");
});

function start(args: string[], env: NodeJS.ProcessEnv, cwd?: string): CliRun {
  const run = startCli(args, { env, cwd });
  runs.push(run);
  return run;
}

function record(data: string): { pid: number; url: string; runtime_pid: number } | null {
  const path = join(data, "planport", "embedded", "worker.json");
  return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : null;
}

/** Processes whose arguments name this test's data folder: the worker's host and runtime. */
function workerProcesses(data: string): number[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(data);
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function gone(data: string, what: string): Promise<void> {
  await waitUntil(
    async () => (record(data) === null && workerProcesses(data).length === 0 ? true : undefined),
    { what, timeoutMs: 120_000 },
  );
}

describe("the embedded worker's lifecycle", () => {
  it("read-only commands never start it: they say it is not running and how to see the sessions", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const plan = start(["plan", "add OAuth login", "--repo", repo, "--json"], home.env);
    await plan.waitForStdout('"phase":"plan_ready"', 120_000);
    const id = String(ndjson(plan.stdout())[0]?.id);
    plan.child.kill("SIGINT");
    expect((await plan.done).code).toBe(130);
    const stopped = await startCli(["embedded", "--stop"], { env: home.env }).done;
    expect(stopped.code, stopped.stderr).toBe(0);
    await gone(home.data, "the stopped worker");

    for (const args of [["list"], ["status", id], ["watch"], ["list", "--json"]]) {
      const run = await startCli(args, { env: home.env }).done;
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(6);
      const said = args.includes("--json") ? JSON.parse(run.stdout).message : run.stderr;
      expect(said).toContain("the local planport worker is not running");
      expect(said).toContain("planport embedded --start");
      expect(record(home.data)).toBeNull();
      expect(workerProcesses(home.data)).toEqual([]);
    }
  }, 240_000);

  it("stops by itself once no command uses it and no session is open", async () => {
    const home = isolatedHome();
    const env = { ...home.env, PLANPORT_EMBEDDED_IDLE_SECONDS: "2" };
    const started = await startCli(["embedded", "--start", "--json"], { env }).done;
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ event: "embedded", running: true });
    await gone(home.data, "the unused worker to stop by itself");
    expect(readFileSync(join(home.data, "planport", "embedded", "worker.log"), "utf8")).toContain(
      "stopping (unused)",
    );
  }, 180_000);

  it("keeps running while a session is open, and stops once it is closed from the review link", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const env = { ...home.env, PLANPORT_EMBEDDED_IDLE_SECONDS: "1" };
    const plan = start(["plan", "add OAuth login", "--repo", repo, "--json"], env);
    await plan.waitForStdout('"phase":"plan_ready"', 120_000);
    const session = ndjson(plan.stdout())[0] as { id: string; review_url: string };
    plan.child.kill("SIGINT");
    expect((await plan.done).code).toBe(130);
    const running = record(home.data);
    expect(running).not.toBeNull();
    // Well past its idle time, the open session keeps it running: the review link works.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(isAlive(running?.pid as number)).toBe(true);
    const page = await fetch(session.review_url);
    expect(page.status).toBe(200);
    // The reviewer stops the session from the page (its key, not a planport command).
    const key = new URL(session.review_url).searchParams.get("key") as string;
    const archived = await fetch(`${running?.url}/v1/sessions/${session.id}/archive`, {
      method: "POST",
      headers: { "X-Review-Key": key },
    });
    expect(archived.status).toBe(200);
    await gone(home.data, "the worker to stop once nothing is open");
  }, 240_000);

  it("local sessions nobody waits for or reviews expire, and then the worker goes", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    // A day by default; here 15 seconds.
    const env = {
      ...home.env,
      PLANPORT_EMBEDDED_IDLE_SECONDS: "1",
      PLANPORT_IDLE_DAYS: String(15 / 86_400),
    };
    const plan = start(["plan", "add OAuth login", "--repo", repo, "--json"], env);
    await plan.waitForStdout('"phase":"plan_ready"', 120_000);
    const id = String(ndjson(plan.stdout())[0]?.id);
    plan.child.kill("SIGINT");
    expect((await plan.done).code).toBe(130);
    const token = readFileSync(join(home.data, "planport", "token"), "utf8").trim();
    const url = record(home.data)?.url as string;
    await gone(home.data, "the session to expire and the worker to stop");
    // Kept, archived, for when the user looks again.
    const again = await startCli(["embedded", "--start"], { env: home.env }).done;
    expect(again.code, again.stderr).toBe(0);
    const session = await createApi({ server: record(home.data)?.url ?? url, token }).getSession(
      id,
    );
    expect(session.status).toBe("archived");
    await startCli(["embedded", "--stop"], { env: home.env }).done;
  }, 240_000);

  it("a command that leaves keeps it running for another command still using it", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    // `watch` uses the worker (it was started by the first plan) for as long as it runs.
    const plan = start(["plan", "add OAuth login", "--repo", repo, "--json"], home.env);
    await plan.waitForStdout('"phase":"plan_ready"', 120_000);
    const id = String(ndjson(plan.stdout())[0]?.id);
    const watch = start(["watch", "--json"], home.env);
    await watch.waitForStdout(id, 60_000);
    const running = record(home.data);
    // The plan ends (stopped from another command); nothing is open, but watch still uses it.
    const stop = await startCli(["stop", id], { env: home.env }).done;
    expect(stop.code, stop.stderr).toBe(0);
    plan.child.kill("SIGINT");
    await plan.done;
    expect(isAlive(running?.pid as number)).toBe(true);
    expect((await fetch(`${running?.url}/v1/healthz`)).status).toBe(200);
    // watch leaves last: it stops it.
    watch.child.kill("SIGINT");
    await watch.done;
    await gone(home.data, "the worker to stop when its last command leaves");
  }, 240_000);

  it("a host killed with SIGKILL leaves its runtime on the state folder; the next start stops it first", async () => {
    const home = isolatedHome();
    const started = await startCli(["embedded", "--start"], { env: home.env }).done;
    expect(started.code, started.stderr).toBe(0);
    const first = record(home.data) as { pid: number; url: string; runtime_pid: number };
    expect(isAlive(first.runtime_pid)).toBe(true);
    // Only the host dies, as in a crash of its Node process: workerd keeps the port and SQLite.
    process.kill(first.pid, "SIGKILL");
    await waitUntil(async () => (isAlive(first.pid) ? undefined : true), {
      what: "the host to die",
    });
    expect(isAlive(first.runtime_pid)).toBe(true);
    const again = await startCli(["embedded", "--start", "--json"], { env: home.env }).done;
    expect(again.code, again.stderr).toBe(0);
    // The leftover runtime was checked against the record (this user's, started with it) and
    // stopped before a new worker opened the same state.
    await waitUntil(async () => (isAlive(first.runtime_pid) ? undefined : true), {
      what: "the leftover runtime to be stopped",
    });
    const second = record(home.data) as { pid: number; runtime_pid: number };
    expect(second.pid).not.toBe(first.pid);
    expect(isAlive(second.runtime_pid)).toBe(true);
    await startCli(["embedded", "--stop"], { env: home.env }).done;
    await gone(home.data, "the second worker");
  }, 180_000);
});
