import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createApi } from "../../local-client/http/api.ts";
import { readableText } from "../../src/protocol/index.ts";
import { fixtureRepo, waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, runCli, startCli } from "../client/run-cli.ts";

/**
 * A new user's first minute through the real CLI and the embedded local worker (issue 32):
 * `planport show` prints the plan (a revision, JSON), a session just created shows "plan
 * ready" without waiting out a poll interval, a `--plans-dir` that cannot be used is refused
 * before anything starts, teleported plans are private (0700 / 0600), and planning an empty
 * folder says so.
 */

const TASK = "add GitHub OAuth login next to the password login";
const homes: ReturnType<typeof isolatedHome>[] = [];

afterAll(async () => {
  for (const home of homes) await runCli(["embedded", "--stop"], { env: home.env });
});

function home() {
  const h = isolatedHome();
  homes.push(h);
  return h;
}

/** The embedded worker's API with its token, as the CLI of `h` uses it. */
function embeddedApi(h: ReturnType<typeof isolatedHome>) {
  const root = join(h.data, "planport");
  const record = JSON.parse(readFileSync(join(root, "embedded", "worker.json"), "utf8")) as {
    url: string;
  };
  return createApi({ server: record.url, token: readFileSync(join(root, "token"), "utf8").trim() });
}

const phaseOf = (stdout: string) =>
  ndjson(stdout)
    .filter((l) => l.event === "phase")
    .map((l) => l.phase);

describe("planport show, and the first plan without a poll interval's wait", () => {
  it("shows plan ready with a 10-minute interval, then prints each revision and its JSON", async () => {
    const h = home();
    const repo = fixtureRepo();
    // With a 10-minute interval, only the quick polling of a new session can show the plan
    // before the 2-minute timeout: the old first wait was a whole interval.
    const run = startCli(
      ["plan", TASK, "--repo", repo, "--json", "--interval", "10m", "--timeout", "2m"],
      { env: h.env },
    );
    await run.waitForStdout('"phase":"plan_ready"', 150_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    const api = embeddedApi(h);

    const first = await runCli(["show", id], { env: h.env });
    expect(first.code, first.stderr).toBe(0);
    const plan1 = await api.plan(id);
    expect(plan1.revision).toBe(1);
    expect(first.stdout).toBe(`${readableText(plan1.content).trimEnd()}\n`);

    // Keep planning: revision 2; `--revision 1` still prints the first.
    await api.decide(id, {
      tool_use_id: await waitForPlan(api, id),
      decision: "reject",
      feedback: "Also cover the database migration.",
    });
    for (let i = 0; i < 600 && (await api.plan(id)).revision < 2; i += 1) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const latest = await runCli(["show", id], { env: h.env });
    const plan2 = await api.plan(id);
    expect(plan2.revision).toBe(2);
    expect(latest.stdout).toBe(`${readableText(plan2.content).trimEnd()}\n`);
    const older = await runCli(["show", id, "--revision", "1"], { env: h.env });
    expect(older.stdout).toBe(first.stdout);

    const json = await runCli(["show", id, "--revision", "2", "--json"], { env: h.env });
    expect(JSON.parse(json.stdout)).toEqual(plan2);

    const missing = await runCli(["show", id, "--revision", "9"], { env: h.env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("The plan has no revision 9: its revisions are 1 to 2.");
    const bad = await runCli(["show", id, "--revision", "first"], { env: h.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--revision must be a whole number from 1");
    const unknown = await runCli(["show", "ses_00000000000000000000000000"], { env: h.env });
    expect(unknown.code).toBe(6);

    run.child.kill("SIGINT");
    expect((await run.done).code).toBe(130);
    expect(phaseOf(run.stdout()).slice(0, 2)).toEqual(["running", "plan_ready"]);
  }, 300_000);

  it("never starts the embedded worker: it says it is not running", async () => {
    const h = home();
    const shown = await runCli(["show", "ses_00000000000000000000000000"], { env: h.env });
    expect(shown.code).toBe(6);
    expect(shown.stderr).toMatch(/not running/);
    expect(existsSync(join(h.data, "planport", "embedded", "worker.json"))).toBe(false);
  });
});

describe("--plans-dir is checked before anything starts", () => {
  for (const [what, dir] of [
    ["outside the repository", () => mkdtempSync(join(tmpdir(), "planport-elsewhere-"))],
    ["a folder that does not exist", () => "/nonexistent/dir"],
  ] as const) {
    it(`refuses ${what} with exit 2, before the worker, the snapshot or a session`, async () => {
      const h = home();
      const requested = dir();
      const run = await runCli(["plan", TASK, "--repo", fixtureRepo(), "--plans-dir", requested], {
        env: h.env,
      });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`--plans-dir ${requested} cannot hold plan files:`);
      expect(run.stderr).toContain("is outside the repository");
      expect(run.stderr).not.toMatch(/snapshotting|session ses_/);
      expect(existsSync(join(h.data, "planport", "embedded", "worker.json"))).toBe(false);
    });
  }
});

describe("teleported plans are private", () => {
  it("writes the plan 0600 in a 0700 folder, and narrows a plans folder an old version left open", async () => {
    const h = home();
    // An earlier version left ~/.planport/plans readable by every user.
    mkdirSync(join(h.home, "plans"), { recursive: true, mode: 0o755 });
    const repo = fixtureRepo();
    const run = startCli(["plan", TASK, "--repo", repo, "--json"], { env: h.env });
    await run.waitForStdout('"phase":"plan_ready"', 150_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    const api = embeddedApi(h);
    await api.decide(id, { tool_use_id: await waitForPlan(api, id), decision: "teleport" });
    const { code } = await run.done;
    expect(code, run.stderr()).toBe(0);
    const dir = join(h.home, "plans");
    const [file] = readdirSync(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(h.home).mode & 0o077).toBe(0);
    expect(statSync(join(dir, file ?? "")).mode & 0o777).toBe(0o600);
  }, 300_000);
});

describe("planning an empty folder", () => {
  it("says the planner sees an empty repository", async () => {
    const h = home();
    const empty = mkdtempSync(join(tmpdir(), "planport-empty-"));
    const run = startCli(["plan", TASK, "--repo", empty, "--json"], { env: h.env });
    await run.waitForStdout('"event":"session"', 150_000);
    run.child.kill("SIGINT");
    await run.done;
    expect(run.stderr()).toContain(
      `${empty} holds no file to plan against: the planner sees an empty repository.`,
    );
  }, 300_000);
});
