import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionList } from "../../src/protocol/index.ts";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * Best-of-N end to end: the real CLI (`plan --attempts 3`) against `wrangler dev` with the
 * offline planner. The CLI starts three sessions of one group on one snapshot, shows how many
 * plans are ready, and ends with the first one teleported; the server supersedes the others.
 * The test plays the browser (decisions over the API).
 */

const TOKEN = "e2e-group-token";
const suite = offlineWorkerSuite(TOKEN, "planport-e2e-group-");

function planGroup(extra: string[]) {
  const home = isolatedHome();
  const run = startCli(
    [
      "plan",
      "add GitHub OAuth login next to the password login",
      "--repo",
      suite.repo,
      "--server",
      suite.worker.url,
      "--token",
      TOKEN,
      "--interval",
      "500ms",
      "--attempts",
      "3",
      ...extra,
    ],
    { env: home.env },
  );
  return { run, home };
}

async function groupList(group: string): Promise<SessionList> {
  const res = await fetch(`${suite.worker.url}/v1/sessions?group=${group}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as SessionList;
}

describe("planport plan --attempts 3 against wrangler dev (offline planner)", () => {
  it("starts a group on one snapshot, reports 3 of 3 plans ready, ends with the teleported one; the others are superseded", async () => {
    const hookOut = join(mkdtempSync(join(tmpdir(), "planport-group-hook-")), "plan.txt");
    const { run } = planGroup(["--json", "--on-teleport", `cat > ${hookOut}`]);
    await run.waitForStdout('"event":"group"', 60_000);
    const lines = ndjson(run.stdout());
    // The one `session` line (the first session, with the group), then the group's sessions.
    expect(lines[0]).toMatchObject({ event: "session", group: expect.any(String) });
    const group = String(lines[0]!.group);
    const members = lines[1]!.sessions as { id: string; review_url: string; planner: string }[];
    expect(lines[1]).toMatchObject({ event: "group", group });
    expect(members).toHaveLength(3);
    expect(members[0]!.id).toBe(lines[0]!.id);
    for (const m of members) expect(m).toMatchObject({ planner: "offline" });

    const listed = await groupList(group);
    expect(listed.data.map((s) => s.id).sort()).toEqual(members.map((m) => m.id).sort());
    const snapshots = new Set(
      await Promise.all(members.map(async (m) => (await suite.api.getSession(m.id)).snapshot_id)),
    );
    expect(snapshots.size).toBe(1);

    const calls = await Promise.all(members.map((m) => waitForPlan(suite.api, m.id)));
    await run.waitForStdout('"ready":3', 30_000);
    const chosen = members[1]!;
    await suite.api.decide(chosen.id, { tool_use_id: calls[1]!, decision: "teleport" });
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);

    const events = ndjson(stdout);
    expect(events.filter((e) => e.event === "session")).toHaveLength(1);
    const ready = events.filter((e) => e.event === "progress").map((e) => e.ready);
    expect(ready).toContain(2);
    expect(ready.at(-1)).toBe(3);
    expect(events.filter((e) => e.event === "phase").at(-1)).toEqual({
      event: "phase",
      phase: "plan_ready",
    });
    const outcome = events.at(-1);
    expect(outcome).toMatchObject({
      event: "outcome",
      kind: "teleport",
      execution_target: "local",
      session_id: chosen.id,
      group,
      reject_count: 0,
    });
    expect(readFileSync(hookOut, "utf8")).toBe(String(outcome?.plan));

    for (const m of members) {
      const s = await suite.api.getSession(m.id);
      expect(s.status).toBe("archived");
      expect(s.outcome).toEqual(
        m.id === chosen.id
          ? { kind: "teleport", execution_target: "local" }
          : { kind: "terminated", subtype: "superseded" },
      );
    }
  }, 180_000);

  // Under load this once ended with exit 13 after the teleport: a sibling's poll, stopped by
  // the group while wrangler's gzipped answer was still inflating, was left awaiting a body
  // read that nothing kept alive (fixed in response-body.ts; test/client/group-abort.test.ts).
  it("without --json, prints every review link and 'N of 3 plans ready', and says which was chosen", async () => {
    const { run } = planGroup([]);
    const ids = async (): Promise<string[]> => {
      for (;;) {
        const found = [
          ...run.stderr().matchAll(/^session (ses_[0-9a-z]{26}) \(offline planner\)$/gm),
        ];
        if (found.length === 3) return found.map((m) => m[1]!);
        if (run.child.exitCode !== null) throw new Error(`exited early: ${run.stderr()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const members = await ids();
    const calls = await Promise.all(members.map((id) => waitForPlan(suite.api, id)));
    for (;;) {
      if (run.stderr().includes("3 of 3 plans ready")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await suite.api.decide(members[0]!, { tool_use_id: calls[0]!, decision: "teleport" });
    const { code, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    expect(stderr.match(/^review: http:\/\/\S+\/review\/ses_\S+\?key=\S+$/gm)).toHaveLength(3);
    expect(stderr).toMatch(/^[12] of 3 plans ready$/m);
    expect(stderr).toContain(`chosen: ${members[0]} (offline planner)`);
    expect(stderr).toContain("plan approved and sent to terminal");
  }, 180_000);
});
