import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../local-client/http/api.ts";
import { buildSnapshot } from "../../local-client/snapshot/build.ts";
import { fixtureRepo, waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, PLANPORT_BIN, startCli } from "../client/run-cli.ts";

/**
 * `planport watch` against `wrangler dev` with the offline planner: the `--json` lines as
 * sessions move, the live table in a real pseudo-terminal (tmux), Ctrl-C → 130, and one list
 * request per tick (a counting proxy in front of the worker).
 */

const TOKEN = "e2e-watch-token";
const TMUX = "/usr/bin/tmux";
let worker: WorkerProcess;
let api: Api;
let snapshotId: string;
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-watch-"));
const socket = `planport-watch-${process.pid}`;

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" },
  });
  api = createApi({ server: worker.url, token: TOKEN });
  const snapshot = await buildSnapshot(fixtureRepo());
  await api.uploadSnapshot(snapshot.bytes);
  snapshotId = snapshot.id;
}, 120_000);

afterAll(async () => {
  try {
    execFileSync(TMUX, ["-L", socket, "kill-server"], { stdio: "ignore" });
  } catch {
    // No tmux server was started.
  }
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
});

/** A task the offline planner answers with a plan (not a question) on the fixture repository. */
const OAUTH_TASK = "add GitHub OAuth login";

async function newSession(title: string): Promise<string> {
  const session = await api.createSession({ prompt: title, snapshot_id: snapshotId });
  return session.id;
}

function watch(server: string, extra: string[] = []) {
  return startCli(
    ["watch", "--server", server, "--token", TOKEN, "--interval", "300ms", ...extra],
    {
      env: isolatedHome().env,
    },
  );
}

/** Resolves once `check` holds, polling; fails naming `what`. */
async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never saw ${what}`);
}

const hasLine = (stdout: string, id: string, phase: string) =>
  ndjson(stdout).some((l) => l.id === id && l.phase === phase);

describe("planport watch --json", () => {
  it("prints the current phase of each session first, then one line per change; Ctrl-C exits 130", async () => {
    const before = await newSession(`${OAUTH_TASK} (before)`);
    await waitForPlan(api, before);
    const run = watch(worker.url, ["--json"]);
    await until(() => hasLine(run.stdout(), before, "plan_ready"), "the first tick's line");

    const during = await newSession(`${OAUTH_TASK} (during)`);
    await waitForPlan(api, during);
    await until(() => hasLine(run.stdout(), during, "plan_ready"), "the new session's plan_ready");
    await api.archive(before);
    await until(() => hasLine(run.stdout(), before, "done"), "the archived session's done");

    run.child.kill("SIGINT");
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(130);
    const lines = ndjson(stdout);
    // Nothing but phase lines, each exactly {"event","id","phase","outcome"}.
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(["event", "id", "phase", "outcome"]);
      expect(line.event).toBe("phase");
    }
    // `done` alone does not say how a session ended: the line carries the Session's outcome.
    expect(lines.find((l) => l.id === before && l.phase === "done")?.outcome).toEqual({
      kind: "terminated",
      subtype: "archived",
    });
    expect(lines.find((l) => l.id === during)?.outcome).toBeNull();
    // A change is printed once: no two lines for one session say the same phase in a row.
    const byId = new Map<string, string[]>();
    for (const l of lines)
      byId.set(String(l.id), [...(byId.get(String(l.id)) ?? []), String(l.phase)]);
    for (const phases of byId.values()) {
      expect(phases.every((p, i) => i === 0 || phases[i - 1] !== p)).toBe(true);
    }
    const ofBefore = byId.get(before) ?? [];
    expect(ofBefore[0]).toBe("plan_ready");
    expect(ofBefore.at(-1)).toBe("done");
    expect(byId.get(during)?.at(-1)).toBe("plan_ready");
  }, 120_000);

  it("without a terminal and without --json: one readable line per change", async () => {
    const id = await newSession(`${OAUTH_TASK} (plain lines)`);
    await waitForPlan(api, id);
    const run = watch(worker.url);
    await until(() => run.stdout().includes(`${id}  plan ready  ${OAUTH_TASK} (plain`), "the line");
    run.child.kill("SIGINT");
    const { code, stdout } = await run.done;
    expect(code).toBe(130);
    expect(stdout).not.toContain("\x1b");
  }, 120_000);

  it("stops quietly with exit 0 when its reader goes away (| head -1)", async () => {
    const id = await newSession(`${OAUTH_TASK} (head)`);
    await waitForPlan(api, id);
    const run = watch(worker.url, ["--json"]);
    await run.waitForStdout("\n", 60_000);
    run.child.stdout?.destroy();
    // Watch learns the reader is gone on its next write: the next phase change.
    await api.archive(id);
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    expect(stderr).toBe("");
  }, 120_000);

  it("a server that refuses the token ends watch at once with the reason", async () => {
    const run = startCli(["watch", "--server", worker.url, "--token", "wrong", "--json"], {
      env: isolatedHome().env,
    });
    const { code, stdout } = await run.done;
    expect(code).toBe(6);
    // With --json the reason is the one error line on stdout (issue 26).
    expect(ndjson(stdout)).toEqual([
      {
        event: "error",
        reason: "network_or_unknown",
        message: expect.stringMatching(/check --token or PLANPORT_TOKEN/),
      },
    ]);
  }, 60_000);
});

/**
 * A proxy in front of the worker that records every request, how many were in flight at once,
 * and answers the first `failFirst` requests itself with 503 (Retry-After: 1). The health check
 * the CLI sends once, to have a server on this machine prove it holds the token before any
 * request carries it (src/protocol/server-proof.ts), goes through and is recorded apart.
 */
async function countingProxy(failFirst = 0) {
  const seen: string[] = [];
  const proofs: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const target = new URL(worker.url);
  const proxy: Server = createServer((req, res) => {
    if (req.url === "/v1/healthz") proofs.push(`${req.method} ${req.url}`);
    else seen.push(`${req.method} ${req.url}`);
    if (req.url !== "/v1/healthz" && seen.length <= failFirst) {
      res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
      res.end(JSON.stringify({ error: { code: "unavailable", message: "deploying" } }));
      return;
    }
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on("end", () => {
          inFlight -= 1;
        });
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    proofs,
    maxInFlight: () => maxInFlight,
    close: () => new Promise((r) => proxy.close(r)),
  };
}

describe("one request per tick, failures as the poller tolerates them", () => {
  it("every request watch makes is the one list request, never one per session, never two at once", async () => {
    for (const n of [1, 2, 3]) await waitForPlan(api, await newSession(`${OAUTH_TASK} #${n}`));
    const proxy = await countingProxy();
    try {
      const run = watch(proxy.url, ["--json"]);
      await until(() => proxy.seen.length >= 6, "six ticks");
      run.child.kill("SIGINT");
      expect((await run.done).code).toBe(130);
      expect(new Set(proxy.seen)).toEqual(new Set(["GET /v1/sessions?limit=100"]));
      // Besides the one proof before the first refresh.
      expect(proxy.proofs).toEqual(["GET /v1/healthz"]);
      expect(proxy.maxInFlight()).toBe(1);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("rides out a few unavailable answers, then carries on", async () => {
    const id = await newSession(`${OAUTH_TASK} (flaky)`);
    await waitForPlan(api, id);
    const proxy = await countingProxy(3);
    try {
      const run = watch(proxy.url, ["--json"]);
      await until(() => hasLine(run.stdout(), id, "plan_ready"), "a line after the failures");
      run.child.kill("SIGINT");
      const { code, stderr } = await run.done;
      expect(code).toBe(130);
      expect(stderr).toMatch(/cannot reach the server \(3 in a row\)/);
      expect(stderr).not.toMatch(/4 in a row/);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it("gives up after five failed refreshes in a row with exit 6, one request each", async () => {
    const proxy = await countingProxy(Number.POSITIVE_INFINITY);
    try {
      const { code, stdout } = await watch(proxy.url, ["--json"]).done;
      expect(code).toBe(6);
      expect(ndjson(stdout)).toEqual([
        {
          event: "error",
          reason: "network_or_unknown",
          message: expect.stringMatching(/after 5 failed refreshes in a row/),
        },
      ]);
      expect(proxy.seen).toHaveLength(5);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});

const TABLE_TITLE = `${OAUTH_TASK} (table)`;

describe("planport watch on a terminal", () => {
  it("draws the table once and redraws it in place as phases change; Ctrl-C exits 130", async () => {
    if (!existsSync(TMUX)) throw new Error("tmux is required (apt-get install tmux)");
    const id = await newSession(TABLE_TITLE);
    await waitForPlan(api, id);
    const dir = mkdtempSync(join(tmpdir(), "planport-watch-run-"));
    const exitFile = join(dir, "exit");
    const env = Object.entries(isolatedHome().env)
      .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${shellQuote(String(v))}`)
      .join("\n");
    const argv = [process.execPath, PLANPORT_BIN, "watch", "--server", worker.url]
      .concat(["--token", TOKEN, "--interval", "300ms"])
      .map(shellQuote)
      .join(" ");
    writeFileSync(
      join(dir, "run.sh"),
      `${env}\nexport TERM=xterm-256color\n${argv}\necho $? > ${shellQuote(exitFile)}\nsleep 600\n`,
    );
    const tmux = (...args: string[]) =>
      execFileSync(TMUX, ["-L", socket, ...args], { encoding: "utf8" });
    tmux(
      "new-session",
      "-d",
      "-x",
      "160",
      "-y",
      "40",
      "-s",
      "watch",
      `bash ${join(dir, "run.sh")}`,
    );
    const screen = () => tmux("capture-pane", "-p", "-J", "-t", "watch", "-S", "-", "-E", "-");
    // A table row: the id, then the title (a change line has the phase between them).
    const isRow = (l: string) =>
      new RegExp(`^${id}\\s+${TABLE_TITLE.replace(/[()]/g, "\\$&")}`).test(l);
    const row = (s: string) => s.split("\n").find(isRow) ?? "";

    await until(() => /plan ready/.test(row(screen())), "the session's row in the table");
    expect(screen()).toMatch(/ID\s+TITLE\s+PHASE\s+OUTCOME\s+KEEP PLANNING\s+AGE\s+PLANNER\s+COST/);
    expect(row(screen())).toMatch(/\(table\)\s+plan ready\s+—\s+0\s+\d+[smhd]\s+offline\s+\$0\.00/);

    await api.archive(id);
    await until(() => /\bdone\b/.test(row(screen())), "the row showing done");
    const shown = screen();
    // The change is printed above the table for good, with how it ended; the table once.
    expect(shown).toContain(`${id}  done (stopped)  ${TABLE_TITLE}`);
    expect(row(shown)).toMatch(/\bdone\s+stopped\s+0\s/);
    expect(shown.match(/^ID\s+TITLE/gm)).toHaveLength(1);
    expect(shown.split("\n").filter(isRow)).toHaveLength(1);

    tmux("send-keys", "-t", "watch", "C-c");
    await until(() => existsSync(exitFile) && readFileSync(exitFile, "utf8").trim() !== "", "exit");
    expect(readFileSync(exitFile, "utf8").trim()).toBe("130");
  }, 120_000);
});

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
