import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { UsageError } from "../../local-client/errors.ts";
import { repositoryRoot } from "../../local-client/mcp/plan-tool.ts";
import {
  LIST_ARGS,
  MAX_WAIT_S,
  PLAN_ARGS,
  PULL_ARGS,
  SESSION_ARGS,
  TOOL_DESCRIPTIONS,
  TOOL_NAMES,
  WAIT_ARGS,
} from "../../local-client/mcp/tools.ts";

/** The tools' argument schemas: what a call may send, and what it is told when it may not. */

const ID = "ses_0123456789abcdefghijklmnop";
const parse = (shape: z.ZodRawShape, value: unknown) => z.object(shape).safeParse(value);
const problem = (shape: z.ZodRawShape, value: unknown) => {
  const r = parse(shape, value);
  return r.success
    ? null
    : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
};

describe("the tools of planport mcp", () => {
  it("are the six of the contract, each described", () => {
    expect(TOOL_NAMES).toEqual(["plan", "wait_for_plan", "status", "list", "stop", "pull_changes"]);
    for (const name of TOOL_NAMES) expect(TOOL_DESCRIPTIONS[name].length).toBeGreaterThan(40);
    expect(TOOL_DESCRIPTIONS.plan).toContain("wait_for_plan");
  });
});

describe("plan's arguments", () => {
  it("take a task and optionally repo, seed_plan, variant and planner", () => {
    expect(parse(PLAN_ARGS, { task: "add OAuth login" }).data).toEqual({ task: "add OAuth login" });
    const full = {
      task: "  refine it ",
      repo: "/src/app",
      seed_plan: "# Draft",
      variant: "deep",
      planner: "offline",
    };
    expect(parse(PLAN_ARGS, full).data).toEqual({ ...full, task: "refine it" });
  });

  it("refuse a missing or blank task, an unknown variant or planner, an empty seed", () => {
    expect(problem(PLAN_ARGS, {})).toContain("task");
    expect(problem(PLAN_ARGS, { task: " \n " })).toBe("task: describe the task to plan");
    expect(problem(PLAN_ARGS, { task: "t", variant: "thorough" })).toContain("variant");
    expect(problem(PLAN_ARGS, { task: "t", planner: "gpt" })).toContain("planner");
    expect(problem(PLAN_ARGS, { task: "t", seed_plan: "" })).toBe("seed_plan: must not be empty");
    expect(problem(PLAN_ARGS, { task: "t", seed_plan: "x".repeat(200_001) })).toContain(
      "seed_plan",
    );
    expect(problem(PLAN_ARGS, { task: "x".repeat(100_001) })).toContain("task");
  });
});

describe("wait_for_plan's arguments", () => {
  it("take a session id and a timeout of 1 to 540 seconds", () => {
    expect(parse(WAIT_ARGS, { session_id: ID }).success).toBe(true);
    expect(parse(WAIT_ARGS, { session_id: ID, timeout_s: 1 }).success).toBe(true);
    expect(parse(WAIT_ARGS, { session_id: ID, timeout_s: MAX_WAIT_S }).success).toBe(true);
    expect(MAX_WAIT_S).toBe(540);
  });

  it("refuse a longer, shorter or fractional timeout and anything but a session id", () => {
    expect(problem(WAIT_ARGS, { session_id: ID, timeout_s: 541 })).toContain("timeout_s");
    expect(problem(WAIT_ARGS, { session_id: ID, timeout_s: 0 })).toContain("timeout_s");
    expect(problem(WAIT_ARGS, { session_id: ID, timeout_s: 1.5 })).toContain("timeout_s");
    expect(problem(WAIT_ARGS, { session_id: "../../etc/passwd" })).toBe(
      "session_id: must be a session id: ses_ followed by 26 lowercase letters and digits",
    );
    expect(problem(SESSION_ARGS, { session_id: ID.toUpperCase() })).toContain("session_id");
  });
});

describe("list and pull_changes arguments", () => {
  it("list takes a limit of 1 to 100", () => {
    expect(parse(LIST_ARGS, {}).success).toBe(true);
    expect(parse(LIST_ARGS, { limit: 100 }).success).toBe(true);
    expect(problem(LIST_ARGS, { limit: 101 })).toContain("limit");
    expect(problem(LIST_ARGS, { limit: 0 })).toContain("limit");
  });

  it("pull_changes takes a session id, apply and a repo", () => {
    expect(parse(PULL_ARGS, { session_id: ID, apply: true, repo: "." }).success).toBe(true);
    expect(problem(PULL_ARGS, { session_id: ID, apply: "yes" })).toContain("apply");
  });
});

describe("the repository a call names", () => {
  it("defaults to the working directory and resolves a relative path against it", () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-mcp-repo-"));
    expect(repositoryRoot(undefined, dir)).toBe(dir);
    expect(repositoryRoot(".", dir)).toBe(dir);
    expect(repositoryRoot(join(dir, "..", dir.split("/").at(-1) ?? ""), "/")).toBe(dir);
  });

  it("must be a directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "planport-mcp-repo-"));
    writeFileSync(join(dir, "file.txt"), "x");
    expect(() => repositoryRoot("file.txt", dir)).toThrow(UsageError);
    expect(() => repositoryRoot("missing", dir)).toThrow(
      `repo ${join(dir, "missing")} is not a directory: pass the repository to plan as "repo"`,
    );
  });
});
