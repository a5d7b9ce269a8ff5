import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * Phase B, end to end: the real CLI against `wrangler dev` running the worker with the offline
 * planner, on a fixture repository. The test plays the browser (decisions over the API).
 */

const TOKEN = "e2e-cli-token";
const suite = offlineWorkerSuite(TOKEN, "planport-e2e-cli-");

function plan(extra: string[] = [], repo = suite.repo) {
  const home = isolatedHome();
  const run = startCli(
    [
      "plan",
      "add GitHub OAuth login next to the password login",
      "--repo",
      repo,
      "--server",
      suite.worker.url,
      "--token",
      TOKEN,
      "--interval",
      "500ms",
      "--json",
      ...extra,
    ],
    { env: home.env },
  );
  const sessionId = async () => {
    await run.waitForStdout('"event":"session"', 60_000);
    return String(ndjson(run.stdout())[0]?.id);
  };
  return { run, home, sessionId };
}

describe("planport plan against wrangler dev (offline planner)", () => {
  it("teleport writes the plan file, runs --on-teleport with the plan, exits 0", async () => {
    const hookOut = join(mkdtempSync(join(tmpdir(), "planport-hook-")), "plan.txt");
    const { run, home, sessionId } = plan(["--on-teleport", `cat > ${hookOut}`]);
    const id = await sessionId();
    const call = await waitForPlan(suite.api, id);
    await run.waitForStdout('"phase":"plan_ready"', 30_000);
    await suite.api.decide(id, { tool_use_id: call, decision: "teleport" });
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const outcome = ndjson(stdout).at(-1);
    expect(outcome).toMatchObject({
      event: "outcome",
      kind: "teleport",
      execution_target: "local",
      reject_count: 0,
    });
    const planFile = String(outcome?.plan_file);
    expect(planFile.startsWith(join(home.home, "plans"))).toBe(true);
    expect(readFileSync(planFile, "utf8").trim()).toBe(String(outcome?.plan).trim());
    expect(String(outcome?.plan).length).toBeGreaterThan(100);
    expect(readFileSync(hookOut, "utf8")).toBe(String(outcome?.plan));
    expect((await suite.api.getSession(id)).status).toBe("archived");
  }, 120_000);

  it("from a subfolder, snapshots the whole repository and plans with the subfolder as the area", async () => {
    const { run, sessionId } = plan([], join(suite.repo, "src", "auth"));
    const id = await sessionId();
    const call = await waitForPlan(suite.api, id);
    await suite.api.decide(id, { tool_use_id: call, decision: "teleport" });
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const text = String(ndjson(stdout).at(-1)?.plan);
    // Paths from the repository's root, its package.json read for the test command, and
    // its test folder (outside src/auth) paired with the login code.
    expect(text).toContain("`src/auth/login.ts`");
    expect(text).not.toMatch(/^\d+\. `login\.ts`/m);
    expect(text).toContain("`npm test`");
    expect(text).toContain("`test/login.test.ts`");
    expect(text).toContain("- Area hint: `src/auth`");
  }, 120_000);

  it("reject then teleport reports exactly one rejection", async () => {
    const { run, sessionId } = plan();
    const id = await sessionId();
    const first = await waitForPlan(suite.api, id);
    await suite.api.decide(id, {
      tool_use_id: first,
      decision: "reject",
      feedback: "Also cover the database migration.",
    });
    const second = await waitForPlan(suite.api, id);
    expect(second).not.toBe(first);
    await run.waitForStdout('"event":"rejected"', 30_000);
    await suite.api.decide(id, { tool_use_id: second, decision: "teleport" });
    const { code, stdout } = await run.done;
    expect(code).toBe(0);
    const lines = ndjson(stdout);
    expect(lines.filter((l) => l.event === "rejected")).toEqual([
      { event: "rejected", reject_count: 1 },
    ]);
    expect(lines.at(-1)).toMatchObject({ kind: "teleport", reject_count: 1 });
  }, 180_000);

  it("a session stopped while polling exits 3 (terminated)", async () => {
    const { run, sessionId } = plan();
    const id = await sessionId();
    await run.waitForStdout('"event":"phase"', 30_000);
    await suite.api.archive(id);
    const { code, stdout } = await run.done;
    expect(code).toBe(3);
    expect(ndjson(stdout).at(-1)).toMatchObject({
      event: "error",
      reason: "terminated",
      session_id: id,
    });
  }, 120_000);

  it("Ctrl-C exits 130 and leaves the session running; attach finishes the job", async () => {
    const { run, home, sessionId } = plan();
    const id = await sessionId();
    await run.waitForStdout('"event":"phase"', 30_000);
    run.child.kill("SIGINT");
    const first = await run.done;
    expect(first.code).toBe(130);
    expect(ndjson(first.stdout).at(-1)).toMatchObject({
      event: "error",
      reason: "stopped",
      session_id: id,
    });
    expect(existsSync(join(home.home, "sessions", `${id}.json`))).toBe(true);
    expect((await suite.api.getSession(id)).status).not.toBe("archived");

    const again = startCli(
      [
        "attach",
        id,
        "--server",
        suite.worker.url,
        "--token",
        TOKEN,
        "--interval",
        "500ms",
        "--json",
        "--repo",
        suite.repo,
      ],
      {
        env: home.env,
      },
    );
    const call = await waitForPlan(suite.api, id);
    await again.waitForStdout('"phase":"plan_ready"', 30_000);
    await suite.api.decide(id, { tool_use_id: call, decision: "teleport" });
    const second = await again.done;
    expect(second.code, second.stderr).toBe(0);
    expect(ndjson(second.stdout).at(-1)).toMatchObject({ event: "outcome", kind: "teleport" });
    expect(existsSync(join(home.home, "sessions", `${id}.json`))).toBe(false);
  }, 180_000);

  it("status, list and stop show and archive the session", async () => {
    const { run, home, sessionId } = plan();
    const id = await sessionId();
    const flags = ["--server", suite.worker.url, "--token", TOKEN];
    const status = startCli(["status", id, "--json", ...flags], { env: home.env });
    const { code, stdout } = await status.done;
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ id, planner: "offline" });
    const human = await startCli(["status", id, ...flags], { env: home.env }).done;
    expect(human.stdout).toMatch(/^variant\s+simple$/m);
    // Each link says what it is for, the deciding one first (issue 26).
    const session = await suite.api.getSession(id);
    expect(human.stdout).toContain(
      `review (decides)   ${session.review_url}\nshare (read-only)  ${session.share_url}\n`,
    );
    expect(human.stdout).not.toMatch(/reject/i);
    expect(human.stdout).toMatch(/^cost\s+\S+$/m);
    const list = await startCli(["list", ...flags], { env: home.env }).done;
    expect(list.stdout).toContain(id);
    expect(list.stdout.split("\n")[0]).toMatch(
      /^ID\s+TITLE\s+STATUS\s+PHASE\s+OUTCOME\s+KEEP PLANNING\s+COST\s+AGE\s+REVIEW$/,
    );
    expect((await startCli(["stop", id, ...flags], { env: home.env }).done).code).toBe(0);
    expect((await run.done).code).toBe(3);
  }, 120_000);

  it("one exit code and one sentence per situation, whatever the command (issue 26)", async () => {
    const { run, home, sessionId } = plan();
    const id = await sessionId();
    const flags = ["--server", suite.worker.url, "--token", TOKEN];
    const cli = (...args: string[]) => startCli([...args, ...flags], { env: home.env }).done;

    // The offline planner never runs a plan in the cloud: pull says so, and asks for nothing.
    const pull = await cli("pull", id);
    expect(pull.code).toBe(2);
    expect(pull.stderr).toContain(
      `Session ${id} was planned by the offline planner, which cannot run plans in the cloud: there are no changes to pull. Send the plan to your terminal instead.`,
    );
    // `plan` is waiting for this session on this machine: a second wait is refused with 8.
    const second = await cli("attach", id, "--json");
    expect(second.code).toBe(8);
    expect(ndjson(second.stdout)).toEqual([
      expect.objectContaining({
        event: "error",
        reason: "already_waiting",
        message: `Another planport on this machine (pid ${run.child.pid}) is already waiting for session ${id}; it will receive the plan.`,
      }),
    ]);

    const stop = await cli("stop", id, "--json");
    expect(stop.code).toBe(0);
    expect(ndjson(stop.stdout)).toEqual([expect.objectContaining({ event: "stopped", id })]);
    expect((await run.done).code).toBe(3);

    // Ended: stop, pull and attach say how, change nothing and exit 3; status reports (0).
    const ended = `Session ${id} has already ended (stopped).`;
    for (const command of ["stop", "pull", "attach"]) {
      const again = await cli(command, id, "--json");
      expect(again.code, command).toBe(3);
      expect(ndjson(again.stdout).at(-1), command).toMatchObject({
        event: "error",
        reason: "terminated",
        message: ended,
        session_id: id,
      });
    }
    expect((await cli("status", id)).code).toBe(0);
    const list = await cli("list");
    const row = list.stdout.split("\n").find((l) => l.startsWith(id));
    expect(row?.split(/\s{2,}/).slice(3, 5)).toEqual(["done", "stopped"]);

    // An id no session has, for this token: 6 and the one sentence.
    const unknown = "ses_00000000000000000000000000";
    for (const command of ["status", "stop", "pull", "attach"]) {
      const missing = await cli(command, unknown, "--json");
      expect(missing.code, command).toBe(6);
      expect(ndjson(missing.stdout).at(-1)?.message, command).toBe(
        `No session ${unknown} is visible to this token: check the id, and that the token is the requester's or an approver's.`,
      );
    }
  }, 180_000);
});
