import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeSession,
  startFakeFeed,
} from "./fake-feed.ts";
import { ev } from "./feed-events.ts";
import { isolatedHome, ndjson, runCli, startCli } from "./run-cli.ts";

/**
 * The real CLI process against the fake feed server: `attach` with `--json` prints only the
 * NDJSON lines and exits with the codes of docs/PROTOCOL.md.
 */

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;

beforeEach(async () => {
  feed = await startFakeFeed();
  home = isolatedHome();
  mkdirSync(join(home.home, ".."), { recursive: true });
});
afterEach(() => feed.close());

const fast = ["--interval", "50ms"];
const attach = (...extra: string[]) => [
  "attach",
  FAKE_SESSION_ID,
  "--server",
  feed.url,
  "--token",
  FAKE_TOKEN,
  "--json",
  ...fast,
  ...extra,
];

describe("planport attach --json", () => {
  it("teleport: session, rejected, outcome lines; plan file written; --on-teleport gets stdin and env; exit 0", async () => {
    feed.log.append(ev.init(), ev.exitPlanMode("p1"), ev.reject("p1"), ev.exitPlanMode("p2"));
    feed.log.append(ev.teleport("p2", "# Ship it\n\n1. step\n"), ev.result("archived"));
    const out = join(home.home, "..", "hook-out");
    const hook = `cat > ${out}.stdin; printf '%s\\n%s\\n' "$PLANPORT_PLAN_FILE" "$PLANPORT_FRESH_CONTEXT" > ${out}.env; echo hook-ran`;
    const { code, stdout, stderr } = await runCli(attach("--on-teleport", hook), { env: home.env });
    expect(code, stderr).toBe(0);
    const lines = ndjson(stdout);
    expect(lines.map((l) => l.event)).toEqual(["session", "rejected", "outcome"]);
    expect(lines[0]).toEqual({
      event: "session",
      id: FAKE_SESSION_ID,
      review_url: feed.session.review_url,
    });
    expect(lines[1]).toEqual({ event: "rejected", reject_count: 1 });
    const outcome = lines[2]!;
    expect(outcome).toMatchObject({
      event: "outcome",
      kind: "teleport",
      execution_target: "local",
      plan: "# Ship it\n\n1. step\n",
      reject_count: 1,
    });
    const planFile = String(outcome.plan_file);
    expect(planFile).toBe(join(home.home, "plans", "add-oauth-login.md"));
    expect(readFileSync(planFile, "utf8")).toBe("# Ship it\n\n1. step\n");
    expect(readFileSync(`${out}.stdin`, "utf8")).toBe("# Ship it\n\n1. step\n");
    expect(readFileSync(`${out}.env`, "utf8")).toBe(`${planFile}\n0\n`);
    // The hook's own stdout goes to stderr in --json mode: stdout stays NDJSON only.
    expect(stderr).toContain("hook-ran");
  });

  it("a second teleport of the same title never overwrites the first plan file", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.teleport("p1", "first"));
    const first = ndjson((await runCli(attach(), { env: home.env })).stdout).at(-1);
    const second = ndjson((await runCli(attach(), { env: home.env })).stdout).at(-1);
    expect(first?.plan_file).not.toBe(second?.plan_file);
    expect(readdirSync(join(home.home, "plans")).sort()).toEqual([
      "add-oauth-login-2.md",
      "add-oauth-login.md",
    ]);
  });

  it("approved: execution target remote, exit 0, no plan file", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "cloud plan"));
    const { code, stdout } = await runCli(attach(), { env: home.env });
    expect(code).toBe(0);
    expect(ndjson(stdout).at(-1)).toEqual({
      event: "outcome",
      kind: "approved",
      execution_target: "remote",
      plan: "cloud plan",
      reject_count: 0,
    });
    expect(existsSync(join(home.home, "plans"))).toBe(false);
  });

  it("phase lines once per change", async () => {
    feed.log.append(ev.init(), ev.text());
    feed.onEventsRequest = (n) => {
      if (n === 3) feed.log.append(ev.exitPlanMode("p1"), ev.result("success"));
      if (n === 6) feed.log.append(ev.approve("p1", "ok"));
    };
    const { stdout } = await runCli(attach(), { env: home.env });
    expect(ndjson(stdout).map((l) => (l.event === "phase" ? `phase:${l.phase}` : l.event))).toEqual(
      ["session", "phase:running", "phase:plan_ready", "outcome"],
    );
  });

  it.each([
    ["terminated", 3, () => feed.log.append(ev.result("error_max_turns", "too many turns"))],
    ["timeout_no_plan", 5, () => feed.log.append(ev.text())],
    ["timeout_pending", 4, () => feed.log.append(ev.exitPlanMode("p1"))],
    [
      "extract_marker_missing",
      7,
      () => feed.log.append(ev.exitPlanMode("p1"), ev.toolResult("p1", "yes", false)),
    ],
  ] as const)("%s exits %i with an error line", async (reason, exit, script) => {
    script();
    // timeout_no_plan needs only the deadline to pass. timeout_pending also needs a poll to see
    // the pending plan first, and the two other endings are on the first page: a busy machine
    // is given ample time to fetch it (the first poll comes after 50 ms).
    const timeout =
      reason === "timeout_no_plan" ? "300ms" : reason === "timeout_pending" ? "10s" : "5m";
    const { code, stdout } = await runCli(attach("--timeout", timeout), { env: home.env });
    expect(code).toBe(exit);
    const last = ndjson(stdout).at(-1);
    expect(last).toMatchObject({
      event: "error",
      reason,
      session_id: FAKE_SESSION_ID,
      reject_count: 0,
    });
    expect(String(last?.message).length).toBeGreaterThan(10);
  });

  it("a refused token exits 6 (network_or_unknown) after one events request", async () => {
    const { code, stdout } = await runCli(
      ["attach", FAKE_SESSION_ID, "--server", feed.url, "--token", "nope", "--json"],
      { env: home.env },
    );
    expect(code).toBe(6);
    expect(ndjson(stdout)).toEqual([
      expect.objectContaining({
        event: "error",
        reason: "network_or_unknown",
        session_id: FAKE_SESSION_ID,
      }),
    ]);
    expect(feed.eventsRequests()).toHaveLength(0);
  });

  it("an unreachable server exits 6 and names where the server came from", async () => {
    const { code, stdout } = await runCli(["attach", FAKE_SESSION_ID, "--json"], {
      env: { ...home.env, PLANPORT_URL: "http://127.0.0.1:9", PLANPORT_TOKEN: "t" },
    });
    expect(code).toBe(6);
    expect(String(ndjson(stdout)[0]?.message)).toContain("PLANPORT_URL");
  });

  it("bad input exits 2 with a usage error line", async () => {
    for (const args of [
      ["attach", "not-a-session", "--server", feed.url, "--token", FAKE_TOKEN, "--json"],
      attach("--interval", "3"),
      attach("--repo", "/definitely/not/here"),
    ]) {
      const { code, stdout } = await runCli(args, { env: home.env });
      expect(code).toBe(2);
      expect(ndjson(stdout)).toEqual([
        expect.objectContaining({ event: "error", reason: "usage" }),
      ]);
    }
    expect((await runCli(["attach", "--server", feed.url], { env: home.env })).code).toBe(2);
  });

  it("Ctrl-C exits 130, leaves the session, and attach resumes from the saved cursor and count", async () => {
    feed.log.append(
      ev.exitPlanMode("p1"),
      ev.reject("p1"),
      ev.exitPlanMode("p2"),
      ev.result("success"),
    );
    const run = startCli(attach(), { env: home.env });
    await run.waitForStdout('"phase":"plan_ready"');
    run.child.kill("SIGINT");
    const first = await run.done;
    expect(first.code).toBe(130);
    const lines = ndjson(first.stdout);
    expect(lines.at(-1)).toMatchObject({ event: "error", reason: "stopped", reject_count: 1 });
    expect(String(lines.at(-1)?.message)).toContain(`planport attach ${FAKE_SESSION_ID}`);
    const sidecar = JSON.parse(
      readFileSync(join(home.home, "sessions", `${FAKE_SESSION_ID}.json`), "utf8"),
    );
    expect(sidecar).toMatchObject({
      cursor: "evt_0000000000000004",
      scanner: { rejectCount: 1, openPlanCalls: ["p2"] },
    });
    expect(feed.requests.some((r) => r.path.endsWith("/archive"))).toBe(false);

    const before = feed.eventsRequests().length;
    feed.log.append(ev.approve("p2", "second try"));
    const second = await runCli(attach(), { env: home.env });
    expect(second.code).toBe(0);
    expect(ndjson(second.stdout).at(-1)).toMatchObject({
      kind: "approved",
      plan: "second try",
      reject_count: 1,
    });
    expect(feed.eventsRequests()[before]?.query.get("after_id")).toBe("evt_0000000000000004");
    expect(existsSync(join(home.home, "sessions", `${FAKE_SESSION_ID}.json`))).toBe(false);
  });

  it("a second poll of the same session from this machine is refused while the first runs: exit 8", async () => {
    feed.log.append(ev.exitPlanMode("p1"));
    const first = startCli(attach(), { env: home.env });
    await first.waitForStdout('"phase":"plan_ready"');
    const second = await runCli(attach(), { env: home.env });
    expect(second.code).toBe(8);
    expect(ndjson(second.stdout)).toEqual([
      {
        event: "error",
        reason: "already_waiting",
        message: `Another planport on this machine (pid ${first.child.pid}) is already waiting for session ${FAKE_SESSION_ID}; it will receive the plan.`,
        session_id: FAKE_SESSION_ID,
        reject_count: 0,
      },
    ]);
    first.child.kill("SIGINT");
    expect((await first.done).code).toBe(130);
  });

  it("a stale lock of a dead process is taken over", async () => {
    mkdirSync(join(home.home, "sessions"), { recursive: true });
    writeFileSync(join(home.home, "sessions", `${FAKE_SESSION_ID}.lock`), "999999\n");
    feed.log.append(ev.exitPlanMode("p1"), ev.approve("p1", "x"));
    expect((await runCli(attach(), { env: home.env })).code).toBe(0);
  });

  it("a --plans-dir outside the repository is refused before the wait (exit 2), nothing read", async () => {
    const repo = join(home.home, "..", "repo");
    mkdirSync(repo, { recursive: true });
    feed.log.append(ev.exitPlanMode("p1"), ev.teleport("p1", "plan"));
    const { code, stdout, stderr } = await runCli(
      attach("--repo", repo, "--plans-dir", join(repo, "..", "elsewhere")),
      { env: home.env },
    );
    expect(code).toBe(2);
    // --json: the refusal is the one error line.
    expect(stderr).toBe("");
    expect(ndjson(stdout)).toEqual([
      expect.objectContaining({
        event: "error",
        message: expect.stringMatching(/cannot hold plan files: .* is outside the repository/),
      }),
    ]);
    expect(feed.requests.length).toBe(0);
  });

  it("without --json, stdout stays empty and plain lines go to stderr", async () => {
    feed.session = fakeSession({ title: "Plain mode" });
    feed.log.append(
      ev.exitPlanMode("p1"),
      ev.reject("p1"),
      ev.exitPlanMode("p2"),
      ev.teleport("p2", "p"),
    );
    const { code, stdout, stderr } = await runCli(
      ["attach", FAKE_SESSION_ID, "--server", feed.url, "--token", FAKE_TOKEN, ...fast],
      { env: home.env },
    );
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toContain(`session ${FAKE_SESSION_ID}`);
    // The review page's words (issue 26): its button says "Keep planning", so the CLI does too.
    expect(stderr).toContain("keep planning (1 so far): the planner is revising");
    expect(stderr).toContain(
      `plan approved and sent to terminal (after keep planning ×1): ${join(home.home, "plans", "plain-mode.md")}`,
    );
    expect(stderr).not.toMatch(/reject/i);
  });

  it("a failing --on-teleport command exits 1 and keeps the plan file", async () => {
    feed.log.append(ev.exitPlanMode("p1"), ev.teleport("p1", "p"));
    const { code, stdout, stderr } = await runCli(attach("--on-teleport", "exit 9"), {
      env: home.env,
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/exited with 9/);
    expect(existsSync(String(ndjson(stdout).at(-1)?.plan_file))).toBe(true);
  });
});
