import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../local-client/embedded/worker-process.ts";
import { isAlive } from "../../local-client/poll/pid-lock.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { type CliRun, isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { waitUntil } from "../support/faults.ts";
import {
  canSwitchUser,
  groupPids,
  listeningPorts,
  type OtherUser,
  otherUser,
  stopProbe,
} from "../support/other-user.ts";

/**
 * Issue 30: the embedded worker and `planport serve` as another user of the same machine meets
 * them — `nobody`, a real second account (the tests run as root in CI and switch to it). It may
 * connect to anything on 127.0.0.1, bind free ports, read the process list; it must not read
 * or write the user's files, receive the user's token, or answer in the worker's place.
 */

type Answer = { port: number; method: string; path: string; status: number; body: string };

const probes: ReturnType<OtherUser["start"]>[] = [];
const runs: CliRun[] = [];
afterEach(async () => {
  for (const probe of probes.splice(0)) await stopProbe(probe);
  for (const run of runs.splice(0)) run.child.kill("SIGKILL");
});

function start(args: string[], env: NodeJS.ProcessEnv, cwd?: string): CliRun {
  const run = startCli(args, { env, cwd });
  runs.push(run);
  return run;
}

/** The other user's server on a port: logs each request it gets, answers 200 {"ok": true}. */
async function impostor(other: OtherUser, mode: "impostor" | "squat", target: string) {
  const log = join(other.dir, `${mode}-${Date.now()}.log`);
  writeFileSync(log, "");
  chmodSync(log, 0o666);
  const probe = other.start(mode, [target, log]);
  probes.push(probe);
  if (mode === "impostor") {
    await new Promise<void>((resolve, reject) => {
      probe.stdout?.setEncoding("utf8").on("data", (d: string) => {
        if (d.includes("listening")) resolve();
      });
      probe.once("exit", () => reject(new Error("the impostor exited")));
    });
  }
  const requests = () =>
    readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { line: string; authorization: boolean });
  return { probe, requests };
}

/** Runs every request another user could try, on each port, without the token. */
async function attack(other: OtherUser, ports: number[], files: { token: string }, id: string) {
  const target = join(other.dir, "written-by-the-worker");
  const { stdout } = await other.run("attack", [
    ...ports.map(String),
    "--",
    files.token,
    target,
    id,
  ]);
  const answers = stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Answer);
  return {
    answers,
    wrote:
      existsSync(target) || readdirSync(other.dir).some((n) => n.endsWith("written-by-the-worker")),
  };
}

/** What every answer to a request without the token must be: a refusal, or a public fact. */
function expectOnlyRefusals(answers: Answer[], token: string): void {
  expect(answers.length).toBeGreaterThan(0);
  for (const a of answers) {
    const where = `${a.method} ${a.path} on ${a.port}: ${a.status} ${a.body.slice(0, 300)}`;
    expect(a.body, where).not.toContain(token);
    if (a.path === "/v1/healthz" && a.status === 200) {
      expect(JSON.parse(a.body), where).toEqual({ ok: true });
      continue;
    }
    expect([401, 404, 405], where).toContain(a.status);
  }
}

describe.skipIf(!canSwitchUser())("another user of the machine (nobody)", () => {
  it("reaches nothing of the embedded worker but its API, and that refuses without the token", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const other = otherUser();
    const run = start(["plan", "add OAuth login", "--repo", repo, "--json"], home.env);
    await run.waitForStdout('"phase":"plan_ready"', 120_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    run.child.kill("SIGINT");
    expect((await run.done).code).toBe(130);

    const root = join(home.data, "planport");
    const token = readFileSync(join(root, "token"), "utf8").trim();
    const record = JSON.parse(readFileSync(join(root, "embedded", "worker.json"), "utf8")) as {
      pid: number;
      port: number;
    };
    const ports = listeningPorts(groupPids(record.pid));
    const { answers, wrote } = await attack(other, ports, { token: join(root, "token") }, id);
    expect(wrote).toBe(false);
    expectOnlyRefusals(answers, token);
    // The API's port and the local executor's (commands in Docker, every route behind its own
    // token): no call-back server for anyone to find, nothing else.
    expect(ports).toContain(record.port);
    expect(ports).toHaveLength(2);
    // And the worker still serves its user.
    const stopped = await startCli(["stop", id], { env: home.env }).done;
    expect(stopped.code, stopped.stderr).toBe(0);
  }, 240_000);

  it("reaches nothing of `planport serve` but its API, and that refuses without the token", async () => {
    const home = isolatedHome();
    const other = otherUser();
    const port = await freePort();
    const serve = start(["serve", "--port", String(port)], home.env);
    await serve.waitForStdout("token:", 120_000);
    const token = readFileSync(join(home.data, "planport", "token"), "utf8").trim();
    // Its processes: everything whose arguments name this test's state folder.
    const hostPids = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(home.data);
        } catch {
          return false;
        }
      })
      .map(Number);
    const pids = [...new Set(hostPids.flatMap((pid) => groupPids(pid)))];
    const ports = listeningPorts(pids);
    const { answers, wrote } = await attack(
      other,
      ports,
      { token: join(home.data, "planport", "token") },
      "ses_00000000000000000000000000",
    );
    expect(wrote).toBe(false);
    expectOnlyRefusals(answers, token);
    // Its API's port and its local executor's, nothing else.
    expect(ports).toContain(port);
    expect(ports).toHaveLength(2);
    serve.child.kill("SIGINT");
    expect((await serve.done).code).toBe(0);
  }, 180_000);

  it("serve refuses a port another user holds, and points no config at it", async () => {
    const home = isolatedHome();
    const other = otherUser();
    const port = await freePort();
    const { requests } = await impostor(other, "impostor", String(port));
    const serve = await start(["serve", "--port", String(port)], home.env).done;
    expect(serve.code, serve.stderr).toBe(2);
    expect(serve.stderr).toContain(`port ${port} on 127.0.0.1 is in use by another program`);
    expect(existsSync(join(home.home, "config.json"))).toBe(false);
    expect(requests().filter((r) => r.authorization)).toEqual([]);
  }, 120_000);

  it("a command never sends the token to another user's program on its server's port", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const other = otherUser();
    const port = await freePort();
    // As after `planport serve` ran and stopped: its config names a port now free for anyone.
    mkdirSync(home.home, { recursive: true });
    writeFileSync(
      join(home.home, "config.json"),
      JSON.stringify({ url: `http://127.0.0.1:${port}`, token: "pp_the-users-token" }),
      { mode: 0o600 },
    );
    const { requests } = await impostor(other, "impostor", String(port));
    const list = await start(["list", "--json"], home.env).done;
    expect(list.code, list.stderr).toBe(6);
    expect(JSON.parse(list.stdout).message).toContain('without planport\'s {"ok": true, "proofs"');
    const plan = await start(["plan", "add OAuth login", "--repo", repo, "--json"], home.env).done;
    expect(plan.code, plan.stderr).toBe(6);
    // It was asked only to prove itself: no token, no upload, no session.
    expect(requests().length).toBeGreaterThan(0);
    expect(requests().filter((r) => r.authorization)).toEqual([]);
    expect(requests().every((r) => r.line.startsWith("GET /v1/healthz "))).toBe(true);
  }, 120_000);

  it("another user who takes the embedded worker's port as it starts gets no token", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const other = otherUser();
    // The port the worker ran on last: the next start asks for it again, and the other user,
    // watching the process list, tries to bind it first.
    const port = await freePort();
    mkdirSync(join(home.data, "planport", "embedded"), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.data, "planport", "embedded", "port"), `${port}\n`);
    const { requests } = await impostor(other, "squat", join(home.data, "planport", "persist"));
    const run = start(["plan", "add OAuth login", "--repo", repo, "--json"], home.env);
    const reached = await Promise.race([
      run.waitForStdout('"phase":"plan_ready"', 120_000).then(() => true),
      run.done.then(() => false),
    ]);
    expect(requests().filter((r) => r.authorization)).toEqual([]);
    // And the plan reached the user's own worker.
    expect(reached, run.stdout()).toBe(true);
    run.child.kill("SIGINT");
    expect((await run.done).code).toBe(130);
    await startCli(["embedded", "--stop"], { env: home.env }).done;
  }, 240_000);

  it("a stale record naming another user's process (or a newer one of ours) signals nothing", async () => {
    const home = isolatedHome();
    const other = otherUser();
    const persist = join(home.data, "planport", "persist");
    // Another user's program whose command line even looks like planport's worker host, with a
    // child that looks like workerd: after a reboot a recorded pid can lead anything.
    const sleeper = other.start("sleeper", [persist, "worker-host"]);
    probes.push(sleeper);
    await new Promise<void>((resolve) => {
      sleeper.stdout?.setEncoding("utf8").on("data", (d: string) => {
        if (d.includes("ready")) resolve();
      });
    });
    const leader = sleeper.pid as number;
    const members = () => groupPids(leader);
    await waitUntil(async () => (members().length === 2 ? true : undefined), {
      what: "the other user's program and its child",
    });
    // And one of this user's own, started after the record was written.
    const started = new Date(Date.now() - 60_000).toISOString();
    const mine = spawn("/bin/bash", ["-c", `exec -a "worker-host ${persist}" sleep 600`], {
      detached: true,
      stdio: "ignore",
    });
    const write = (pid: number) =>
      writeFileSync(
        join(home.data, "planport", "embedded", "worker.json"),
        JSON.stringify({
          pid,
          port: 1,
          url: "http://127.0.0.1:1",
          persist_dir: persist,
          launched_at: started,
          started_at: started,
        }),
      );
    try {
      mkdirSync(join(home.data, "planport", "embedded"), { recursive: true, mode: 0o700 });
      for (const pid of [leader, mine.pid as number]) {
        write(pid);
        const stop = await startCli(["embedded", "--stop", "--json"], { env: home.env }).done;
        expect(stop.code, stop.stderr).toBe(0);
        expect(JSON.parse(stop.stdout)).toEqual({ event: "embedded_stopped", was_running: false });
      }
      expect(isAlive(leader)).toBe(true);
      expect(members().length).toBe(2);
      expect(isAlive(mine.pid as number)).toBe(true);
    } finally {
      mine.kill("SIGKILL");
    }
  }, 120_000);
});
