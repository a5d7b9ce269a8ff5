import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitBlobId, unifiedDiff } from "../../src/session/files/unified-diff.ts";
import {
  executedSession,
  FAKE_SESSION_ID,
  FAKE_TOKEN,
  type FakeFeed,
  startFakeFeed,
} from "./fake-feed.ts";
import { FIXTURE_FILES } from "./fixture-repo.ts";
import { hostileRepo } from "./hostile-repo.ts";
import { isolatedHome, runCli } from "./run-cli.ts";

/**
 * `planport pull --check`, `--apply` and `--apply --branch` as real CLI processes, on a
 * repository whose `.git/` came from someone else and names a command for every key git may
 * run one from (test/client/hostile-repo.ts): none of them runs. The diff makes git merge
 * (a local commit sits inside its context), so merge drivers would have their turn.
 */

const SESSION = "src/auth/session.ts";
const SESSION_BASE = FIXTURE_FILES[SESSION] as string;
const SESSION_LOCAL = SESSION_BASE.replace("[0];", "[0] ?? '';");
const SESSION_REMOTE = SESSION_BASE.replace("a signed cookie", "a signed, rotating cookie");

let feed: FakeFeed;
let home: ReturnType<typeof isolatedHome>;
beforeEach(async () => {
  feed = await startFakeFeed();
  feed.session = executedSession();
  feed.changes = unifiedDiff([
    {
      path: SESSION,
      before: SESSION_BASE,
      after: SESSION_REMOTE,
      blobs: { before: await gitBlobId(SESSION_BASE), after: await gitBlobId(SESSION_REMOTE) },
    },
  ]);
  home = isolatedHome();
});
afterEach(() => feed.close());

const pull = (repo: string, ...args: string[]) =>
  runCli(
    ["pull", FAKE_SESSION_ID, "--repo", repo, "--server", feed.url, "--token", FAKE_TOKEN, ...args],
    { env: home.env },
  );

describe("planport pull on a repository whose configuration names commands", () => {
  it("--check runs none of them and says the merge applies", async () => {
    const hostile = hostileRepo();
    hostile.commit("local edit", { [SESSION]: SESSION_LOCAL });
    const { code, stdout, stderr } = await pull(hostile.repo, "--check");
    expect(hostile.ran()).toEqual([]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("would apply cleanly");
  });

  it("--apply runs none of them, and merges with git's own merge", async () => {
    const hostile = hostileRepo();
    hostile.commit("local edit", { [SESSION]: SESSION_LOCAL });
    const { code, stderr } = await pull(hostile.repo, "--apply");
    expect(hostile.ran()).toEqual([]);
    expect(code, stderr).toBe(0);
    expect(readFileSync(join(hostile.repo, SESSION), "utf8")).toBe(
      SESSION_LOCAL.replace("a signed cookie", "a signed, rotating cookie"),
    );
  });

  it("--apply --branch runs none of them, hooks included", async () => {
    const hostile = hostileRepo();
    hostile.commit("local edit", { [SESSION]: SESSION_LOCAL });
    const { code, stderr } = await pull(hostile.repo, "--apply", "--branch", "planport/session");
    expect(hostile.ran()).toEqual([]);
    expect(code, stderr).toBe(0);
    expect(readFileSync(join(hostile.repo, ".git", "HEAD"), "utf8")).toBe(
      "ref: refs/heads/planport/session\n",
    );
  });
});
