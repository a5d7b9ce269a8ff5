import { describe, expect, it } from "vitest";
import { BM25_B, BM25_K1, rankBm25, tokenize } from "../bench/planner/bm25.ts";
import { percentile, recallAt } from "../bench/planner/metrics.ts";
import { filesLeadingLines, filesNamedByPlan } from "../bench/planner/plan-files.ts";
import {
  areaHint,
  classifyPath,
  commonFolder,
  languageOf,
  ROOT_AREA,
  taskFromSubject,
  taskPrompt,
} from "../bench/planner/task-rules.ts";

/** Okapi BM25's term weight, written out once more for the expectations. */
const weight = (idf: number, tf: number, length: number, average: number) =>
  (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / average));

describe("tokenize", () => {
  it("splits camelCase, acronyms, snake_case, kebab-case and paths, lower-cased", () => {
    expect(tokenize("getQueryString")).toEqual(["get", "query", "string"]);
    expect(tokenize("HTTPServer parseJSON")).toEqual(["http", "server", "parse", "json"]);
    expect(tokenize("user_store-id src/auth/login.ts")).toEqual([
      "user",
      "store",
      "id",
      "src",
      "auth",
      "login",
      "ts",
    ]);
  });

  it("drops stop words and one-character tokens, keeps longer digit runs", () => {
    expect(tokenize("Add a retry to the client for HTTP2 and v2")).toEqual([
      "add",
      "retry",
      "client",
      "http",
    ]);
    expect(tokenize("status 404 in e2e")).toEqual(["status", "404"]);
  });
});

describe("rankBm25", () => {
  it("scores one matching document by the BM25 formula (k1 1.2, b 0.75)", () => {
    // Paths of one letter have no tokens, so lengths are the contents': 2, 1, 1 (average 4/3).
    const docs = [
      { path: "a", content: "apple banana" },
      { path: "b", content: "apple" },
      { path: "c", content: "cherry" },
    ];
    const [ranked] = rankBm25(docs, ["banana"]);
    // df(banana) = 1 of N = 3: idf = ln(1 + 2.5 / 1.5) = ln(8/3).
    expect(ranked).toHaveLength(1);
    expect(ranked![0]!.path).toBe("a");
    expect(ranked![0]!.score).toBeCloseTo(weight(Math.log(8 / 3), 1, 2, 4 / 3), 10);
    expect(ranked![0]!.score).toBeCloseTo(0.814_28, 4);
  });

  it("counts path tokens twice, in the term frequency and in the document length", () => {
    const docs = [
      { path: "src/apple.ts", content: "" },
      { path: "x", content: "apple" },
    ];
    const [ranked] = rankBm25(docs, ["apple"]);
    // Lengths 6 (src, apple, ts ×2) and 1; average 3.5; df 2 of 2: idf = ln(1.2).
    // The longer document loses on length what it gains on frequency.
    const idf = Math.log(1.2);
    expect(ranked!.map((r) => r.path)).toEqual(["x", "src/apple.ts"]);
    expect(ranked![0]!.score).toBeCloseTo(weight(idf, 1, 1, 3.5), 10);
    expect(ranked![1]!.score).toBeCloseTo(weight(idf, 2, 6, 3.5), 10);
  });

  it("sums over the query's distinct terms: a repeated word counts once", () => {
    const docs = [
      { path: "a", content: "login session" },
      { path: "b", content: "billing" },
    ];
    const [once, twice] = rankBm25(docs, ["login session", "login login session"]);
    expect(twice).toEqual(once);
    const idf = Math.log(1 + 1.5 / 1.5);
    expect(once![0]!.score).toBeCloseTo(2 * weight(idf, 1, 2, 1.5), 10);
  });

  it("matches identifiers across naming styles", () => {
    const docs = [
      { path: "lib/a.py", content: "def get_query_string(): pass" },
      { path: "lib/b.py", content: "def other(): pass" },
    ];
    const [ranked] = rankBm25(docs, ["Fix getQueryString"]);
    expect(ranked!.map((r) => r.path)).toEqual(["lib/a.py"]);
  });

  it("leaves out files with no matching term, breaks ties by path, and keeps the top 8", () => {
    const docs = Array.from({ length: 12 }, (_, i) => ({
      path: `f${String(11 - i).padStart(2, "0")}`,
      content: i < 10 ? "token" : "nothing",
    }));
    const [ranked] = rankBm25(docs, ["token"]);
    expect(ranked!.map((r) => r.path)).toEqual([
      "f02",
      "f03",
      "f04",
      "f05",
      "f06",
      "f07",
      "f08",
      "f09",
    ]);
    expect(rankBm25(docs, ["the and of"])[0]).toEqual([]);
  });
});

describe("filesNamedByPlan", () => {
  const repo = new Set(["src/auth/login.ts", "src/session.ts", "README.md", "lib/a.rs"]);

  it("lists repository files in order of first mention, each once", () => {
    const plan = [
      "# Plan",
      "1. `src/session.ts` — store the identity. Why: matches `session`.",
      "2. `src/auth/login.ts` (lines 3–9), then `src/session.ts` again.",
      "See README.md.",
    ].join("\n");
    expect(filesNamedByPlan(plan, repo).map((f) => f.path)).toEqual([
      "src/session.ts",
      "src/auth/login.ts",
      "README.md",
    ]);
  });

  it("reads through line references, ./ prefixes, links and trailing punctuation", () => {
    const plan =
      "Edit ./src/auth/login.ts:12-30, [the store](src/session.ts#L4), and lib/a.rs::parse; done.";
    expect(filesNamedByPlan(plan, repo)).toEqual([
      { path: "src/auth/login.ts", isNew: false },
      { path: "src/session.ts", isNew: false },
      { path: "lib/a.rs", isNew: false },
    ]);
  });

  it("counts a proposed new file with a folder and a known extension, not bare names or URLs", () => {
    const plan =
      "Create `migrations/003_identities.sql` and `oauth.ts`; see https://example.com/x/y.ts and src/auth/ or docs/guide.";
    expect(filesNamedByPlan(plan, repo)).toEqual([
      { path: "migrations/003_identities.sql", isNew: true },
    ]);
  });

  it("the stricter reading takes only the first file of each line", () => {
    const plan = [
      "1. `src/session.ts` — used by `src/auth/login.ts`, imports `lib/a.rs`.",
      "2. `src/auth/login.ts` — login.",
      "- `src/session.ts` again, then README.md",
    ].join("\n");
    expect(filesLeadingLines(plan, repo).map((f) => f.path)).toEqual([
      "src/session.ts",
      "src/auth/login.ts",
    ]);
    expect(filesNamedByPlan(plan, repo).map((f) => f.path)).toEqual([
      "src/session.ts",
      "src/auth/login.ts",
      "lib/a.rs",
      "README.md",
    ]);
  });

  it("names nothing in a plan that mentions no path", () => {
    expect(filesNamedByPlan("Which area should change: auth or billing?", repo)).toEqual([]);
  });
});

describe("recall and percentiles", () => {
  it("recall@8 is the share of gold among the first 8 named files", () => {
    expect(recallAt(["a", "b"], ["c", "a"])).toBe(0.5);
    expect(recallAt(["a"], ["1", "2", "3", "4", "5", "6", "7", "8", "a"])).toBe(0);
    expect(recallAt(["a", "b"], ["b", "a"])).toBe(1);
  });

  it("p95 is the nearest-rank percentile", () => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    expect(percentile([5, 1, 3], 50)).toBe(3);
    expect(percentile([], 95)).toBeNull();
  });
});

describe("task rules", () => {
  it("keeps non-test source as gold and sorts out tests, docs, changelogs, lockfiles and CI", () => {
    expect(classifyPath("lib/command.js")).toBe("source");
    expect(classifyPath("src/poetry/utils/env.py")).toBe("source");
    expect(classifyPath("typings/index.d.ts")).toBe("source");
    expect(classifyPath("tests/test_client.py")).toBe("test");
    expect(classifyPath("mux_test.go")).toBe("test");
    expect(classifyPath("source/index.test-d.ts")).toBe("test");
    expect(classifyPath("typings/commander-tests.ts")).toBe("test");
    expect(classifyPath("src/main/java/org/a/ParserTest.java")).toBe("test");
    expect(classifyPath("docs/Reference/Reply.md")).toBe("doc");
    expect(classifyPath("_examples/rest/main.go")).toBe("doc");
    expect(classifyPath("CHANGELOG.md")).toBe("changelog");
    expect(classifyPath("History.markdown")).toBe("changelog");
    expect(classifyPath("go.sum")).toBe("lockfile");
    expect(classifyPath(".github/workflows/ci.yml")).toBe("ci");
    expect(classifyPath("vendor/x/y.go")).toBe("generated");
    expect(classifyPath("eslint.config.js")).toBe("other");
    expect(classifyPath("package.json")).toBe("other");
  });

  it("reads a subject as a task: prefix and references dropped, scope kept", () => {
    expect(taskFromSubject("fix(router): keep the trailing slash (#42)")).toEqual({
      ok: true,
      value: { task: "keep the trailing slash", scope: "router" },
    });
    expect(taskFromSubject("reverseproxy: fix X-Forwarded-* headers for Unix sockets")).toEqual({
      ok: true,
      value: { task: "fix X-Forwarded-* headers for Unix sockets", scope: "reverseproxy" },
    });
    expect(taskFromSubject("feat: add a `Reply.prototype.mediaType` getter (#6932)")).toEqual({
      ok: true,
      value: { task: "add a `Reply.prototype.mediaType` getter", scope: null },
    });
    expect(taskFromSubject("BUG: wsgi.error should be TextIO")).toEqual({
      ok: true,
      value: { task: "wsgi.error should be TextIO", scope: null },
    });
  });

  it("leaves out housekeeping and subjects too short to be a task", () => {
    for (const subject of [
      "Merge pull request #12 from a/b",
      "Bumped v6.0.0-alpha.2",
      "docs: fix broken links",
      "chore(deps): update dependency x",
      "Fix typo in help",
      "WIP router",
      "Paranoimia",
      "Update history to reflect merge of #9960 [ci skip]",
      "Upgrade eslint and tselint",
    ]) {
      expect(taskFromSubject(subject).ok, subject).toBe(false);
    }
  });

  it("the area hint is the scope, else the gold's common folder, else the root", () => {
    expect(areaHint("router", ["mux.go"])).toEqual({ area: "router", source: "scope" });
    expect(areaHint(null, ["src/auth/login.ts", "src/auth/session.ts"])).toEqual({
      area: "src/auth",
      source: "folder",
    });
    expect(areaHint(null, ["index.js", "lib/a.js"])).toEqual({ area: ROOT_AREA, source: "root" });
    expect(commonFolder(["a/b/c.ts", "a/b/d/e.ts"])).toBe("a/b");
    expect(taskPrompt({ subject: "Add x", area: "lib" }, true)).toBe("Add x (area: lib)");
    expect(taskPrompt({ subject: "Add x", area: "lib" }, false)).toBe("Add x");
  });

  it("a task's language is its gold's programming language before any template", () => {
    expect(languageOf(["a.go", "b.go", "t.html"])).toBe("Go");
    expect(languageOf(["lib/a.js", "index.d.ts", "b.d.ts"])).toBe("TypeScript");
    expect(languageOf(["layout.html"])).toBe("HTML");
  });
});
