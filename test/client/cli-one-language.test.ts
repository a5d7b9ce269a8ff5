import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/protocol/index.ts";
import {
  executedSession,
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeSession,
  startFakeFeed,
} from "./fake-feed.ts";
import { fixtureRepo } from "./fixture-repo.ts";
import { isolatedHome, ndjson, runCli, startCli } from "./run-cli.ts";

/**
 * Issue 26, "the CLI speaks one language": the real CLI process against the fake feed. Each
 * situation has one exit code and one sentence whatever the command (an unknown id, a session
 * that already ended, a planner that cannot execute, a second wait on this machine); `--json`
 * answers every command's results and errors as JSON lines on stdout; and what would fail late
 * (a missing agent, an unwritable plans folder, a server that is not there) is refused before
 * any work.
 */

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  home = isolatedHome();
});
afterEach(() => feed.close());

const server = () => ["--server", feed.url, "--token", FAKE_TOKEN];
const UNKNOWN_ID = "ses_01jxnothere000000000000000";
const unknownSentence = (id: string) =>
  `No session ${id} is visible to this token: check the id, and that the token is the requester's or an approver's.`;
const endedSentence = (how: string) => `Session ${FAKE_SESSION_ID} has already ended (${how}).`;

const stopped = (over: Partial<Session> = {}) =>
  fakeSession({
    status: "archived",
    phase: "done",
    outcome: { kind: "terminated", subtype: "archived" },
    ...over,
  });

/** The only line of a `--json` run's stdout. */
function onlyLine(stdout: string): Record<string, unknown> {
  const lines = ndjson(stdout);
  expect(lines, stdout).toHaveLength(1);
  return lines[0] as Record<string, unknown>;
}

describe("an unknown session id", () => {
  it.each([
    ["attach", ["--interval", "50ms", "--timeout", "1m"]],
    ["status", []],
    ["stop", []],
    ["pull", []],
    ["review", []],
  ])(
    "%s exits 6 with the one sentence (as a JSON error line where --json is allowed)",
    async (command, extra) => {
      const json = command !== "review";
      const args = [command, UNKNOWN_ID, ...server(), ...extra, ...(json ? ["--json"] : [])];
      const { code, stdout, stderr } = await runCli(args, { env: home.env });
      expect(code, stderr).toBe(6);
      if (json) {
        expect(onlyLine(stdout)).toMatchObject({
          event: "error",
          reason: "network_or_unknown",
          message: unknownSentence(UNKNOWN_ID),
          session_id: UNKNOWN_ID,
        });
      } else {
        expect(stderr).toContain(unknownSentence(UNKNOWN_ID));
      }
    },
  );
});

describe("a session that has already ended", () => {
  it("stop says how an approved session ended, changes nothing and exits 3", async () => {
    feed.session = executedSession();
    const { code, stdout, stderr } = await runCli(["stop", FAKE_SESSION_ID, ...server()], {
      env: home.env,
    });
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toContain(endedSentence("approved and run in the cloud"));
    expect(stderr).not.toMatch(/stopped \(archived\)/);
    expect(feed.requests.some((r) => r.path.endsWith("/archive"))).toBe(false);
  });

  it("stop --json: the error line says it ended and how (superseded)", async () => {
    feed.session = stopped({ outcome: { kind: "terminated", subtype: "superseded" } });
    const { code, stdout } = await runCli(["stop", FAKE_SESSION_ID, ...server(), "--json"], {
      env: home.env,
    });
    expect(code).toBe(3);
    expect(onlyLine(stdout)).toEqual({
      event: "error",
      reason: "terminated",
      message: endedSentence("superseded"),
      session_id: FAKE_SESSION_ID,
      ended: "superseded",
    });
  });

  it("pull of a stopped session exits 3 without asking for its changes", async () => {
    feed.session = stopped({ planner: "anthropic", can_execute_remotely: true });
    const { code, stderr } = await runCli(["pull", FAKE_SESSION_ID, ...server()], {
      env: home.env,
    });
    expect(code).toBe(3);
    expect(stderr).toContain(endedSentence("stopped"));
    expect(feed.requests.some((r) => r.path.endsWith("/changes"))).toBe(false);
  });

  it("attach to a failed session exits 3 at once with the sentence", async () => {
    feed.session = fakeSession({
      status: "idle",
      phase: "done",
      outcome: { kind: "terminated", subtype: "error_max_turns" },
    });
    const { code, stdout } = await runCli(
      ["attach", FAKE_SESSION_ID, ...server(), "--json", "--interval", "50ms", "--timeout", "1m"],
      { env: home.env },
    );
    expect(code).toBe(3);
    expect(ndjson(stdout).at(-1)).toMatchObject({
      event: "error",
      reason: "terminated",
      message: endedSentence("failed"),
      session_id: FAKE_SESSION_ID,
    });
    expect(feed.eventsRequests()).toHaveLength(0);
  });

  it("review of a stopped session exits 3 (before asking for a terminal)", async () => {
    feed.session = stopped();
    const { code, stderr } = await runCli(["review", FAKE_SESSION_ID, ...server()], {
      env: home.env,
    });
    expect(code).toBe(3);
    expect(stderr).toContain(endedSentence("stopped"));
  });

  it("status is a read-only report: exit 0 for an ended session", async () => {
    feed.session = stopped();
    const { code } = await runCli(["status", FAKE_SESSION_ID, ...server()], { env: home.env });
    expect(code).toBe(0);
  });
});

describe("truthful commands", () => {
  it("pull of an offline-planner session says it can never have changes and exits 2", async () => {
    feed.session = fakeSession({ phase: "plan_ready", status: "requires_action" });
    const { code, stdout, stderr } = await runCli(["pull", FAKE_SESSION_ID, ...server()], {
      env: home.env,
    });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(
      `Session ${FAKE_SESSION_ID} was planned by the offline planner, which cannot run plans in the cloud: there are no changes to pull. Send the plan to your terminal instead.`,
    );
    expect(stderr).not.toMatch(/no changes \(yet\)/);
  });

  it.each([
    ["approved", executedSession()],
    ["sent to terminal", stopped({ outcome: { kind: "teleport", execution_target: "local" } })],
    ["stopped", stopped()],
    ["superseded", stopped({ outcome: { kind: "terminated", subtype: "superseded" } })],
    [
      "failed",
      stopped({ status: "idle", outcome: { kind: "terminated", subtype: "error_max_turns" } }),
    ],
  ])("list shows the outcome %s next to the phase", async (label, session) => {
    feed.session = session;
    const { code, stdout } = await runCli(["list", ...server()], { env: home.env });
    expect(code).toBe(0);
    const [header, row] = stdout.trimEnd().split("\n");
    const columns = header?.split(/\s{2,}/) ?? [];
    expect(columns.slice(3, 5)).toEqual(["PHASE", "OUTCOME"]);
    expect(row?.split(/\s{2,}/)[4]).toBe(label);
  });

  it("watch prints the outcome beside `done`, and its --json lines carry the Session's outcome", async () => {
    feed.session = stopped({ outcome: { kind: "terminated", subtype: "superseded" } });
    const plain = startCli(["watch", ...server(), "--interval", "50ms"], { env: home.env });
    await plain.waitForStdout("done (superseded)", 60_000);
    plain.child.kill("SIGINT");
    expect((await plain.done).code).toBe(130);

    const json = startCli(["watch", ...server(), "--json", "--interval", "50ms"], {
      env: home.env,
    });
    await json.waitForStdout('"event":"phase"', 60_000);
    json.child.kill("SIGINT");
    const { stdout } = await json.done;
    expect(ndjson(stdout)[0]).toEqual({
      event: "phase",
      id: FAKE_SESSION_ID,
      phase: "done",
      outcome: { kind: "terminated", subtype: "superseded" },
    });
  });
});

describe("--json on every command", () => {
  it("stop --json prints one stopped line and nothing else on stdout", async () => {
    const { code, stdout, stderr } = await runCli(
      ["stop", FAKE_SESSION_ID, ...server(), "--json"],
      { env: home.env },
    );
    expect(code, stderr).toBe(0);
    expect(onlyLine(stdout)).toMatchObject({
      event: "stopped",
      id: FAKE_SESSION_ID,
      status: "archived",
    });
  });

  it("pull --json prints the changes as one line", async () => {
    feed.session = executedSession();
    feed.changes = "diff --git a/x b/x\n";
    const { code, stdout } = await runCli(["pull", FAKE_SESSION_ID, ...server(), "--json"], {
      env: home.env,
    });
    expect(code).toBe(0);
    expect(onlyLine(stdout)).toEqual({
      event: "changes",
      id: FAKE_SESSION_ID,
      diff: "diff --git a/x b/x\n",
    });
  });

  it("status --json of a refused token is an error line, not text", async () => {
    const { code, stdout } = await runCli(
      ["status", FAKE_SESSION_ID, "--server", feed.url, "--token", "nope", "--json"],
      { env: home.env },
    );
    expect(code).toBe(6);
    expect(onlyLine(stdout)).toMatchObject({ event: "error", reason: "network_or_unknown" });
  });

  it("embedded --json and embedded --stop --json say whether a worker runs", async () => {
    const shown = await runCli(["embedded", "--json"], { env: home.env });
    expect(shown.code).toBe(0);
    expect(onlyLine(shown.stdout)).toEqual({ event: "embedded", running: false });
    const stop = await runCli(["embedded", "--stop", "--json"], { env: home.env });
    expect(stop.code).toBe(0);
    expect(onlyLine(stop.stdout)).toEqual({ event: "embedded_stopped", was_running: false });
  });

  it("bad flags and review --json are refused with a usage line (exit 2)", async () => {
    for (const args of [
      ["list", ...server(), "--json", "--limit", "0"],
      ["status", FAKE_SESSION_ID, "--json", "--no-such-flag"],
      ["watch", ...server(), "--json", "--interval", "soon"],
      ["review", FAKE_SESSION_ID, ...server(), "--json"],
    ]) {
      const { code, stdout } = await runCli(args, { env: home.env });
      expect(code, args.join(" ")).toBe(2);
      expect(onlyLine(stdout), args.join(" ")).toMatchObject({ event: "error", reason: "usage" });
    }
  });
});

describe("refused before any work", () => {
  /** A folder with no programs in it: no preset's agent is on PATH. */
  const noAgents = () => mkdtempSync(join(tmpdir(), "planport-empty-path-"));

  it("--on-teleport with a preset that is not installed exits 2 at the start (plan and attach)", async () => {
    const env = { ...home.env, PATH: noAgents() };
    const repo = fixtureRepo();
    for (const args of [
      ["plan", "add OAuth", "--repo", repo, ...server(), "--on-teleport", "codex", "--json"],
      ["attach", FAKE_SESSION_ID, ...server(), "--on-teleport", "codex", "--json"],
    ]) {
      const { code, stdout } = await runCli(args, { env });
      expect(code, args[0]).toBe(2);
      expect(onlyLine(stdout)).toMatchObject({
        event: "error",
        reason: "usage",
        message:
          "codex is not installed (no `codex` on PATH). Install it with: npm i -g @openai/codex",
      });
    }
    expect(feed.requests).toEqual([]);
  });

  it("an unwritable --plans-dir exits 2 at the start", async () => {
    const repo = fixtureRepo();
    const { code, stdout } = await runCli(
      [
        "plan",
        "add OAuth",
        "--repo",
        repo,
        ...server(),
        "--plans-dir",
        "README.md/plans",
        "--json",
      ],
      { env: home.env, cwd: repo },
    );
    expect(code).toBe(2);
    expect(String(onlyLine(stdout).message)).toMatch(
      /^--plans-dir README\.md\/plans cannot hold plan files: .*README\.md is not a folder/,
    );
    expect(feed.requests).toEqual([]);
  });

  describe("a server that is not there", () => {
    let other: Server | null = null;
    afterEach(async () => {
      if (other) {
        other.closeAllConnections();
        other.close();
        await once(other, "close");
      }
      other = null;
    });

    it("exits 6 before snapshotting: no answer at the port", async () => {
      // A port that was free a moment ago: nothing listens there.
      const probe = createServer().listen(0, "127.0.0.1");
      await once(probe, "listening");
      const port = (probe.address() as { port: number }).port;
      probe.close();
      await once(probe, "close");
      const url = `http://127.0.0.1:${port}`;
      const { code, stderr } = await runCli(
        ["plan", "add OAuth", "--repo", fixtureRepo(), "--server", url, "--token", "t"],
        { env: home.env },
      );
      expect(code).toBe(6);
      expect(stderr).toContain(`planport: could not reach ${url}: `);
      expect(stderr).toContain("(from --server)");
      expect(stderr).not.toMatch(/snapshot/);
    });

    it("exits 6 before snapshotting: a server that is not a planport worker", async () => {
      other = createServer((_req, res) => {
        res.writeHead(404, { "content-type": "text/html" });
        res.end("<h1>not here</h1>");
      }).listen(0, "127.0.0.1");
      await once(other, "listening");
      const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
      const { code, stdout } = await runCli(
        ["plan", "add OAuth", "--repo", fixtureRepo(), "--json"],
        { env: { ...home.env, PLANPORT_URL: url, PLANPORT_TOKEN: "t" } },
      );
      expect(code).toBe(6);
      expect(onlyLine(stdout)).toMatchObject({
        event: "error",
        reason: "network_or_unknown",
        message: expect.stringMatching(
          new RegExp(`^could not reach ${url}: .*answered 404.*\\(from PLANPORT_URL\\)$`),
        ),
      });
    });
  });
});
