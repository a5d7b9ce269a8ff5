import { describe, expect, it } from "vitest";
import { changesView, fileSections, renderChanges } from "../../src/review/changes.ts";
import { escapeHtml } from "../../src/review/html.ts";
import { XSS_PAYLOADS } from "./review-fixtures.ts";
import { parseElements, textOf } from "./review-inspect.ts";

const DIFF = [
  "diff --git a/src/a.ts b/src/a.ts",
  "index 1111111..2222222 100644",
  "--- a/src/a.ts",
  "+++ b/src/a.ts",
  "@@ -1,1 +1,1 @@",
  "-old",
  "+new",
  "diff --git a/src/gone.ts b/src/gone.ts",
  "deleted file mode 100644",
  "--- a/src/gone.ts",
  "+++ /dev/null",
  "@@ -1,1 +0,0 @@",
  "-bye",
  "diff --git a/src/x.ts b/src/x.ts",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/src/x.ts",
  "@@ -0,0 +1,1 @@",
  "+--- a/not/a/header.ts",
  'diff --git "a/caf\\303\\251.ts" "b/caf\\303\\251.ts"',
  '--- "a/caf\\303\\251.ts"',
  '+++ "b/caf\\303\\251.ts"',
  "@@ -1 +1 @@",
  "-a",
  "+b",
  "",
].join("\n");

describe("fileSections", () => {
  it("cuts a diff into files, reading deletions, creations and git-quoted names", () => {
    expect(fileSections(DIFF).map((s) => s.path)).toEqual([
      "src/a.ts",
      "src/gone.ts",
      "src/x.ts",
      "café.ts",
    ]);
    expect(fileSections(DIFF)[2]!.lines.at(-1)).toBe("+--- a/not/a/header.ts");
  });

  it("an empty diff has no sections", () => {
    expect(fileSections("")).toEqual([]);
  });
});

describe("changesView and renderChanges", () => {
  const plan =
    "## Files\n- `src/a.ts:3` — change the greeting\n- `src/gone.ts` — delete\n- `src/b.ts` — add tests";

  it("says which changed files the plan named, and links the others into the diff", async () => {
    const view = changesView(DIFF, plan);
    expect(view.sentence).toBe("2 files changed as planned, 2 not in the plan: café.ts, src/x.ts");
    const html = renderChanges(view, true).value;
    expect(await textOf(html, ".adherence")).toBe(
      "Plan adherence: 2 files changed as planned, 2 not in the plan: café.ts, src/x.ts. The plan also named a file left unchanged: src/b.ts.",
    );
    const elements = await parseElements(html);
    const links = elements.filter((e) => e.tag === "a").map((e) => e.attrs.get("href"));
    expect(links).toEqual(["#change-4", "#change-3"]);
    const ids = elements.map((e) => e.attrs.get("id")).filter(Boolean);
    expect(ids).toEqual(["change-1", "change-2", "change-3", "change-4"]);
    expect(await textOf(html, "#change-3 .chip")).toBe("not in the plan");
    expect(await textOf(html, "#change-1 .chip")).toBe("in the plan");
    expect(await textOf(html, "#change-1 .diff-add")).toBe("+new");
  });

  it("all planned: says none outside the plan; without a plan, no adherence at all", async () => {
    const html = renderChanges(
      changesView(DIFF, "src/a.ts src/gone.ts src/x.ts café.ts"),
      true,
    ).value;
    expect(await textOf(html, ".adherence")).toBe(
      "Plan adherence: 4 files changed as planned, none outside the plan.",
    );
    const noPlan = renderChanges(changesView(DIFF, ""), false).value;
    expect(noPlan).not.toContain("adherence");
    expect(noPlan).not.toContain("chip");
  });

  it("no changes says so", () => {
    expect(renderChanges(changesView("", plan), true).value).toBe("<p>No files were changed.</p>");
  });

  it("hostile paths and lines are escaped everywhere they appear", async () => {
    const path = `src/${XSS_PAYLOADS[1]}.ts`;
    const diff = `diff --git a/${path} b/${path}\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,1 @@\n+${XSS_PAYLOADS[0]}\n`;
    const html = renderChanges(changesView(diff, "nothing named"), true).value;
    const elements = await parseElements(html);
    expect(elements.filter((e) => ["script", "img", "svg"].includes(e.tag))).toEqual([]);
    expect(elements.some((e) => [...e.attrs.keys()].some((k) => k.startsWith("on")))).toBe(false);
    expect(await textOf(html, ".diff-add")).toBe(escapeHtml(`+${XSS_PAYLOADS[0]}`));
  });
});
