import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type Api, ApiError, createApi } from "../../local-client/http/api.ts";
import { fixtureRepo, waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";

/**
 * Team review end to end (issue 17): the real CLI against `wrangler dev` with labelled tokens.
 * Alice plans with `--approvers bob`; bob finds the session with `planport list --awaiting-me`;
 * alice's own token cannot send the plan home; bob's teleport reaches alice's polling terminal.
 */

const ALICE = "cli-team-alice";
const BOB = "cli-team-bob";
let worker: WorkerProcess;
let alice: Api;
let bob: Api;
let repo: string;
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-team-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: `alice:${ALICE},bob:${BOB}`, PLANPORT_PLANNER: "offline" },
  });
  alice = createApi({ server: worker.url, token: ALICE });
  bob = createApi({ server: worker.url, token: BOB });
  repo = fixtureRepo();
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
});

describe("planport with required approvers (wrangler dev, offline planner)", () => {
  it("--approvers, list --awaiting-me, and the approver's teleport reaching the requester's terminal", async () => {
    const home = isolatedHome();
    const run = startCli(
      [
        "plan",
        "add GitHub OAuth login next to the password login",
        "--approvers",
        "bob",
        "--repo",
        repo,
        "--server",
        worker.url,
        "--token",
        ALICE,
        "--interval",
        "500ms",
        "--json",
      ],
      { env: home.env },
    );
    try {
      await run.waitForStdout('"event":"session"', 60_000);
      const id = String(ndjson(run.stdout())[0]?.id);
      expect((await alice.getSession(id)).approvers).toEqual(["bob"]);

      const listed = await startCli(
        ["list", "--awaiting-me", "--json", "--server", worker.url, "--token", BOB],
        { env: isolatedHome().env },
      ).done;
      expect(listed.code, listed.stderr).toBe(0);
      expect(
        (JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((s) => s.id),
      ).toEqual([id]);
      const none = await startCli(
        ["list", "--awaiting-me", "--server", worker.url, "--token", ALICE],
        { env: isolatedHome().env },
      ).done;
      expect(none.code).toBe(0);
      expect(none.stderr).toContain("no session is waiting for your approval");

      const call = await waitForPlan(alice, id);
      await run.waitForStdout('"phase":"plan_ready"', 30_000);
      const refused = await alice
        .decide(id, { tool_use_id: call, decision: "teleport" })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe("approval_required");

      const sent = await bob.decide(id, { tool_use_id: call, decision: "teleport" });
      expect(sent.decided_by).toBe("bob");
      const { code, stdout, stderr } = await run.done;
      expect(code, stderr).toBe(0);
      expect(ndjson(stdout).at(-1)).toMatchObject({
        event: "outcome",
        kind: "teleport",
        execution_target: "local",
      });
      const after = await startCli(
        ["list", "--awaiting-me", "--json", "--server", worker.url, "--token", BOB],
        { env: isolatedHome().env },
      ).done;
      expect((JSON.parse(after.stdout) as { data: unknown[] }).data).toEqual([]);
    } finally {
      run.child.kill("SIGINT");
    }
  }, 180_000);

  it("refuses a malformed approver label before touching the network (exit 2)", async () => {
    const { code, stderr } = await startCli(
      ["plan", "x", "--approvers", "Bob", "--repo", repo, "--server", worker.url, "--token", ALICE],
      { env: isolatedHome().env },
    ).done;
    expect(code).toBe(2);
    expect(stderr).toContain("Bob is not an owner label");
  }, 60_000);
});
