import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyChanges } from "../../../local-client/handoff/apply-changes.ts";
import { gitBlobId, unifiedDiff } from "../../../src/session/files/unified-diff.ts";

/**
 * `planport pull --apply` after the local branch moved on: the worker's diff carries git blob
 * ids, so `git apply --3way` merges a change whose context was edited locally, where a plain
 * `git apply` would refuse.
 */

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

function repoWith(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), "planport-3way-"));
  git(dir, "init", "-q");
  git(dir, "config", "user.email", "t@example.com");
  git(dir, "config", "user.name", "t");
  writeFileSync(join(dir, "list.txt"), content);
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "base");
  return dir;
}

describe("pull --apply with a three-way merge", () => {
  it("merges the remote change into a file whose neighbouring lines changed locally since the snapshot", async () => {
    const base = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    const remote = "one\nTWO (remote)\nthree\nfour\nfive\nsix\nseven\n";
    const repo = repoWith(base);
    // The local branch moves on after the snapshot: a line inside the remote hunk's context.
    writeFileSync(join(repo, "list.txt"), "one\ntwo\nthree\nfour\nFIVE (local)\nsix\nseven\n");
    git(repo, "commit", "-qam", "local edit");

    const diff = unifiedDiff([
      {
        path: "list.txt",
        before: base,
        after: remote,
        blobs: { before: await gitBlobId(base), after: await gitBlobId(remote) },
      },
    ]);
    // Without a merge base the context no longer matches.
    expect(() => git(repo, "apply", "--check", "-"), "plain apply must refuse").toThrow();

    const result = await applyChanges(repo, diff);
    expect(result.ok, result.output).toBe(true);
    expect(readFileSync(join(repo, "list.txt"), "utf8")).toBe(
      "one\nTWO (remote)\nthree\nfour\nFIVE (local)\nsix\nseven\n",
    );
  });
});
