import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  carryOutTeleport,
  handOffTeleport,
  planSlug,
  resolvePlansDir,
  runOnTeleport,
  writePlanFile,
} from "../../../local-client/handoff/teleport.ts";

let root: string;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "planport-handoff-"));
  repo = join(root, "repo");
  mkdirSync(repo);
  env = { PLANPORT_HOME: join(root, "home") };
});

describe("resolvePlansDir", () => {
  it("uses ~/.planport/plans by default", () => {
    expect(resolvePlansDir({ repoRoot: repo, env })).toEqual({ dir: join(root, "home", "plans") });
  });

  it("accepts a folder inside the repository, existing or not, relative to the cwd", () => {
    expect(resolvePlansDir({ requested: "docs/plans", repoRoot: repo, cwd: repo, env })).toEqual({
      dir: join(repo, "docs", "plans"),
    });
    expect(resolvePlansDir({ requested: repo, repoRoot: repo, env }).dir).toBe(repo);
  });

  it("refuses a folder outside the repository with a warning and falls back to the default", () => {
    for (const requested of [join(root, "elsewhere"), "../elsewhere", "/tmp", `${repo}-sibling`]) {
      const r = resolvePlansDir({ requested, repoRoot: repo, cwd: repo, env });
      expect(r.dir).toBe(join(root, "home", "plans"));
      expect(r.warning).toMatch(/outside the repository/);
    }
  });

  it("refuses a symlink inside the repository that points outside it", () => {
    mkdirSync(join(root, "outside"));
    symlinkSync(join(root, "outside"), join(repo, "link"));
    const r = resolvePlansDir({ requested: "link/plans", repoRoot: repo, cwd: repo, env });
    expect(r.warning).toMatch(/outside the repository/);
  });
});

describe("planSlug", () => {
  it.each([
    ["Add GitHub OAuth login!", "", "add-github-oauth-login"],
    ["Café — déjà vu", "", "cafe-deja-vu"],
    [undefined, "intro\n## Ship the poller\n", "ship-the-poller"],
    ["", "# 中文", "plan"],
    ["!!!", "no heading", "plan"],
  ])("%s / %s → %s", (title, plan, slug) => {
    expect(planSlug(title, plan)).toBe(slug);
  });

  it("stays short, cut at a word boundary", () => {
    const slug = planSlug("word ".repeat(40), "");
    expect(slug.length).toBeLessThanOrEqual(60);
    expect(slug.endsWith("-")).toBe(false);
  });
});

describe("writePlanFile", () => {
  it("never overwrites an existing file", () => {
    const dir = join(root, "plans");
    mkdirSync(dir);
    writeFileSync(join(dir, "x.md"), "my notes");
    const a = writePlanFile(dir, "x", "plan a");
    const b = writePlanFile(dir, "x", "plan b\n");
    expect([a, b]).toEqual([join(dir, "x-2.md"), join(dir, "x-3.md")]);
    expect(readFileSync(join(dir, "x.md"), "utf8")).toBe("my notes");
    expect(readFileSync(a, "utf8")).toBe("plan a\n");
    expect(readFileSync(b, "utf8")).toBe("plan b\n");
  });
});

describe("runOnTeleport", () => {
  it("gives the command the plan on stdin, PLANPORT_PLAN_FILE and PLANPORT_FRESH_CONTEXT", async () => {
    const out = join(root, "out");
    const cmd = `cat > ${out}.in; echo "$PLANPORT_PLAN_FILE|$PLANPORT_FRESH_CONTEXT|$(pwd)" > ${out}.env`;
    const code = await runOnTeleport(cmd, {
      plan: "the plan",
      planFile: "/p.md",
      fresh: true,
      cwd: repo,
    });
    expect(code).toBe(0);
    expect(readFileSync(`${out}.in`, "utf8")).toBe("the plan");
    expect(readFileSync(`${out}.env`, "utf8").trim()).toBe(`/p.md|1|${repo}`);
  });

  it("reports the command's exit code, and a command that ignores stdin is fine", async () => {
    expect(
      await runOnTeleport("exit 3", {
        plan: "x".repeat(1_000_000),
        planFile: "/p",
        fresh: false,
        cwd: repo,
      }),
    ).toBe(3);
  });
});

describe("carryOutTeleport / handOffTeleport", () => {
  it("without a command: cancel, the file is kept", async () => {
    const r = await handOffTeleport({ plan: "p", title: "T", repoRoot: repo, env });
    expect(r).toEqual({
      planFile: join(root, "home", "plans", "t.md"),
      choice: "cancel",
      commandExitCode: null,
    });
    expect(readdirSync(join(root, "home", "plans"))).toEqual(["t.md"]);
  });

  it("the user's choice decides: cancel runs nothing, new session sets a fresh context", async () => {
    const marker = join(root, "ran");
    const cmd = `echo "$PLANPORT_FRESH_CONTEXT" >> ${marker}`;
    const base = { plan: "p", planFile: "/p.md", repoRoot: repo, onTeleport: cmd };
    expect(await carryOutTeleport({ ...base, choose: async () => "cancel" })).toEqual({
      choice: "cancel",
      commandExitCode: null,
    });
    expect(await carryOutTeleport({ ...base, choose: async () => "fresh" })).toEqual({
      choice: "fresh",
      commandExitCode: 0,
    });
    expect(await carryOutTeleport({ ...base })).toEqual({
      choice: "implement",
      commandExitCode: 0,
    });
    expect(readFileSync(marker, "utf8")).toBe("1\n0\n");
  });

  it("warns about a refused --plans-dir and writes to the default", async () => {
    const warnings: string[] = [];
    const r = await handOffTeleport({
      plan: "p",
      title: "T",
      repoRoot: repo,
      plansDir: "/etc",
      env,
      warn: (w) => warnings.push(w),
    });
    expect(r.planFile).toBe(join(root, "home", "plans", "t.md"));
    expect(warnings).toHaveLength(1);
  });
});
