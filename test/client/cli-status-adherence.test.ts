import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeSession,
  startFakeFeed,
} from "./fake-feed.ts";
import { type HostileServer, startHostileServer } from "./hostile-server.ts";
import { isolatedHome, runCli } from "./run-cli.ts";

/**
 * `planport status` after a remote execution: the adherence line, read from `GET …/plan` and
 * `GET …/changes` by the real CLI process against a fake server (the plan endpoint is answered
 * in front of the feed). The real stack is covered in test/browser/review-revisions.test.ts.
 */

const ESC = "\x1b";
const BEL = "\x07";
const UNSAFE = /(?!\n)\p{Cc}|\p{Cf}/u;
const HOSTILE_PATH = `src/${ESC}]0;owned${BEL}x\u202e.ts`;

const fileDiff = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,1 @@\n+x\n`;

let feed: FakeFeed;
let server: HostileServer;
let home: ReturnType<typeof isolatedHome>;
let plan: string | null;
beforeEach(async () => {
  feed = await startFakeFeed();
  feed.session = fakeSession({
    status: "idle",
    phase: "done",
    outcome: { kind: "approved", execution_target: "remote" },
  });
  feed.changes = fileDiff("src/a.ts") + fileDiff("src/b.ts") + fileDiff(HOSTILE_PATH);
  plan = "1. Edit `src/a.ts`\n2. Edit `src/b.ts:4`\n";
  server = await startHostileServer(feed.url, (_req, res, path) => {
    if (path !== `/v1/sessions/${FAKE_SESSION_ID}/plan`) return false;
    if (plan === null) {
      // A refusal, not a 5xx: the CLI does not retry it (a retried 5xx only takes longer).
      res.writeHead(403, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { code: "forbidden", message: "plan store down" } }));
      return true;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify({ path: "/plans/p.md", content: plan, revision: 2, edited_by_user: false }),
    );
    return true;
  });
  home = isolatedHome();
});
afterEach(async () => {
  await server.close();
  await feed.close();
});

const flags = () => ["--server", server.url, "--token", FAKE_TOKEN];

describe("planport status: plan adherence", { timeout: 60_000 }, () => {
  it("names the changed files the plan did not, cleaned for the terminal", async () => {
    const { code, stdout, stderr } = await runCli(["status", FAKE_SESSION_ID, ...flags()], {
      env: home.env,
    });
    expect(code, stderr).toBe(0);
    expect(stdout.search(UNSAFE)).toBe(-1);
    expect(stdout).toMatch(
      /^adherence\s{2,}2 files changed as planned, 1 not in the plan: src\/x⟨U\+202E⟩\.ts$/m,
    );
  });

  it("--json adds plan_adherence with the exact paths", async () => {
    const { code, stdout } = await runCli(["status", FAKE_SESSION_ID, "--json", ...flags()], {
      env: home.env,
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).plan_adherence).toEqual({
      planned: ["src/a.ts", "src/b.ts"],
      unplanned: [HOSTILE_PATH],
      untouched: [],
      sentence: `2 files changed as planned, 1 not in the plan: ${HOSTILE_PATH}`,
    });
  });

  it("a plan that cannot be read is said, and the status still succeeds", async () => {
    plan = null;
    const { code, stdout } = await runCli(["status", FAKE_SESSION_ID, ...flags()], {
      env: home.env,
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^adherence\s{2,}could not be read: .*plan store down/m);
    const json = await runCli(["status", FAKE_SESSION_ID, "--json", ...flags()], { env: home.env });
    expect(JSON.parse(json.stdout)).not.toHaveProperty("plan_adherence");
  });

  it("a session not executed in the cloud asks for no plan and shows no adherence", async () => {
    feed.session = fakeSession();
    const { code, stdout } = await runCli(["status", FAKE_SESSION_ID, ...flags()], {
      env: home.env,
    });
    expect(code).toBe(0);
    expect(stdout).not.toContain("adherence");
    expect(server.requests.some((r) => r.path.endsWith("/plan"))).toBe(false);
    expect(server.requests.some((r) => r.path.endsWith("/changes"))).toBe(false);
  });
});
