import { describe, expect, it } from "vitest";
import { adherenceSentence, filesNamedByPlan, planAdherence } from "../../src/protocol/index.ts";

describe("planAdherence", () => {
  it("matches changed files to the plan's mentions, with line references and ./", () => {
    const plan =
      "1. Edit `src/a.ts:12-30` and ./src/b.ts#L4\n2. Add `src/c/new.ts`\n3. Run the tests";
    expect(planAdherence(plan, ["src/b.ts", "src/a.ts", "src/x.ts"])).toEqual({
      planned: ["src/a.ts", "src/b.ts"],
      unplanned: ["src/x.ts"],
      untouched: ["src/c/new.ts"],
    });
  });

  it("a bare root file counts when it changed, and duplicates count once", () => {
    expect(planAdherence("Update README.md and package.json.", ["README.md", "README.md"])).toEqual(
      {
        planned: ["README.md"],
        unplanned: [],
        untouched: [],
      },
    );
  });

  it("a name that only contains a changed path is not a mention of it", () => {
    expect(planAdherence("Edit `src/a.tsx`", ["src/a.ts"]).planned).toEqual([]);
  });

  it("nothing changed, nothing planned", () => {
    expect(planAdherence("", [])).toEqual({ planned: [], unplanned: [], untouched: [] });
  });
});

describe("adherenceSentence", () => {
  it("reads as the issue asks", () => {
    expect(
      adherenceSentence({ planned: ["a", "b", "c"], unplanned: ["src/x.ts"], untouched: [] }),
    ).toBe("3 files changed as planned, 1 not in the plan: src/x.ts");
    expect(adherenceSentence({ planned: ["a"], unplanned: [], untouched: ["b"] })).toBe(
      "1 file changed as planned, none outside the plan",
    );
    expect(adherenceSentence({ planned: [], unplanned: [], untouched: [] })).toBe(
      "No files were changed",
    );
  });

  it("lists at most maxListed unplanned files, then counts the rest", () => {
    expect(adherenceSentence({ planned: [], unplanned: ["a", "b", "c"], untouched: [] }, 2)).toBe(
      "0 files changed as planned, 3 not in the plan: a, b and 1 more",
    );
  });
});

describe("filesNamedByPlan (shared with the benchmark)", () => {
  it("is the one the benchmark imports", async () => {
    const bench = await import("../bench/planner/plan-files.ts");
    expect(bench.filesNamedByPlan).toBe(filesNamedByPlan);
  });
});
