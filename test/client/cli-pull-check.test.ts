import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pullMode } from "../../local-client/cli/pull-check.ts";
import { parseApplyCheck } from "../../local-client/handoff/apply-check.ts";
import { gitBlobId, unifiedDiff } from "../../src/session/files/unified-diff.ts";
import {
  executedSession,
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  startFakeFeed,
} from "./fake-feed.ts";
import { fixtureRepo } from "./fixture-repo.ts";
import { isolatedHome, runCli } from "./run-cli.ts";

/**
 * `planport pull --check` (a dry run of `git apply --3way`) and `pull --apply --branch NAME`, as
 * real CLI processes on real git repositories, the diff served by the fake feed server.
 */

const LOGIN = "src/auth/login.ts";
const LOGIN_BASE =
  "import { readSession } from './session';\n\n/** Password login. OAuth login is not supported yet. */\nexport function login(user: string, password: string) {\n  return { user, ok: password.length > 0 };\n}\n";
const LOGIN_REMOTE = LOGIN_BASE.replace(
  "Password login. OAuth login is not supported yet.",
  "Password login; OAuth login lives in oauth.ts.",
);
const OAUTH = "export const provider = 'github';\n";

/** The diff a remote execution sends: with git blob ids, so a three-way merge is possible. */
async function remoteDiff(): Promise<string> {
  return unifiedDiff([
    {
      path: LOGIN,
      before: LOGIN_BASE,
      after: LOGIN_REMOTE,
      blobs: { before: await gitBlobId(LOGIN_BASE), after: await gitBlobId(LOGIN_REMOTE) },
    },
    {
      path: "src/auth/oauth.ts",
      before: null,
      after: OAUTH,
      blobs: { before: null, after: await gitBlobId(OAUTH) },
    },
  ]);
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Everything `--check` must leave alone: HEAD, branches, the index file, the work tree. */
function repoState(repo: string) {
  return {
    head: git(repo, "rev-parse", "HEAD"),
    branches: git(repo, "branch", "--list"),
    status: git(repo, "status", "--porcelain", "--untracked-files=all"),
    index: createHash("sha256")
      .update(readFileSync(join(repo, ".git/index")))
      .digest("hex"),
    login: readFileSync(join(repo, LOGIN), "utf8"),
  };
}

function commitAll(repo: string, message: string) {
  git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qam", message);
}

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  // A session approved and run in the cloud: the only kind that has changes to pull.
  feed.session = executedSession();
  feed.changes = await remoteDiff();
  home = isolatedHome();
});
afterEach(() => feed.close());

const pull = (repo: string, ...args: string[]) =>
  runCli(
    ["pull", FAKE_SESSION_ID, "--repo", repo, "--server", feed.url, "--token", FAKE_TOKEN, ...args],
    { env: home.env },
  );
const changesRequests = () => feed.requests.filter((r) => r.path.endsWith("/changes"));

describe("planport pull --check", () => {
  it("on a clean tree: exit 0, lists the files, and writes nothing", async () => {
    const repo = fixtureRepo();
    const before = repoState(repo);
    const { code, stdout, stderr } = await pull(repo, "--check");
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("would apply cleanly");
    expect(stdout).toContain(LOGIN);
    expect(stdout).toContain("src/auth/oauth.ts");
    expect(repoState(repo)).toEqual(before);
  });

  it("when the local branch changed the same line: exit 1, names the conflict, writes nothing", async () => {
    const repo = fixtureRepo();
    writeFileSync(
      join(repo, LOGIN),
      LOGIN_BASE.replace("OAuth login is not supported yet.", "SSO is planned."),
    );
    commitAll(repo, "local edit of the same line");
    const before = repoState(repo);
    const { code, stdout, stderr } = await pull(repo, "--check");
    expect(code, stderr).toBe(1);
    expect(stdout).toMatch(/would not apply cleanly/);
    expect(stdout).toMatch(new RegExp(`conflict\\s+${LOGIN}`));
    expect(stdout).not.toMatch(/conflict\s+src\/auth\/oauth\.ts/);
    expect(repoState(repo)).toEqual(before);
  });

  it("a change elsewhere in a touched file merges: still exit 0", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, LOGIN), `${LOGIN_BASE}\nexport const extra = 1;\n`);
    commitAll(repo, "local edit further down");
    const { code, stdout, stderr } = await pull(repo, "--check");
    expect(code, stderr + stdout).toBe(0);
  });

  it("with uncommitted work in a touched file: exit 1, names it, leaves the work alone", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, LOGIN), "// my unsaved experiment\n");
    const before = repoState(repo);
    const { code, stdout } = await pull(repo, "--check");
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`uncommitted\\s+${LOGIN}`));
    expect(stdout).toMatch(/Commit or stash/);
    expect(repoState(repo)).toEqual(before);
  });

  it("an untracked file where the diff creates one counts as uncommitted work", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, "src/auth/oauth.ts"), "// mine\n");
    const { code, stdout } = await pull(repo, "--check");
    expect(code).toBe(1);
    expect(stdout).toMatch(/uncommitted\s+src\/auth\/oauth\.ts/);
    expect(readFileSync(join(repo, "src/auth/oauth.ts"), "utf8")).toBe("// mine\n");
  });

  it("uncommitted work in a file the diff does not touch is no obstacle", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, "README.md"), "# edited\n");
    const { code, stderr } = await pull(repo, "--check");
    expect(code, stderr).toBe(0);
  });

  it("a diff whose context is gone (no blob to merge with) cannot apply: exit 1", async () => {
    const repo = fixtureRepo();
    feed.changes = [
      `diff --git a/${LOGIN} b/${LOGIN}`,
      `--- a/${LOGIN}`,
      `+++ b/${LOGIN}`,
      "@@ -1,2 +1,2 @@",
      "-a line that is not there",
      "+something",
      " another",
      "",
    ].join("\n");
    const { code, stdout } = await pull(repo, "--check");
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`cannot apply ${LOGIN}`));
  });

  it("a diff that touches .git is refused: exit 1, nothing written", async () => {
    const repo = fixtureRepo();
    feed.changes = [
      "diff --git a/.git/config b/.git/config",
      "--- a/.git/config",
      "+++ b/.git/config",
      "@@ -1 +1 @@",
      "-x",
      "+y",
      "",
    ].join("\n");
    const before = repoState(repo);
    const { code, stderr } = await pull(repo, "--check");
    expect(code).toBe(1);
    expect(stderr).toMatch(/never written here/);
    expect(repoState(repo)).toEqual(before);
  });

  it("with no changes yet: exit 0 and says so", async () => {
    feed.changes = "";
    const { code, stderr } = await pull(fixtureRepo(), "--check");
    expect(code).toBe(0);
    expect(stderr).toMatch(/no changes to check/);
  });

  it("outside a git work tree: exit 2", async () => {
    const { code, stderr } = await pull(home.home.replace(/\/home$/, ""), "--check");
    expect(code).toBe(2);
    expect(stderr).toMatch(/not a git work tree/);
  });

  it("--check with --apply is a usage error, before any request", async () => {
    const { code, stderr } = await pull(fixtureRepo(), "--check", "--apply");
    expect(code).toBe(2);
    expect(stderr).toMatch(/--check is a dry run/);
    expect(changesRequests()).toHaveLength(0);
  });
});

describe("planport pull --apply --branch NAME", () => {
  it("applies on a new branch from HEAD, leaving the branch it started on as it was", async () => {
    const repo = fixtureRepo();
    const start = git(repo, "rev-parse", "--abbrev-ref", "HEAD").trim();
    const startHead = git(repo, "rev-parse", "HEAD");
    const { code, stderr } = await pull(repo, "--apply", "--branch", "planport/oauth");
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/on the new branch planport\/oauth/);
    expect(git(repo, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("planport/oauth");
    expect(readFileSync(join(repo, LOGIN), "utf8")).toBe(LOGIN_REMOTE);
    expect(readFileSync(join(repo, "src/auth/oauth.ts"), "utf8")).toBe(OAUTH);
    // Nothing is committed: the branch points where the old one does, the changes are staged.
    expect(git(repo, "rev-parse", "HEAD")).toBe(startHead);
    expect(git(repo, "rev-parse", start)).toBe(startHead);
    expect(git(repo, "show", `${start}:${LOGIN}`)).toBe(LOGIN_BASE);
  });

  it("refuses a branch that exists, before any request, changing nothing", async () => {
    const repo = fixtureRepo();
    git(repo, "branch", "taken");
    const before = repoState(repo);
    const { code, stderr } = await pull(repo, "--apply", "--branch", "taken");
    expect(code).toBe(2);
    expect(stderr).toMatch(/"taken": that branch exists already/);
    expect(changesRequests()).toHaveLength(0);
    expect(repoState(repo)).toEqual(before);
  });

  it.each(["two words", "a..b", "-x", "@{-1}", "@", "ends.lock", "x~1", ""])(
    "refuses the invalid name %j",
    async (name) => {
      const repo = fixtureRepo();
      const before = repoState(repo);
      const { code, stderr } = await pull(repo, "--apply", "--branch", name);
      expect(code).toBe(2);
      expect(stderr).toMatch(/is not a valid branch name/);
      expect(changesRequests()).toHaveLength(0);
      expect(repoState(repo)).toEqual(before);
    },
  );

  it("refuses dirty touched files before creating the branch", async () => {
    const repo = fixtureRepo();
    writeFileSync(join(repo, LOGIN), "// my unsaved experiment\n");
    const before = repoState(repo);
    const { code, stderr } = await pull(repo, "--apply", "--branch", "planport/oauth");
    expect(code).toBe(2);
    expect(stderr).toMatch(/uncommitted changes/);
    expect(repoState(repo)).toEqual(before);
  });

  it("--branch without --apply is a usage error", async () => {
    const { code, stderr } = await pull(fixtureRepo(), "--branch", "x");
    expect(code).toBe(2);
    expect(stderr).toMatch(/--branch NAME .* needs --apply/);
  });
});

describe("parseApplyCheck (git's --check messages)", () => {
  it("reads clean files and conflicts", () => {
    expect(
      parseApplyCheck(
        "Applied patch to 'a.ts' with conflicts.\nApplied patch to 'b c.ts' cleanly.\n",
      ),
    ).toEqual({
      clean: ["b c.ts"],
      conflicts: ["a.ts"],
      unappliable: [],
      problems: [],
      warnings: [],
    });
  });

  it("one entry per file that does not apply, with git's reason", () => {
    const r = parseApplyCheck(
      [
        "error: repository lacks the necessary blob to perform 3-way merge.",
        "Falling back to direct application...",
        "error: patch failed: a.ts:1",
        "error: a.ts: patch does not apply",
        "error: b.ts: already exists in working directory",
        "error: c.ts: does not match index",
        "error: patch failed: d.ts:7",
      ].join("\n"),
    );
    expect(r.unappliable).toEqual([
      { path: "a.ts", reason: "patch does not apply" },
      { path: "b.ts", reason: "already exists in working directory" },
      { path: "c.ts", reason: "does not match index" },
      { path: "d.ts", reason: "patch does not apply" },
    ]);
    expect(r.problems).toEqual([]);
  });

  it("a name with quotes and colons is read whole", () => {
    expect(parseApplyCheck("Applied patch to 'it's: here' with conflicts.").conflicts).toEqual([
      "it's: here",
    ]);
  });

  it("keeps unknown errors as problems and warnings apart", () => {
    const r = parseApplyCheck("error: corrupt patch at line 3\nwarning: a.ts has type 100644\n");
    expect(r.problems).toEqual(["error: corrupt patch at line 3"]);
    expect(r.warnings).toEqual(["warning: a.ts has type 100644"]);
  });

  it("nothing said is nothing found", () => {
    expect(parseApplyCheck("")).toEqual({
      clean: [],
      conflicts: [],
      unappliable: [],
      problems: [],
      warnings: [],
    });
  });
});

describe("pullMode", () => {
  it("print, check, apply", () => {
    expect(pullMode({})).toBe("print");
    expect(pullMode({ check: true })).toBe("check");
    expect(pullMode({ apply: true, branch: "x" })).toBe("apply");
  });
  it("refuses flags that do not go together", () => {
    expect(() => pullMode({ check: true, apply: true })).toThrow(/dry run/);
    expect(() => pullMode({ branch: "x" })).toThrow(/needs --apply/);
    expect(() => pullMode({ check: true, branch: "x" })).toThrow(/needs --apply/);
  });
});
