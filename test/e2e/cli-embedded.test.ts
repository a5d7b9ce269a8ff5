import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../../local-client/embedded/worker-process.ts";
import { createApi } from "../../local-client/http/api.ts";
import { isAlive } from "../../local-client/poll/pid-lock.ts";
import { fixtureRepo, waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";

/**
 * Phase B: with no server configured the CLI starts the embedded local worker, reuses it while
 * a session is open, and stops it when nothing needs it; `serve` runs one in the foreground.
 */

function embeddedState(data: string) {
  const root = join(data, "planport");
  const record = JSON.parse(readFileSync(join(root, "embedded", "worker.json"), "utf8")) as {
    pid: number;
    url: string;
  };
  const token = readFileSync(join(root, "token"), "utf8").trim();
  return { root, record, token, api: createApi({ server: record.url, token }) };
}

async function waitUntil(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the embedded local worker", () => {
  it("starts on demand, outlives a Ctrl-C for the open session, is reused by attach, and stops when done", async () => {
    const home = isolatedHome();
    const repo = fixtureRepo();
    const run = startCli(
      ["plan", "add OAuth login", "--repo", repo, "--json", "--interval", "500ms"],
      { env: home.env },
    );
    await run.waitForStdout('"event":"phase"', 120_000);
    const { root, record, api } = embeddedState(home.data);
    expect(statSync(join(root, "token")).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "embedded", "worker.env")).mode & 0o777).toBe(0o600);
    const id = String(ndjson(run.stdout())[0]?.id);

    run.child.kill("SIGINT");
    expect((await run.done).code).toBe(130);
    // The session is still open, so its worker keeps running.
    expect(isAlive(record.pid)).toBe(true);

    const again = startCli(["attach", id, "--json", "--interval", "500ms", "--repo", repo], {
      env: home.env,
    });
    const call = await waitForPlan(api, id);
    await again.waitForStdout('"phase":"plan_ready"', 30_000);
    expect(embeddedState(home.data).record.pid).toBe(record.pid);
    await api.decide(id, { tool_use_id: call, decision: "teleport" });
    const done = await again.done;
    expect(done.code, done.stderr).toBe(0);
    // Nothing is open any more and no one else uses it: the CLI stopped it cleanly.
    await waitUntil(() => !isAlive(record.pid), "the embedded worker to stop", 15_000);
    expect(existsSync(join(root, "embedded", "worker.json"))).toBe(false);

    // A read-only command does not start it again: it says so, and how to see the sessions.
    const listed = await startCli(["list", "--json"], { env: home.env }).done;
    expect(listed.code, listed.stderr).toBe(6);
    expect(JSON.parse(listed.stdout).message).toContain(
      "the local planport worker is not running; its sessions are kept in",
    );
    expect(existsSync(join(root, "embedded", "worker.json"))).toBe(false);

    // `embedded --start` does, on the same port, so review links keep working: the listed
    // review link names the same origin as before.
    const started = await startCli(["embedded", "--start"], { env: home.env }).done;
    expect(started.code, started.stderr).toBe(0);
    const relisted = await startCli(["list", "--json"], { env: home.env }).done;
    expect(relisted.code, relisted.stderr).toBe(0);
    const data = JSON.parse(relisted.stdout).data as {
      id: string;
      status: string;
      review_url: string;
    }[];
    expect(data).toEqual([expect.objectContaining({ id, status: "archived" })]);
    expect(data[0]?.review_url.startsWith(`${record.url}/review/`)).toBe(true);
    await startCli(["embedded", "--stop"], { env: home.env }).done;
  }, 240_000);
});

describe("when the embedded worker cannot start", () => {
  it("says why, with the end of its log, instead of waiting out the start", async () => {
    const home = isolatedHome();
    // The runtime's state folder cannot be created: a file stands where it goes.
    const persist = join(home.data, "planport", "persist");
    mkdirSync(persist, { recursive: true });
    writeFileSync(join(persist, "v3"), "not a folder\n");
    const run = await startCli(["embedded", "--start"], { env: home.env }).done;
    expect(run.code).toBe(6);
    expect(run.stderr).toContain("the local planport worker did not start");
    expect(run.stderr).toMatch(/the end of its log \(.*worker\.log\):/);
    // The cause, from the host (not a health check that gave up after its time limit).
    expect(run.stderr).toContain("the worker did not start: ");
    expect(run.stderr).toContain("ENOTDIR");
    expect(run.stderr).not.toContain("did not become ready within");
    expect(existsSync(join(home.data, "planport", "embedded", "worker.json"))).toBe(false);
  }, 120_000);
});

describe("commands that need no server", () => {
  it("answer --help, usage errors and malformed ids without starting one", async () => {
    const home = isolatedHome();
    const help = await startCli(["--help"], { env: home.env }).done;
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: planport");
    for (const args of [
      ["status", "hello"],
      ["stop", "ses_nope"],
      ["pull", "x"],
      ["attach", "1"],
    ]) {
      const run = await startCli(args, { env: home.env }).done;
      expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain("is not a session id");
    }
    const usage = await startCli(["plan", "--attempts", "9", "x"], { env: home.env }).done;
    expect(usage.code).toBe(2);
    const unknown = await startCli(["frobnicate"], { env: home.env }).done;
    expect(unknown.code).toBe(2);
    // Nothing was started: no worker record, no state folder.
    expect(existsSync(join(home.data, "planport", "persist"))).toBe(false);
    expect(existsSync(join(home.data, "planport", "embedded", "worker.json"))).toBe(false);
  }, 120_000);
});

describe("planport serve", () => {
  it("runs the worker in the foreground, writes the user config, and other commands use it", async () => {
    const home = isolatedHome();
    // A port found free can be taken by another test's worker before serve binds it: then
    // serve says so and exits, and the test tries again on another port.
    let port = 0;
    let serve: ReturnType<typeof startCli> | null = null;
    for (let attempt = 1; serve === null; attempt++) {
      port = await freePort();
      const started = startCli(["serve", "--port", String(port)], { env: home.env });
      const outcome = await Promise.race([
        started.waitForStdout("token:", 120_000).then(
          () => "ready" as const,
          () => "exited" as const,
        ),
        started.done.then(() => "exited" as const),
      ]);
      if (outcome === "ready") serve = started;
      else if (attempt >= 3 || !/is in use by another program/.test(started.stderr()))
        throw new Error(`serve exited: ${started.stderr()}`);
    }
    const config = JSON.parse(readFileSync(join(home.home, "config.json"), "utf8"));
    expect(config).toEqual({
      url: `http://127.0.0.1:${port}`,
      token: expect.stringMatching(/^pp_/),
    });
    expect(statSync(join(home.home, "config.json")).mode & 0o777).toBe(0o600);
    const list = await startCli(["list", "--json"], { env: home.env }).done;
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ data: [], has_more: false });
    serve.child.kill("SIGINT");
    expect((await serve.done).code).toBe(0);
  }, 180_000);
});
