import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryPlace, taskWithArea } from "../../../local-client/snapshot/repository-place.ts";

function gitRepo(): string {
  const repo = realpathSync(mkdtempSync(join(tmpdir(), "planport-place-")));
  mkdirSync(join(repo, "src", "middleware", "logger"), { recursive: true });
  execFileSync("git", ["init", "-q"], { cwd: repo });
  return repo;
}

describe("repositoryPlace", () => {
  it("takes a subfolder as the area of its repository", async () => {
    const repo = gitRepo();
    expect(await repositoryPlace(join(repo, "src", "middleware"))).toEqual({
      root: repo,
      area: "src/middleware",
    });
    expect(await repositoryPlace(join(repo, "src", "middleware", "logger"))).toEqual({
      root: repo,
      area: "src/middleware/logger",
    });
  });

  it("has no area at the root, and reaches the same place through a symbolic link", async () => {
    const repo = gitRepo();
    expect(await repositoryPlace(repo)).toEqual({ root: repo, area: null });
    const link = join(mkdtempSync(join(tmpdir(), "planport-link-")), "linked");
    symlinkSync(join(repo, "src"), link);
    expect(await repositoryPlace(link)).toEqual({ root: repo, area: "src" });
  });

  it("outside a git work tree, the folder is the repository", async () => {
    const plain = mkdtempSync(join(tmpdir(), "planport-plain-"));
    mkdirSync(join(plain, "sub"));
    expect(await repositoryPlace(join(plain, "sub"))).toEqual({
      root: join(plain, "sub"),
      area: null,
    });
  });
});

describe("taskWithArea", () => {
  it("adds the area as a hint the planner reads", () => {
    expect(taskWithArea("add a skip option to the logger", "src/middleware")).toBe(
      "add a skip option to the logger (area: src/middleware)",
    );
  });

  it("leaves a task alone at the root or when it names its own area", () => {
    expect(taskWithArea("add retries", null)).toBe("add retries");
    expect(taskWithArea("add retries (area: src/net)", "src/middleware")).toBe(
      "add retries (area: src/net)",
    );
    expect(taskWithArea("add retries area: cli", "src")).toBe("add retries area: cli");
  });
});
