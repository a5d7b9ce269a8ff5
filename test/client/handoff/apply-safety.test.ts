import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ApplyRefusedError,
  applyChanges,
  dirtyPaths,
} from "../../../local-client/handoff/apply-changes.ts";
import { diffPaths } from "../../../local-client/handoff/diff-names.ts";
import { unsafeRepoName } from "../../../src/protocol/index.ts";
import { gitBlobId, unifiedDiff } from "../../../src/session/files/unified-diff.ts";
import {
  executedSession,
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  startFakeFeed,
} from "../fake-feed.ts";
import { isolatedHome, runCli } from "../run-cli.ts";

/**
 * `pull --apply` of a diff written by a remote session (issue 10, finding 6, the client half):
 * the dirty-file guard reads the names git will write — literally (`:!src/a.ts` is a file, not
 * an exclude), quoted names decoded — and names that must never be written here are refused
 * before anything is applied.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

function repoWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "planport-apply-"));
  git(dir, "init", "-q");
  git(dir, "config", "user.email", "t@example.com");
  git(dir, "config", "user.name", "t");
  git(dir, "config", "core.quotePath", "true");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "base");
  return dir;
}

/** A diff the way the worker writes it: blob ids, so `git apply --3way` has a merge base. */
async function remoteDiff(
  changes: { path: string; before: string | null; after: string | null }[],
): Promise<string> {
  const withBlobs = await Promise.all(
    changes.map(async (c) => ({
      ...c,
      blobs: {
        before: c.before === null ? null : await gitBlobId(c.before),
        after: c.after === null ? null : await gitBlobId(c.after),
      },
    })),
  );
  return unifiedDiff(withBlobs);
}

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  // A session approved and run in the cloud: the only kind that has changes to pull.
  feed.session = executedSession();
  home = isolatedHome();
});
afterEach(() => feed.close());

const pullApply = (repo: string) =>
  runCli(
    [
      "pull",
      FAKE_SESSION_ID,
      "--apply",
      "--repo",
      repo,
      "--server",
      feed.url,
      "--token",
      FAKE_TOKEN,
    ],
    {
      env: home.env,
    },
  );

describe("pull --apply refuses what must never be written locally", { timeout: 30_000 }, () => {
  it("a file named ':!src/a.ts' beside a staged src/a.ts: refused, nothing applied, no conflict markers", async () => {
    const repo = repoWith({ "src/a.ts": "one\ntwo\nthree\n" });
    writeFileSync(join(repo, "src/a.ts"), "one\nTWO (mine, staged)\nthree\n");
    git(repo, "add", "src/a.ts");
    const statusBefore = git(repo, "status", "--porcelain");
    feed.changes = await remoteDiff([
      { path: "src/a.ts", before: "one\ntwo\nthree\n", after: "one\nTWO (remote)\nthree\n" },
      { path: ":!src/a.ts", before: null, after: "hidden\n" },
    ]);
    const { code, stderr } = await pullApply(repo);
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(
      /refusing to apply[\s\S]*":!src\/a\.ts": it starts with ":", which git reads as pathspec magic[\s\S]*Nothing was applied/,
    );
    // The CLI's advice names this session, not a placeholder.
    expect(stderr).toContain(`Read it with \`planport pull ${FAKE_SESSION_ID}\` before deciding`);
    expect(readFileSync(join(repo, "src/a.ts"), "utf8")).toBe("one\nTWO (mine, staged)\nthree\n");
    expect(git(repo, "status", "--porcelain")).toBe(statusBefore);
    expect(readdirSync(join(repo, "src"))).toEqual(["a.ts"]);
  });

  it.each([
    [".git/hooks/post-checkout", "inside .git"],
    [".GIT/config", "inside .git"],
    ["src/../../outside.txt", "'..'"],
  ])("a diff that writes %s is refused (%s) and writes nothing", async (path, reason) => {
    const repo = repoWith({ "README.md": "# r\n" });
    feed.changes = [
      `diff --git a/${path} b/${path}`,
      "new file mode 100644",
      "--- /dev/null",
      `+++ b/${path}`,
      "@@ -0,0 +1 @@",
      "+#!/bin/sh",
      "",
    ].join("\n");
    const { code, stderr } = await pullApply(repo);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain(`${JSON.stringify(path)}: `);
    expect(stderr).toContain(reason);
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(existsSync(join(repo, "..", "outside.txt"))).toBe(false);
  });

  it("a symbolic link is refused", async () => {
    const repo = repoWith({ "README.md": "# r\n" });
    feed.changes = [
      "diff --git a/link b/link",
      "new file mode 120000",
      "--- /dev/null",
      "+++ b/link",
      "@@ -0,0 +1 @@",
      "+/etc/passwd",
      "\\ No newline at end of file",
      "",
    ].join("\n");
    const { code, stderr } = await pullApply(repo);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain("a symbolic link");
    expect(existsSync(join(repo, "link"))).toBe(false);
  });

  it("a quoted non-ASCII name with uncommitted work is found and refused", async () => {
    const repo = repoWith({ "src/café.ts": "one\ntwo\n" });
    writeFileSync(join(repo, "src/café.ts"), "one\nmine\n");
    git(repo, "add", ".");
    // Written by git itself, which quotes the name: "a/src/caf\303\251.ts".
    const other = repoWith({ "src/café.ts": "one\ntwo\n" });
    writeFileSync(join(other, "src/café.ts"), "one\nremote\n");
    feed.changes = git(other, "diff", "--full-index");
    expect(feed.changes).toContain('"a/src/caf\\303\\251.ts"');
    const { code, stderr } = await pullApply(repo);
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/uncommitted changes[\s\S]*src\/café\.ts/);
    expect(readFileSync(join(repo, "src/café.ts"), "utf8")).toBe("one\nmine\n");
  });
});

describe("dirtyPaths reads paths literally", () => {
  it("':!src/a.ts' is a name, not an exclude: the dirty src/a.ts beside it is still reported", () => {
    const repo = repoWith({ "src/a.ts": "x\n" });
    writeFileSync(join(repo, "src/a.ts"), "dirty\n");
    expect(dirtyPaths(repo, [":!src/a.ts", "src/a.ts"])).toEqual(["src/a.ts"]);
  });

  it("'*.ts' matches only a file named '*.ts'", () => {
    const repo = repoWith({ "a.ts": "x\n" });
    writeFileSync(join(repo, "a.ts"), "dirty\n");
    expect(dirtyPaths(repo, ["*.ts"])).toEqual([]);
  });
});

describe("applyChanges refuses with data", () => {
  it("names the files with uncommitted work and leaves what to do next to its caller", async () => {
    const repo = repoWith({ "src/a.ts": "one\n" });
    writeFileSync(join(repo, "src/a.ts"), "mine\n");
    const diff = await remoteDiff([{ path: "src/a.ts", before: "one\n", after: "remote\n" }]);
    const refusal = await applyChanges(repo, diff).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ApplyRefusedError);
    expect(refusal).toMatchObject({ reason: "dirty_files", names: ["src/a.ts"] });
    expect((refusal as Error).message).not.toMatch(/planport|Commit or stash/);
    expect(readFileSync(join(repo, "src/a.ts"), "utf8")).toBe("mine\n");
  });
});

describe("diffPaths reads names as git apply does", () => {
  it('decodes C-quoted names: octal UTF-8 bytes, \\t, \\", \\\\', () => {
    const diff = [
      'diff --git "a/src/caf\\303\\251.ts" "b/src/caf\\303\\251.ts"',
      '--- "a/src/caf\\303\\251.ts"',
      '+++ "b/src/caf\\303\\251.ts"',
      "@@ -1 +1 @@",
      "-a",
      "+b",
      'diff --git "a/tab\\there" "b/q\\"uote\\\\d"',
      "new file mode 100644",
      "--- /dev/null",
      '+++ "b/q\\"uote\\\\d"',
      "@@ -0,0 +1 @@",
      "+x",
      "",
    ].join("\n");
    expect(diffPaths(diff)).toEqual(['q"uote\\d', "src/café.ts", "tab\there"]);
  });

  it("reads names with spaces, and a rename's names from its rename lines", () => {
    expect(
      diffPaths("diff --git a/my file.ts b/my file.ts\n--- a/my file.ts\n+++ b/my file.ts\n"),
    ).toEqual(["my file.ts"]);
    expect(
      diffPaths(
        'diff --git a/old name.ts b/new name.ts\nrename from old name.ts\nrename to "new\\tname.ts"\n',
      ),
    ).toEqual(["new\tname.ts", "old name.ts"]);
  });

  it("strips one leading directory as -p1 does, whatever it is called", () => {
    expect(
      diffPaths("--- x/src/a.ts\t2024-01-01\n+++ y/src/a.ts\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n"),
    ).toEqual(["src/a.ts"]);
  });

  it("does not read a removed '-- …' line inside a hunk as a header", () => {
    const diff = [
      "diff --git a/q.sql b/q.sql",
      "--- a/q.sql",
      "+++ b/q.sql",
      "@@ -1,2 +1,1 @@",
      "--- /etc/passwd is mentioned in this comment",
      " SELECT 1;",
      "",
    ].join("\n");
    expect(diffPaths(diff)).toEqual(["q.sql"]);
  });
});

describe("unsafeRepoName (the one rule the worker and pull --apply share)", () => {
  it.each([
    ["src/app.ts", null],
    ["docs/My Notes (1).md", null],
    ["src/café/ünï.ts", null],
    [".github/workflows/ci.yml", null],
    [".gitignore", null],
    ["src/.gitkeep", null],
    ["a..b/c", null],
  ])("allows %s", (path, reason) => {
    expect(unsafeRepoName(path)).toBe(reason);
  });

  it.each([
    ".git/config",
    ".git",
    "sub/.git/hooks/pre-commit",
    ".GIT/config",
    ".Git/HEAD",
    ".git./config",
    ".git /config",
    "git~1/config",
    ".git::$INDEX_ALLOCATION/config",
    "GIT~2/config",
    "-rf",
    "src/app.ts.",
    "src /app.ts",
    `${"x".repeat(256)}.ts`,
    "/etc/passwd",
    "C:/Windows/x",
    "../outside",
    "src/../../x",
    "./src/a.ts",
    "src//a.ts",
    "src/",
    "",
    ":!src/a.ts",
    ":(exclude)x",
    "src\\..\\x",
    "src/a\x1b[2J.ts",
    "src/a\n.ts",
    "src/\u202egnp.exe",
    ".g\u200cit/config",
  ])("refuses %j", (path) => {
    expect(unsafeRepoName(path)).not.toBeNull();
  });
});
