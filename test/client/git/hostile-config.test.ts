import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RepositoryConfigError, runGit } from "../../../local-client/git/run.ts";
import {
  applyChanges,
  assertNewBranch,
  checkChanges,
  dirtyPaths,
} from "../../../local-client/handoff/apply-changes.ts";
import { buildSnapshot, collectTree } from "../../../local-client/snapshot/build.ts";
import { repositoryPlace } from "../../../local-client/snapshot/repository-place.ts";
import { gitBlobId, unifiedDiff } from "../../../src/session/files/unified-diff.ts";
import { FIXTURE_FILES, fixtureRepo } from "../fixture-repo.ts";
import { hostileRepo } from "../hostile-repo.ts";

/**
 * Every git call the client makes, on a repository whose `.git/` came from someone else and
 * names a command for every key git may run one from (test/client/hostile-repo.ts): none of
 * them runs, and what the client reads and writes is still right.
 */

const LOGIN = "src/auth/login.ts";
const LOGIN_BASE = FIXTURE_FILES[LOGIN] as string;
const LOGIN_REMOTE = LOGIN_BASE.replace(
  "Password login. OAuth login is not supported yet.",
  "Password login; OAuth login lives in oauth.ts.",
);
/** Named by the `evil` merge driver's attribute (login.ts names `late`). */
const SESSION = "src/auth/session.ts";
const SESSION_BASE = FIXTURE_FILES[SESSION] as string;
const SESSION_REMOTE = SESSION_BASE.replace("a signed cookie", "a signed, rotating cookie");

/**
 * Local commits since the snapshot, inside the remote hunks' context but on other lines: a
 * plain `git apply` refuses the diff, so `--3way` merges each file (the merge drivers' turn).
 */
const LOCAL_EDITS = {
  [LOGIN]: LOGIN_BASE.replace("password.length > 0", "password.length > 7"),
  [SESSION]: SESSION_BASE.replace("[0];", "[0] ?? '';"),
};

/** The remote's change, with blob ids: `git apply --3way` merges it. */
async function remoteDiff(loginBefore = LOGIN_BASE): Promise<string> {
  const change = async (path: string, before: string, after: string) => ({
    path,
    before,
    after,
    blobs: { before: await gitBlobId(before), after: await gitBlobId(after) },
  });
  return unifiedDiff([
    await change(LOGIN, loginBefore, LOGIN_REMOTE),
    await change(SESSION, SESSION_BASE, SESSION_REMOTE),
  ]);
}

/** What a call did, its error included: the markers are checked first whatever happened. */
async function settled<T>(run: () => T | Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await run() };
  } catch (error) {
    return { error };
  }
}

const read = (repo: string, path: string) => readFileSync(join(repo, path), "utf8");

describe("git on a repository whose configuration names commands", () => {
  it("snapshotting runs none of them, and holds a filtered file as it is on disk", async () => {
    const hostile = hostileRepo();
    const { repo } = hostile;
    writeFileSync(join(repo, ".git", "info", "attributes"), "*.sql filter=evilprocess\n");
    // Stat data that no longer matches the index: git compares content for them.
    appendFileSync(join(repo, "src/db/migrations/001_users.sql"), "-- seeded\n");
    writeFileSync(join(repo, "README.md"), readFileSync(join(repo, "README.md")));

    const place = await settled(() => repositoryPlace(join(repo, "src", "auth")));
    const tree = await settled(() => collectTree(repo));
    const built = await settled(() => buildSnapshot(repo));
    expect(hostile.ran()).toEqual([]);

    expect(place.value).toEqual({ root: repo, area: "src/auth" });
    const files = tree.value?.files ?? [];
    const onDisk = readFileSync(join(repo, "README.md"));
    expect(files.find((f) => f.path === "README.md")).toEqual({
      path: "README.md",
      blob: await gitBlobId(onDisk),
      fromIndex: false,
    });
    expect(files.find((f) => f.path === LOGIN)?.fromIndex).toBe(true);
    expect(built.value?.files).toBe(files.length);
  });

  it("pull --check and --apply run none of them; git's own three-way merge replaces the merge driver", async () => {
    const hostile = hostileRepo();
    const diff = await remoteDiff();
    const expected = await plainGitApply(LOCAL_EDITS, diff);
    hostile.commit("local edits", LOCAL_EDITS);
    const check = await settled(() => checkChanges(hostile.repo, diff));
    const applied = await settled(() => applyChanges(hostile.repo, diff));
    expect(hostile.ran()).toEqual([]);

    expect(check.value).toMatchObject({ appliesCleanly: true, clean: [LOGIN, SESSION] });
    expect(applied.value?.ok, applied.value?.output).toBe(true);
    expect(read(hostile.repo, SESSION)).toBe(expected[SESSION]);
    expect(read(hostile.repo, SESSION)).toContain("a signed, rotating cookie");
    expect(read(hostile.repo, SESSION)).toContain("[0] ?? '';");
  });

  it("a conflict leaves the markers git's own merge leaves", async () => {
    const local = { [SESSION]: SESSION_BASE.replace("a signed cookie", "a cookie, signed") };
    const diff = await remoteDiff();
    const expected = await plainGitApply(local, diff);
    const hostile = hostileRepo();
    hostile.commit("local edit", local);
    const applied = await settled(() => applyChanges(hostile.repo, diff));
    expect(hostile.ran()).toEqual([]);

    expect(applied.value?.ok).toBe(false);
    expect(read(hostile.repo, SESSION)).toBe(expected[SESSION]);
    expect(expected[SESSION]).toMatch(/^<<<<<<< ours\n[\s\S]*\n>>>>>>> theirs\n/m);
  });

  it("--branch runs no hook, nor a merge driver the new branch brings in (includeIf onbranch)", async () => {
    const hostile = hostileRepo();
    const diff = await remoteDiff();
    const expected = await plainGitApply(LOCAL_EDITS, diff);
    hostile.commit("local edits", LOCAL_EDITS);
    const refused = await settled(() => assertNewBranch(hostile.repo, "planport/oauth"));
    const applied = await settled(() =>
      applyChanges(hostile.repo, diff, { branch: "planport/oauth" }),
    );
    const dirty = await settled(() => dirtyPaths(hostile.repo, [LOGIN]));
    expect(hostile.ran()).toEqual([]);

    expect(refused.error).toBeUndefined();
    expect(applied.value?.ok, applied.value?.output).toBe(true);
    expect(read(hostile.repo, LOGIN)).toBe(expected[LOGIN]);
    expect(dirty.value).toEqual([LOGIN]);
  });

  it("hooks in the folder core.hooksPath names do not run either", async () => {
    const hostile = hostileRepo({ hooksPath: true });
    const diff = await remoteDiff();
    const applied = await settled(() => applyChanges(hostile.repo, diff, { branch: "feature" }));
    expect(hostile.ran()).toEqual([]);
    expect(applied.value?.ok, applied.value?.output).toBe(true);
  });

  it("an object the repository lacks is never fetched from its promisor remote", async () => {
    const hostile = hostileRepo();
    // The diff's base blob for login.ts is not in the repository: git would ask `origin` (ext::).
    const diff = await remoteDiff(`${LOGIN_BASE}// edited elsewhere\n`);
    await settled(() => applyChanges(hostile.repo, diff));
    expect(hostile.ran()).toEqual([]);
  });

  it("a core.worktree pointing elsewhere is neither snapshotted nor applied to; a submodule's is", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "planport-elsewhere-"));
    writeFileSync(join(elsewhere, "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    const hostile = hostileRepo();
    appendFileSync(join(hostile.repo, ".git", "config"), `[core]\n\tworktree = ${elsewhere}\n`);
    const place = await settled(() => repositoryPlace(hostile.repo));
    const tree = await settled(() => collectTree(hostile.repo));
    const applied = await settled(async () => applyChanges(hostile.repo, await remoteDiff()));
    expect(hostile.ran()).toEqual([]);
    for (const refused of [place, tree, applied]) {
      expect(refused.error).toBeInstanceOf(RepositoryConfigError);
      expect(String(refused.error)).toMatch(
        /core\.worktree \(\.git\/config\), which points git at a folder/,
      );
    }

    // A submodule's absorbed git directory names its work tree, which leads back to it.
    const parent = fixtureRepo();
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "protocol.file.allow=always", ...args], { cwd, stdio: "pipe" });
    git(parent, "submodule", "add", "-q", fixtureRepo(), "vendor/shop");
    const sub = join(parent, "vendor", "shop");
    expect(git(sub, "config", "core.worktree").toString()).not.toBe("");
    expect(await repositoryPlace(join(sub, "src"))).toEqual({ root: sub, area: "src" });
    expect((await collectTree(sub)).files.map((f) => f.path)).toContain(LOGIN);
  });

  it("a key that may name a command and that planport does not know stops git before it runs", async () => {
    const hostile = hostileRepo();
    appendFileSync(join(hostile.repo, ".git", "config"), "[core]\n\tfrobnicateCommand = run-me\n");
    const refused = runGit(hostile.repo, ["status", "--porcelain"]);
    await expect(refused).rejects.toBeInstanceOf(RepositoryConfigError);
    await expect(refused).rejects.toThrow(/core\.frobnicatecommand \(\.git\/config\)/);
    const tree = await settled(() => collectTree(hostile.repo));
    expect(hostile.ran()).toEqual([]);
    expect(tree.error).toBeInstanceOf(RepositoryConfigError);
  });
});

/**
 * What plain git (no drivers, no planted configuration) makes of `diff` after the same local
 * commit: each changed file's content.
 */
async function plainGitApply(
  local: Record<string, string>,
  diff: string,
): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), "planport-plain-3way-"));
  const git = (input: string | undefined, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd: dir,
      input,
      stdio: ["pipe", "pipe", "pipe"],
    });
  git(undefined, "init", "-q");
  mkdirSync(join(dir, "src", "auth"), { recursive: true });
  writeFileSync(join(dir, LOGIN), LOGIN_BASE);
  writeFileSync(join(dir, SESSION), SESSION_BASE);
  git(undefined, "add", ".");
  git(undefined, "commit", "-qm", "base");
  for (const [path, content] of Object.entries(local)) writeFileSync(join(dir, path), content);
  git(undefined, "commit", "-qam", "local");
  try {
    git(diff, "apply", "--3way", "-");
  } catch {
    // A conflict: the file holds the markers.
  }
  return { [LOGIN]: read(dir, LOGIN), [SESSION]: read(dir, SESSION) };
}
