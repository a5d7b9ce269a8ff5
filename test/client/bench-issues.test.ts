import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type IssueTaskResult,
  issueSummaryTable,
  targetVerdict,
} from "../bench/planner/issues/report.ts";
import {
  filesOfPatch,
  issueGold,
  issuePrompt,
  MAX_PROMPT_CHARS,
  type PatchFile,
  sampleById,
  statementPrompt,
} from "../bench/planner/issues/rules.ts";
import { ISSUE_SOURCES } from "../bench/planner/issues/sources.ts";
import { hitAt } from "../bench/planner/metrics.ts";
import type { PlannerResult } from "../bench/planner/report.ts";
import { HELD_OUT } from "../bench/planner/repositories.ts";
import { classifyPath } from "../bench/planner/task-rules.ts";

/** A patch as Multi-SWE-bench's fix_patch holds one: several `diff --git` blocks. */
const FIX_PATCH = [
  "diff --git a/src/plugin/utc/index.js b/src/plugin/utc/index.js",
  "index 1f0a2b3..4c5d6e7 100644",
  "--- a/src/plugin/utc/index.js",
  "+++ b/src/plugin/utc/index.js",
  "@@ -1,3 +1,4 @@",
  " import { MILLISECONDS_A_MINUTE } from '../../constant'",
  "+import { REGEX_PARSE } from '../../constant'",
  "diff --git a/src/constant.js b/src/constant.js",
  "index 8a9b0c1..2d3e4f5 100644",
  "--- a/src/constant.js",
  "+++ b/src/constant.js",
  "@@ -28,1 +28,1 @@",
  "-export const REGEX_PARSE = /^(\\d{4})$/",
  "+export const REGEX_PARSE = /^(\\d{4})[-/]?$/",
  "diff --git a/src/locale/new-one.js b/src/locale/new-one.js",
  "new file mode 100644",
  "index 0000000..1234567",
  "--- /dev/null",
  "+++ b/src/locale/new-one.js",
  "@@ -0,0 +1 @@",
  "+export default {}",
  "diff --git a/src/old.js b/src/old.js",
  "deleted file mode 100644",
  "index 7654321..0000000",
  "--- a/src/old.js",
  "+++ /dev/null",
  "@@ -1 +0,0 @@",
  "-export {}",
  "diff --git a/lib/a b.c b/lib/a b.c",
  "index 1111111..2222222 100644",
  "--- a/lib/a b.c\t2024-01-01 00:00:00",
  "+++ b/lib/a b.c\t2024-01-01 00:00:00",
  "@@ -1 +1 @@",
  "-int a;",
  "+int b;",
  "diff --git a/src/walk.rs b/src/walker.rs",
  "similarity index 90%",
  "rename from src/walk.rs",
  "rename to src/walker.rs",
  "diff --git a/bin/run.sh b/bin/run.sh",
  "old mode 100644",
  "new mode 100755",
  "",
].join("\n");

describe("filesOfPatch", () => {
  it("lists every file of a fix patch with its status, in patch order", () => {
    expect(filesOfPatch(FIX_PATCH)).toEqual([
      { path: "src/plugin/utc/index.js", oldPath: "src/plugin/utc/index.js", status: "M" },
      { path: "src/constant.js", oldPath: "src/constant.js", status: "M" },
      { path: "src/locale/new-one.js", oldPath: "src/locale/new-one.js", status: "A" },
      { path: "src/old.js", oldPath: "src/old.js", status: "D" },
      { path: "lib/a b.c", oldPath: "lib/a b.c", status: "M" },
      { path: "src/walker.rs", oldPath: "src/walk.rs", status: "R" },
      { path: "bin/run.sh", oldPath: "bin/run.sh", status: "M" },
    ]);
  });

  it("does not read a diff line inside a hunk as a file header", () => {
    const patch = [
      "diff --git a/README.md b/README.md",
      "--- a/README.md",
      "+++ b/README.md",
      "@@ -1,2 +1,2 @@",
      "--- a/quoted.md",
      "+++ b/quoted.md",
      "",
    ].join("\n");
    expect(filesOfPatch(patch)).toEqual([{ path: "README.md", oldPath: "README.md", status: "M" }]);
  });

  it("reads git's quoted paths", () => {
    const patch = [
      'diff --git "a/src/say \\"hi\\".go" "b/src/say \\"hi\\".go"',
      '--- "a/src/say \\"hi\\".go"',
      '+++ "b/src/say \\"hi\\".go"',
      "",
    ].join("\n");
    expect(filesOfPatch(patch)).toEqual([
      { path: 'src/say "hi".go', oldPath: 'src/say "hi".go', status: "M" },
    ]);
  });

  it("finds no file in an empty patch", () => {
    expect(filesOfPatch("")).toEqual([]);
  });
});

const file = (path: string, status: PatchFile["status"] = "M", oldPath = path): PatchFile => ({
  path,
  oldPath,
  status,
});

describe("issueGold", () => {
  it("keeps the non-test source files the fix changed, sorted, new files listed apart", () => {
    expect(
      issueGold([
        file("src/walk.rs"),
        file("tests/walk.rs"),
        file("CHANGELOG.md"),
        file("doc/fd.1"),
        file("src/app.rs"),
        file("src/filter/size.rs", "A"),
        file("Cargo.lock"),
      ]),
    ).toEqual({
      ok: true,
      gold: ["src/app.rs", "src/filter/size.rs", "src/walk.rs"],
      goldNew: ["src/filter/size.rs"],
    });
  });

  it("does not count tests, generated amalgamations or docs as gold", () => {
    expect(
      issueGold([
        file("include/nlohmann/detail/input/lexer.hpp"),
        file("single_include/nlohmann/json.hpp"),
        file("tests/src/unit-regression2.cpp"),
        file("src/main/java/com/google/gson/Gson.java"),
        file("gson/src/test/java/com/google/gson/GsonTest.java"),
        file("grpc_test.go"),
        file("extras/catch_amalgamated.cpp"),
        file("singleheader/simdjson.h"),
        file("test/plugin/utc.test.js"),
      ]),
    ).toEqual({
      ok: true,
      gold: ["include/nlohmann/detail/input/lexer.hpp", "src/main/java/com/google/gson/Gson.java"],
      goldNew: [],
    });
  });

  it("leaves out fixes with no source file, too many, a renamed one, or only new files", () => {
    expect(issueGold([file("README.md"), file("tests/a_test.go")])).toEqual({
      ok: false,
      reason: "no source file changed",
    });
    expect(issueGold(["a", "b", "c", "d", "e"].map((n) => file(`src/${n}.c`)))).toEqual({
      ok: false,
      reason: "more than 4 source files changed",
    });
    expect(issueGold([file("src/a.c"), file("src/walker.rs", "R", "src/walk.rs")])).toEqual({
      ok: false,
      reason: "a source file renamed",
    });
    expect(issueGold([file("src/new.c", "A"), file("src/old.c", "D")])).toEqual({
      ok: false,
      reason: "no existing source file modified",
    });
  });

  it("applies to a whole fix patch", () => {
    const gold = issueGold(filesOfPatch(FIX_PATCH));
    // Every file of it is source (a shell script counts too): seven are more than four.
    expect(gold).toEqual({ ok: false, reason: "more than 4 source files changed" });
  });
});

describe("classifyPath on the issue repositories' layouts", () => {
  it("reads amalgamated single headers as generated, their parts as source", () => {
    expect(classifyPath("single_include/nlohmann/json.hpp")).toBe("generated");
    expect(classifyPath("singleheader/simdjson.cpp")).toBe("generated");
    expect(classifyPath("extras/catch_amalgamated.hpp")).toBe("generated");
    expect(classifyPath("include/nlohmann/detail/json_pointer.hpp")).toBe("source");
    expect(classifyPath("src/catch2/internal/catch_textflow.cpp")).toBe("source");
    expect(classifyPath("lib/compress/zstd_compress.c")).toBe("source");
  });
});

describe("issuePrompt", () => {
  it("is the title, a blank line and the body, without the template's HTML comments", () => {
    expect(
      issuePrompt([
        {
          title: "  Panic when using `-j` flag ",
          body: "<!-- Please fill in the template -->\r\n\r\n\r\n\r\n**Describe the bug**  \r\nfd -j 0 panics<!-- unfinished",
        },
      ]),
    ).toBe("Panic when using `-j` flag\n\n**Describe the bug**\nfd -j 0 panics");
  });

  it("joins several issues and reads a missing body as empty", () => {
    expect(
      issuePrompt([
        { title: "First", body: null },
        { title: "Second", body: "More." },
      ]),
    ).toBe("First\n\nSecond\n\nMore.");
  });

  it("is cut at the session API's prompt limit", () => {
    const prompt = issuePrompt([{ title: "Huge log", body: "x".repeat(MAX_PROMPT_CHARS * 2) }]);
    expect(prompt).toHaveLength(MAX_PROMPT_CHARS);
  });
});

describe("statementPrompt (a dataset in SWE-bench's format: the issue as one text)", () => {
  it("is normalised as issuePrompt is: no HTML comments, \\n line ends, one blank line at most", () => {
    expect(
      statementPrompt(
        "  Crash on empty input\r\n<!-- Please fill in the template -->\r\n\r\n\r\nSteps:  \r\nrun it<!-- unfinished",
      ),
    ).toBe("Crash on empty input\n\nSteps:\nrun it");
  });

  it("gives the same prompt as issuePrompt for the same issue written as title and body", () => {
    const body = "**Describe the bug**\r\nIt fails.";
    expect(statementPrompt(`Title\n\n${body}`)).toBe(issuePrompt([{ title: "Title", body }]));
  });
});

describe("sampleById", () => {
  const items = Array.from({ length: 40 }, (_, i) => ({ id: `org__repo-${i}` }));

  it("takes a fixed sample and keeps the items' order", () => {
    const sample = sampleById(items, 10);
    expect(sample).toHaveLength(10);
    expect(sampleById([...items].reverse(), 10)).toEqual([...sample].reverse());
    const positions = sample.map((item) => items.indexOf(item));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it("keeps the other chosen items when one chosen item leaves", () => {
    const sample = sampleById(items, 10);
    const without = items.filter((item) => item.id !== sample[0]!.id);
    const again = sampleById(without, 10);
    expect(again.filter((item) => sample.includes(item))).toHaveLength(9);
  });

  it("takes everything when there are fewer items than asked", () => {
    expect(sampleById(items.slice(0, 3), 10)).toEqual(items.slice(0, 3));
  });
});

describe("Acc@k", () => {
  it("counts a task when any gold file is among the first k named", () => {
    expect(hitAt(["a.c", "b.c"], ["b.c", "x.c"], 1)).toBe(1);
    expect(hitAt(["a.c", "b.c"], ["x.c", "b.c"], 1)).toBe(0);
    expect(hitAt(["a.c"], ["v.c", "w.c", "x.c", "y.c", "a.c"], 5)).toBe(1);
    expect(hitAt(["a.c"], ["u.c", "v.c", "w.c", "x.c", "y.c", "a.c"], 5)).toBe(0);
    expect(hitAt(["a.c"], [], 5)).toBe(0);
  });
});

describe("issue report", () => {
  const plan = (top: string[]): PlannerResult => ({
    outcome: "plan",
    recall: 0,
    top,
    recall_leading: 0,
    top_leading: [],
    named: top.length,
    server_ms: 100,
    client_ms: 120,
  });
  const result = (
    id: string,
    split: IssueTaskResult["split"],
    parentFiles: number,
    plannerTop: string[],
    bm25Top: string[],
  ): IssueTaskResult => ({
    id,
    repo: "org/repo",
    language: "C",
    split,
    parent_files: parentFiles,
    snapshot_files: parentFiles,
    gold: ["src/gold.c"],
    prompt_chars: 100,
    planner: plan(plannerTop),
    bm25: { top: bm25Top },
  });
  const results = [
    result("t1", "tuning", 100, ["src/gold.c"], ["src/x.c", "src/gold.c"]),
    result("t2", "tuning", 2_000, ["src/x.c", "+src/gold.c"], ["src/x.c"]),
    result("h1", "held-out", 300, ["a", "b", "c", "d", "e", "src/gold.c"], ["src/gold.c"]),
    { ...result("h2", "held-out", 300, [], []), error: "gold file(s) not in the snapshot" },
  ];

  it("scores planner and BM25 side by side per part; unmeasured tasks count for neither", () => {
    const table = issueSummaryTable(results);
    expect(table).toContain(
      "| tuning repositories | 2 | 50.0 % | 0.0 % | 100.0 % | 50.0 % | 100.0 % | 50.0 % | 100 ms | 100 ms |",
    );
    expect(table).toContain(
      "| held-out repositories | 1 | 0.0 % | 100.0 % | 0.0 % | 100.0 % | 100.0 % | 100.0 % |",
    );
    expect(table).toContain("| trees ≥ 1,000 files | 1 | 0.0 % | 0.0 % | 100.0 % | 0.0 % |");
    expect(table).toContain("| all | 3 | 33.3 % | 33.3 % | 66.7 % | 66.7 % | 100.0 % | 66.7 % |");
  });

  it("says which targets a part meets", () => {
    expect(targetVerdict("tuning", results.slice(0, 2))).toBe(
      "tuning: Acc@1 50.0 % (≥ 45 %: met), Acc@5 100.0 % (≥ 75 %: met), Acc@5 − BM25's 50.0 points (≥ 10: met)",
    );
    expect(targetVerdict("held out", results.slice(2, 3))).toContain(
      "Acc@1 0.0 % (≥ 45 %: **not met**)",
    );
  });
});

describe("the held-out repositories (issue 31: held out means never looked at)", () => {
  const heldOut = [
    ...ISSUE_SOURCES.filter((s) => s.split === "held-out").map((s) => s.repo),
    ...HELD_OUT,
  ];
  /** Names that are everyday words of code, not a repository's idiom (`json`, `bytes`, `fd`, `bat`). */
  const EVERYDAY = new Set(["json", "bytes", "fd", "bat", "express"]);

  it("holds out Python by whole repositories, and no repository is on both sides", () => {
    const python = ISSUE_SOURCES.filter((s) => s.language === "Python");
    expect(python.filter((s) => s.split === "held-out").map((s) => s.repo)).toEqual([
      "ansible/ansible",
      "containers/podman-compose",
    ]);
    expect(python.filter((s) => s.split === "tuning").length).toBeGreaterThan(0);
    const tuning = new Set(ISSUE_SOURCES.filter((s) => s.split === "tuning").map((s) => s.repo));
    expect(heldOut.filter((r) => tuning.has(r))).toEqual([]);
    // The commit-subject set's tuning side holds the repositories whose idioms the planner names.
    expect(HELD_OUT).not.toContain("spf13/cobra");
  });

  it("are named nowhere in the offline planner's source (owner, name or name without dashes)", () => {
    const root = "src/planner/models/offline";
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    expect(files.length).toBeGreaterThan(20);
    const source = files.map((f) => readFileSync(join(root, f), "utf8")).join("\n");
    const words = heldOut
      .flatMap((r) => [...r.split("/"), r.split("/")[1]!.replace(/-/g, "")])
      .filter((w) => !EVERYDAY.has(w.toLowerCase()));
    const named = words.filter((w) =>
      new RegExp(`(^|[^\\w-])${w.replace(/[.-]/g, "\\$&")}([^\\w-]|$)`, "i").test(source),
    );
    expect(named).toEqual([]);
  });
});
