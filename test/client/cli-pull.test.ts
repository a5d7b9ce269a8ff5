import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diffPaths } from "../../local-client/handoff/diff-names.ts";
import {
  executedSession,
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  fakeSession,
  startFakeFeed,
} from "./fake-feed.ts";
import { fixtureRepo } from "./fixture-repo.ts";
import { isolatedHome, runCli } from "./run-cli.ts";

/** `planport pull` and `stop` as real CLI processes against the fake feed server. */

const DIFF = [
  "diff --git a/src/auth/login.ts b/src/auth/login.ts",
  "--- a/src/auth/login.ts",
  "+++ b/src/auth/login.ts",
  "@@ -1,5 +1,5 @@",
  " import { readSession } from './session';",
  " ",
  "-/** Password login. OAuth login is not supported yet. */",
  "+/** Password login; OAuth login lives in oauth.ts. */",
  " export function login(user: string, password: string) {",
  "   return { user, ok: password.length > 0 };",
  "diff --git a/src/auth/oauth.ts b/src/auth/oauth.ts",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/src/auth/oauth.ts",
  "@@ -0,0 +1 @@",
  "+export const provider = 'github';",
  "",
].join("\n");

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  // A session approved and run in the cloud: the only kind that has changes to pull.
  feed.session = executedSession();
  feed.changes = DIFF;
  home = isolatedHome();
});
afterEach(() => feed.close());

const flags = () => ["--server", feed.url, "--token", FAKE_TOKEN];

describe("planport pull", () => {
  it("prints the diff on stdout", async () => {
    const { code, stdout } = await runCli(["pull", FAKE_SESSION_ID, ...flags()], { env: home.env });
    expect(code).toBe(0);
    expect(stdout).toBe(DIFF);
  });

  it("--apply applies it with git apply --3way", async () => {
    const repo = fixtureRepo();
    const { code, stderr } = await runCli(
      ["pull", FAKE_SESSION_ID, "--apply", "--repo", repo, ...flags()],
      { env: home.env },
    );
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/error:/);
    expect(readFileSync(join(repo, "src/auth/login.ts"), "utf8")).toContain(
      "OAuth login lives in oauth.ts",
    );
    expect(readFileSync(join(repo, "src/auth/oauth.ts"), "utf8")).toBe(
      "export const provider = 'github';\n",
    );
  });

  it("--apply refuses to touch files with uncommitted work, and changes nothing", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, "src/auth/login.ts"), "// my unsaved experiment\n");
    const { code, stderr } = await runCli(
      ["pull", FAKE_SESSION_ID, "--apply", "--repo", repo, ...flags()],
      { env: home.env },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/uncommitted changes[\s\S]*src\/auth\/login\.ts[\s\S]*Commit or stash/);
    expect(readFileSync(join(repo, "src/auth/login.ts"), "utf8")).toBe(
      "// my unsaved experiment\n",
    );
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe(
      " M src/auth/login.ts\n",
    );
  });

  it("--apply outside a git work tree is refused", async () => {
    const dir = join(home.home, "..");
    const { code, stderr } = await runCli(
      ["pull", FAKE_SESSION_ID, "--apply", "--repo", dir, ...flags()],
      { env: home.env },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/not a git work tree/);
  });

  it("an empty diff says there is nothing yet", async () => {
    feed.changes = "";
    const { code, stdout, stderr } = await runCli(["pull", FAKE_SESSION_ID, ...flags()], {
      env: home.env,
    });
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/no changes/);
  });

  it("reads the paths a diff touches, both sides of a rename", () => {
    expect(diffPaths(DIFF)).toEqual(["src/auth/login.ts", "src/auth/oauth.ts"]);
    expect(
      diffPaths("diff --git a/old.ts b/new.ts\nrename from old.ts\nrename to new.ts\n"),
    ).toEqual(["new.ts", "old.ts"]);
  });
});

describe("planport stop / status / list", () => {
  it("stop archives a running session", async () => {
    feed.session = fakeSession();
    const { code, stderr } = await runCli(["stop", FAKE_SESSION_ID, ...flags()], { env: home.env });
    expect(code).toBe(0);
    expect(stderr).toContain(`Session ${FAKE_SESSION_ID} stopped.`);
    expect(
      feed.requests.filter((r) => r.method === "POST" && r.path.endsWith("/archive")),
    ).toHaveLength(1);
  });

  it("status of an unknown session exits 6 with a message, a malformed id exits 2", async () => {
    const unknown = await runCli(["status", "ses_01jxnothere000000000000000", ...flags()], {
      env: home.env,
    });
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toContain(
      "No session ses_01jxnothere000000000000000 is visible to this token: check the id, and that the token is the requester's or an approver's.",
    );
    expect((await runCli(["status", "nope", ...flags()], { env: home.env })).code).toBe(2);
  });

  it("list --json prints the API's list", async () => {
    const { code, stdout } = await runCli(["list", "--json", ...flags()], { env: home.env });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ data: [feed.session], has_more: false });
  });
});
