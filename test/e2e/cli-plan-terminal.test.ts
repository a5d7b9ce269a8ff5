import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApi } from "../../local-client/http/api.ts";
import { isAlive } from "../../local-client/poll/pid-lock.ts";
import { fixtureRepo, waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, PLANPORT_BIN, runCli, startCli } from "../client/run-cli.ts";

/**
 * What `planport plan` shows a person (issue 26). On a terminal (tmux, 100×40, read with
 * capture-pane) it shows the README's lines — each a line that stays, the spinner below them
 * animating only what is under way — with "plan ready — review at …" once per revision, and a
 * rejection in the review page's words. Ctrl-C before a session exists says what is left
 * running. The real CLI with the embedded local worker, each test in a home of its own.
 */

const TMUX = "/usr/bin/tmux";
const socket = `planport-plan-tty-${process.pid}`;
const TASK = "add GitHub OAuth login next to the password login";
/** Homes whose embedded worker may still run when a test ends. */
const homes: ReturnType<typeof isolatedHome>[] = [];

function tmux(...args: string[]): string {
  return execFileSync(TMUX, ["-L", socket, ...args], { encoding: "utf8" });
}

afterAll(async () => {
  try {
    tmux("kill-server");
  } catch {
    // No session left.
  }
  for (const home of homes) await runCli(["embedded", "--stop"], { env: home.env });
});

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The embedded worker of a home: its record and an API client with its token. */
function embedded(home: ReturnType<typeof isolatedHome>) {
  const root = join(home.data, "planport");
  const record = JSON.parse(readFileSync(join(root, "embedded", "worker.json"), "utf8")) as {
    pid: number;
    url: string;
  };
  const token = readFileSync(join(root, "token"), "utf8").trim();
  return { record, api: createApi({ server: record.url, token }) };
}

async function until<T>(
  check: () => T | null | undefined | false,
  what: string,
  timeoutMs = 120_000,
  show: () => string = () => "",
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; the screen:\n${show()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `planport plan` in a detached tmux window; its exit code lands in a file. */
function planInTerminal(name: string, home: ReturnType<typeof isolatedHome>, repo: string) {
  const dir = mkdtempSync(join(tmpdir(), "planport-plan-tty-"));
  const exitFile = join(dir, "exit");
  const env = Object.entries(home.env)
    .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
    .map(([k, v]) => `export ${k}=${shellQuote(String(v))}`)
    .join("\n");
  const argv = [process.execPath, PLANPORT_BIN, "plan", TASK, "--repo", repo]
    .concat(["--interval", "500ms"])
    .map(shellQuote)
    .join(" ");
  writeFileSync(
    join(dir, "run.sh"),
    // tmux's server carries the environment of whoever started it (CI=true under CI): the
    // window gets exactly the test's environment, and a terminal is not CI.
    `unset CI\n${env}\nexport TERM=xterm-256color\n${argv}\necho $? > ${shellQuote(exitFile)}\nsleep 600\n`,
  );
  tmux("new-session", "-d", "-x", "100", "-y", "40", "-s", name, `bash ${join(dir, "run.sh")}`);
  const screen = () =>
    tmux("capture-pane", "-p", "-J", "-t", name, "-S", "-", "-E", "-")
      .split("\n")
      .map((l) => l.trimEnd())
      .filter((l) => l !== "");
  const exitCode = async () => {
    await until(
      () => existsSync(exitFile) && readFileSync(exitFile, "utf8").trim() !== "",
      "the CLI to exit",
    );
    return Number(readFileSync(exitFile, "utf8").trim());
  };
  return { screen, exitCode, keys: (...k: string[]) => tmux("send-keys", "-t", name, ...k) };
}

const count = (lines: string[], pattern: RegExp) => lines.filter((l) => pattern.test(l)).length;

describe("planport plan on a terminal", () => {
  it("shows the README's lines, one plan-ready line per revision, and keep planning in the page's words", async () => {
    if (!existsSync(TMUX)) throw new Error("tmux is required (apt-get install tmux)");
    const home = isolatedHome();
    homes.push(home);
    const repo = fixtureRepo();
    const run = planInTerminal("plan", home, repo);

    const waiting = /^\S waiting for your decision…$/;
    const first = await until(
      () => {
        const lines = run.screen();
        return count(lines, /^plan ready — review at /) > 0 && waiting.test(lines.at(-1) ?? "")
          ? lines
          : null;
      },
      "the first plan",
      120_000,
      () => run.screen().join("\n"),
    );
    // Every line plain mode prints stays on screen, in the README's order; the spinner is the
    // last line and animates the wait, not a second copy of the link.
    const url = String(/^review: (\S+)$/m.exec(first.join("\n"))?.[1]);
    expect(first.slice(0, 7)).toEqual([
      `snapshotting ${repo}…`,
      "starting the local planport worker…",
      expect.stringMatching(/^snapshot: 6 files; sent 6 new or changed files \(\d/),
      expect.stringMatching(/^session ses_[0-9a-z]+$/),
      `review: ${url}`,
      "researching…",
      `plan ready — review at ${url}`,
    ]);
    expect(first.slice(7)).toEqual([expect.stringMatching(waiting)]);

    // The reviewer presses "Keep planning": the planner revises, and the second plan is
    // announced once more, once.
    const { api } = embedded(home);
    const id = String(/^session (ses_\S+)$/m.exec(first.join("\n"))?.[1]);
    await api.decide(id, {
      tool_use_id: await waitForPlan(api, id),
      decision: "reject",
      feedback: "Also cover the database migration.",
    });
    const second = await until(
      () => {
        const lines = run.screen();
        return count(lines, /^plan ready — review at /) === 2 ? lines : null;
      },
      "the second plan",
      120_000,
      () => run.screen().join("\n"),
    );
    expect(second).toContain("keep planning (1 so far): the planner is revising");
    expect(count(second, /^researching…$/)).toBe(2);
    expect(second.join("\n")).not.toMatch(/reject/i);

    run.keys("C-c");
    expect(await run.exitCode()).toBe(130);
    const last = run.screen();
    expect(count(last, /^plan ready — review at /)).toBe(2);
    expect(last.join("\n")).toContain(`planport attach ${id}`);
    expect(last.join("\n")).not.toMatch(/waiting for your decision/);
  }, 300_000);
});

describe("Ctrl-C before a session exists", () => {
  it("while the embedded worker starts: it is stopped, nothing is left running, exit 130", async () => {
    const home = isolatedHome();
    homes.push(home);
    const run = startCli(["plan", TASK, "--repo", fixtureRepo()], { env: home.env });
    await until(() => run.stderr().includes("starting the local planport worker…"), "the start");
    run.child.kill("SIGINT");
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(
      "planport: interrupted before a session was started: nothing is left running.",
    );
    expect(stderr).not.toContain("session ses_");
    expect(existsSync(join(home.data, "planport", "embedded", "worker.json"))).toBe(false);
    const shown = await runCli(["embedded"], { env: home.env });
    expect(shown.stdout + shown.stderr).toMatch(/no embedded local worker is running/i);
  }, 180_000);

  it("when the worker it started stays for an open session, says so and how to stop it", async () => {
    const home = isolatedHome();
    homes.push(home);
    const repo = fixtureRepo();
    // A session left open (Ctrl-C while polling), then the worker stopped under it.
    const open = startCli(["plan", TASK, "--repo", repo, "--json"], { env: home.env });
    await open.waitForStdout('"event":"session"', 120_000);
    const id = String(ndjson(open.stdout())[0]?.id);
    open.child.kill("SIGINT");
    expect((await open.done).code).toBe(130);
    expect((await runCli(["embedded", "--stop"], { env: home.env })).code).toBe(0);

    const run = startCli(["plan", TASK, "--repo", repo], { env: home.env });
    await until(() => run.stderr().includes("starting the local planport worker…"), "the start");
    run.child.kill("SIGINT");
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(130);
    const { record, api } = embedded(home);
    expect(stderr).toContain(
      `planport: interrupted before a session was started. The local planport worker keeps running at ${record.url} (pid ${record.pid}) for 1 open session(s); \`planport stop <id>\` closes one, \`planport embedded --stop\` stops the worker.`,
    );
    expect(isAlive(record.pid)).toBe(true);
    expect((await api.listSessions({ limit: 10 })).data.map((s) => s.id)).toEqual([id]);
  }, 240_000);

  it("while the snapshot is being sent to a server: nothing is left running, exit 130", async () => {
    // A server that takes the request and never answers: the CLI is stuck before any session.
    let asked = false;
    const server = createServer((req) => {
      asked = true;
      req.resume();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      const home = isolatedHome();
      const run = startCli(
        ["plan", TASK, "--repo", fixtureRepo(), "--server", `http://127.0.0.1:${port}`].concat([
          "--token",
          "t",
        ]),
        { env: home.env },
      );
      await until(() => asked, "the first request");
      run.child.kill("SIGINT");
      const { code, stderr } = await run.done;
      expect(code, stderr).toBe(130);
      expect(stderr).toContain(
        "planport: interrupted before a session was started: nothing is left running.",
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 120_000);
});
