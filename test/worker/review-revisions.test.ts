import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { PlanDecisionRecord, PlanFile } from "../../src/protocol/index.ts";
import { historyRegion } from "../../src/review/history.ts";
import { escapeHtml } from "../../src/review/html.ts";
import {
  CONTEXT_LINES,
  type DiffRow,
  diffRevisions,
  linesOf,
  MAX_DIFF_ROWS,
  MAX_WORD_DIFF_CHARS,
  parseRevisionQuery,
  type RevisionInfo,
  revisionEntries,
  wantedRevisions,
} from "../../src/review/revisions.ts";
import { type ReviewLoader, reviewRoutes } from "../../src/review/route.ts";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  REVIEW_KEY,
  SESSION_ID,
  XSS_PAYLOADS,
} from "./review-fixtures.ts";
import { parseElements, textOf } from "./review-inspect.ts";

const info = (
  revision: number,
  created_at: string,
  extra: Partial<RevisionInfo> = {},
): RevisionInfo => ({
  revision,
  edited_by_user: false,
  created_at,
  chars: 100,
  ...extra,
});

const decision = (
  kind: PlanDecisionRecord["kind"],
  decided_at: string,
  feedback: string | null = null,
  comments: PlanDecisionRecord["comments"] = [],
): PlanDecisionRecord => ({
  tool_use_id: `toolu_${decided_at}`,
  kind,
  feedback,
  comments,
  plan_edited: false,
  decided_at,
});

describe("parseRevisionQuery", () => {
  it("reads a shown revision and a diff of two stored revisions", () => {
    expect(parseRevisionQuery({ rev: "2", diff: "1..3" }, [1, 2, 3])).toEqual({
      shown: 2,
      compare: { from: 1, to: 3 },
      problem: null,
    });
  });

  it("orders a reversed diff, and reads the picker form's from/to", () => {
    expect(parseRevisionQuery({ diff: "3..1" }, [1, 2, 3]).compare).toEqual({ from: 1, to: 3 });
    expect(parseRevisionQuery({ from: "2", to: "1" }, [1, 2]).compare).toEqual({ from: 1, to: 2 });
  });

  it("asks nothing when nothing is given", () => {
    expect(parseRevisionQuery({}, [1, 2])).toEqual({ shown: null, compare: null, problem: null });
    expect(parseRevisionQuery({ rev: "", diff: "" }, [1])).toEqual({
      shown: null,
      compare: null,
      problem: null,
    });
  });

  it.each([
    [{ rev: "abc" }, "rev must be a revision number such as 1"],
    [{ rev: "0" }, "rev must be a revision number"],
    [{ rev: "-1" }, "rev must be a revision number"],
    [{ rev: "1e3" }, "rev must be a revision number"],
    [{ rev: "9" }, "There is no revision 9 (the plan has revisions 1 to 3)."],
    [{ diff: "1-3" }, "diff must name two revisions such as 1..3"],
    [{ diff: "1..2..3" }, "diff must name two revisions such as 1..3"],
    [{ diff: "1..x" }, "The second revision to compare must be a revision number"],
    [{ diff: "2..2" }, "Revision 2 compared with itself shows no change"],
    [{ from: "1" }, "Choose both revisions to compare."],
    [{ from: "1", to: "7" }, "There is no revision 7"],
  ])("refuses %j with a sentence and shows nothing of it", (query, sentence) => {
    const parsed = parseRevisionQuery(query, [1, 2, 3]);
    expect(parsed.problem).toContain(sentence);
    expect(parsed.compare).toBeNull();
  });

  it("clips a long hostile value in its sentence", () => {
    const parsed = parseRevisionQuery({ rev: "x".repeat(500) }, [1]);
    expect(parsed.problem!.length).toBeLessThan(120);
  });

  it("says the plan has no revisions when there are none", () => {
    expect(parseRevisionQuery({ rev: "1" }, []).problem).toBe("There is no revision 1.");
  });
});

describe("wantedRevisions", () => {
  it("names the compared pair, else the shown revision, at most two", () => {
    expect(wantedRevisions({ diff: "3..1", rev: "2" })).toEqual([1, 3]);
    expect(wantedRevisions({ rev: "2" })).toEqual([2]);
    expect(wantedRevisions({ from: "4", to: "5" })).toEqual([4, 5]);
    expect(wantedRevisions({})).toEqual([]);
    expect(wantedRevisions({ rev: "<script>" })).toEqual([]);
    expect(wantedRevisions({ diff: "2..2" })).toEqual([2]);
  });
});

describe("revisionEntries", () => {
  const revisions = [
    info(1, "2026-05-01T10:00:00.000Z"),
    info(2, "2026-05-01T10:05:00.000Z"),
    info(3, "2026-05-01T10:06:00.000Z"),
    info(4, "2026-05-01T10:10:00.000Z", { edited_by_user: true }),
  ];

  it("puts each rejection's feedback beside the first revision written after it", () => {
    const entries = revisionEntries(revisions, [
      decision("reject", "2026-05-01T10:01:00.000Z", "Cover the logout path", [
        { quote: "Add a callback", text: "Which URL?" },
      ]),
      decision("reject", "2026-05-01T10:07:00.000Z", null, [{ quote: "step 2", text: "drop it" }]),
      decision("approve", "2026-05-01T10:10:00.000Z"),
    ]);
    expect(entries.map((e) => e.asked.map((a) => a.feedback))).toEqual([
      [],
      ["Cover the logout path"],
      [],
      [null],
    ]);
    expect(entries[1]!.asked[0]!.comments).toEqual([
      { quote: "Add a callback", text: "Which URL?" },
    ]);
    expect(entries.map((e) => e.verdict)).toEqual(["reject", null, "reject", "approve"]);
  });

  it("a rejection after the newest revision leads to nothing yet, and sorts revisions", () => {
    const entries = revisionEntries(
      [revisions[1]!, revisions[0]!],
      [decision("reject", "2026-05-01T11:00:00.000Z", "more")],
    );
    expect(entries.map((e) => e.revision)).toEqual([1, 2]);
    expect(entries.every((e) => e.asked.length === 0)).toBe(true);
    expect(entries[1]!.verdict).toBe("reject");
  });

  it("a decision before any revision judges none", () => {
    const entries = revisionEntries(revisions.slice(0, 1), [
      decision("reject", "2026-05-01T09:00:00.000Z", "early"),
    ]);
    expect(entries[0]!.verdict).toBeNull();
    expect(entries[0]!.asked.map((a) => a.feedback)).toEqual(["early"]);
  });
});

const texts = (rows: readonly DiffRow[]) =>
  rows.map((r) => {
    switch (r.kind) {
      case "same":
        return `  ${r.text}`;
      case "removed":
        return `- ${r.spans.map((s) => (s.changed ? `[${s.text}]` : s.text)).join("")}`;
      case "added":
        return `+ ${r.spans.map((s) => (s.changed ? `[${s.text}]` : s.text)).join("")}`;
      default:
        return `… ${r.lines}`;
    }
  });

describe("diffRevisions", () => {
  it("marks added and removed lines, and the changed words within a changed line", () => {
    const diff = diffRevisions(
      "# Plan\n1. Edit src/a.ts\n2. Test\n",
      "# Plan\n1. Edit src/b.ts\n2. Test\n3. Ship\n",
    );
    expect(texts(diff.rows)).toEqual([
      "  # Plan",
      "- 1. Edit src/[a].ts",
      "+ 1. Edit src/[b].ts",
      "  2. Test",
      "+ [3. Ship]",
    ]);
    expect(diff).toMatchObject({
      added: 2,
      removed: 1,
      wordLevel: true,
      coarse: false,
      truncated: false,
    });
  });

  it("numbers old and new lines separately", () => {
    const diff = diffRevisions("a\nb\nc\n", "a\nc\nd\n");
    expect(diff.rows).toEqual([
      { kind: "same", oldLine: 1, newLine: 1, text: "a" },
      { kind: "removed", oldLine: 2, spans: [{ text: "b", changed: true }] },
      { kind: "same", oldLine: 3, newLine: 2, text: "c" },
      { kind: "added", newLine: 3, spans: [{ text: "d", changed: true }] },
    ]);
  });

  it("splits a replaced block of several lines back into its lines", () => {
    const diff = diffRevisions("x\none two\nthree four\ny\n", "x\none 2\n3 four\ny\n");
    expect(texts(diff.rows)).toEqual([
      "  x",
      "- one [two]",
      "- [three] four",
      "+ one [2]",
      "+ [3] four",
      "  y",
    ]);
  });

  it("treats a missing final newline as no change, and empty texts as nothing", () => {
    expect(diffRevisions("a\nb", "a\nb\n").rows).toEqual([{ kind: "skipped", lines: 2 }]);
    expect(diffRevisions("", "")).toMatchObject({ rows: [], added: 0, removed: 0 });
    expect(texts(diffRevisions("", "a\n").rows)).toEqual(["+ [a]"]);
    expect(texts(diffRevisions("a\n", "").rows)).toEqual(["- [a]"]);
  });

  it(`keeps ${CONTEXT_LINES} unchanged lines around a change and counts the rest`, () => {
    const old = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const changed = [...old];
    changed[15] = "line fifteen";
    const rows = texts(diffRevisions(old.join("\n"), changed.join("\n")).rows);
    expect(rows).toEqual([
      "… 12",
      "  line 12",
      "  line 13",
      "  line 14",
      "- line [15]",
      "+ line [fifteen]",
      "  line 16",
      "  line 17",
      "  line 18",
      "… 11",
    ]);
  });

  it("marks a long changed block by whole lines, not by word", () => {
    const long = "word ".repeat(MAX_WORD_DIFF_CHARS / 5);
    const diff = diffRevisions(`a\n${long}\nz\n`, `a\n${long}x\nz\n`);
    expect(diff.wordLevel).toBe(false);
    expect(diff.rows.filter((r) => r.kind === "added")).toEqual([
      { kind: "added", newLine: 2, spans: [{ text: `${long}x`, changed: true }] },
    ]);
  });

  it("two unrelated 200,000-character plans fall back to a bounded comparison", () => {
    const planA = Array.from(
      { length: 3000 },
      (_, i) => `- step ${i}: change src/a-${i}.ts to keep the handler and its tests`,
    ).join("\n");
    const planB = Array.from(
      { length: 3000 },
      (_, i) => `- other ${i * 7}: rewrite lib/b-${i}.py so nothing is alike`,
    ).join("\n");
    expect(planA.length).toBeGreaterThan(200_000);
    const diff = diffRevisions(`# Plan\n${planA}\n## End\n`, `# Plan\n${planB}\n## End\n`);
    expect(diff.coarse).toBe(true);
    expect(diff.wordLevel).toBe(false);
    expect(diff.truncated).toBe(true);
    expect(diff.rows).toHaveLength(MAX_DIFF_ROWS);
    expect(diff.rows[0]).toEqual({ kind: "same", oldLine: 1, newLine: 1, text: "# Plan" });
    expect(diff.removed).toBe(3000);
    expect(diff.added).toBe(3000);
  });

  it("a 200,000-character plan with scattered edits is still compared line by line", () => {
    const lines = Array.from(
      { length: 2700 },
      (_, i) => `- step ${i}: change src/a-${i}.ts to keep the handler and its tests`,
    );
    const edited = lines.map((l, i) => (i % 50 === 0 ? l.replace("keep", "rewrite") : l));
    const diff = diffRevisions(lines.join("\n"), edited.join("\n"));
    expect(diff.coarse).toBe(false);
    expect(diff.added).toBe(54);
    expect(diff.removed).toBe(54);
  });

  it("linesOf drops only the final newline's empty line", () => {
    expect(linesOf("a\n\nb\n")).toEqual(["a", "", "b"]);
    expect(linesOf("")).toEqual([]);
  });
});

const revisionTexts: PlanFile[] = [
  fixturePlan("# Plan\n1. Edit src/a.ts\n", { revision: 1 }),
  fixturePlan(`# Plan\n1. Edit src/b.ts\n2. ${XSS_PAYLOADS[0]}\n`, { revision: 2 }),
];
const storedRevisions = [info(1, "2026-05-01T10:00:00.000Z"), info(2, "2026-05-01T10:05:00.000Z")];
const hostileDecisions = [
  decision("reject", "2026-05-01T10:01:00.000Z", XSS_PAYLOADS.join("\n"), [
    { quote: XSS_PAYLOADS[6]!, text: XSS_PAYLOADS[2]! },
  ]),
];

describe("historyRegion", () => {
  const base = {
    entries: revisionEntries(storedRevisions, hostileDecisions),
    texts: revisionTexts,
    reviewUrl: `/review/${SESSION_ID}?key=${REVIEW_KEY}`,
    current: 2,
    now: Date.parse("2026-05-01T12:00:00.000Z"),
  };

  it("is hidden while there is one revision and nothing was asked", () => {
    const html = historyRegion({
      ...base,
      entries: revisionEntries(storedRevisions.slice(0, 1), []),
      query: { shown: null, compare: null, problem: null },
    }).value;
    expect(html).toBe('<section data-region="history" hidden></section>');
  });

  it("lists revisions newest first with links, the GET form, and the feedback escaped", async () => {
    const html = historyRegion({
      ...base,
      query: { shown: null, compare: null, problem: null },
    }).value;
    const elements = await parseElements(html);
    expect(
      elements.filter((e) => ["script", "img", "svg", "iframe", "style"].includes(e.tag)),
    ).toEqual([]);
    expect(elements.some((e) => [...e.attrs.keys()].some((k) => k.startsWith("on")))).toBe(false);
    // HTMLRewriter answers attribute values as written (entities not decoded).
    const hrefs = elements.filter((e) => e.tag === "a").map((e) => e.attrs.get("href"));
    expect(hrefs).toEqual([
      `/review/${SESSION_ID}?key=${REVIEW_KEY}&amp;rev=2#revision-view`,
      `/review/${SESSION_ID}?key=${REVIEW_KEY}&amp;diff=1..2#revision-compare`,
      `/review/${SESSION_ID}?key=${REVIEW_KEY}&amp;rev=1#revision-view`,
    ]);
    const form = elements.find((e) => e.tag === "form")!;
    expect(form.attrs.get("method")).toBe("get");
    expect(form.attrs.has("action")).toBe(false);
    const hidden = elements.find((e) => e.tag === "input" && e.attrs.get("name") === "key");
    expect(hidden?.attrs.get("value")).toBe(REVIEW_KEY);
    // textOf answers the markup's text as written: the hostile text arrives escaped.
    expect(await textOf(html, ".asked-feedback")).toBe(escapeHtml(XSS_PAYLOADS.join("\n")));
    expect(await textOf(html, ".asked-comments")).toContain(escapeHtml(XSS_PAYLOADS[2]!));
  });

  it("compares two revisions with the feedback that led to the newer one beside the diff", async () => {
    const html = historyRegion({
      ...base,
      query: { shown: null, compare: { from: 1, to: 2 }, problem: null },
    }).value;
    expect(await textOf(html, ".revision-diff-column h3")).toBe(
      "Changes from revision 1 to revision 2",
    );
    expect(await textOf(html, ".revision-diff-summary")).toBe("2 lines added, 1 removed.");
    expect(await textOf(html, ".rev-removed del")).toBe("a");
    expect(await textOf(html, ".rev-added ins")).toBe("b");
    expect(await textOf(html, ".revision-asked .asked-feedback")).toBe(
      escapeHtml(XSS_PAYLOADS.join("\n")),
    );
    const elements = await parseElements(html);
    expect(elements.some((e) => e.tag === "script")).toBe(false);
    // The compared pair is preselected in the picker.
    const selected = elements.filter((e) => e.tag === "option" && e.attrs.has("selected"));
    expect(selected.map((e) => e.attrs.get("value"))).toEqual(["1", "2"]);
  });

  it("shows an older revision's text, escaped, and says when a text could not be read", async () => {
    const shown = historyRegion({
      ...base,
      query: { shown: 2, compare: null, problem: null },
    }).value;
    expect(await textOf(shown, ".revision-text")).toBe(escapeHtml(revisionTexts[1]!.content));
    expect(await textOf(shown, ".revision-view h3")).toBe("Revision 2 (the current plan)");
    const missing = historyRegion({
      ...base,
      texts: [],
      query: { shown: null, compare: { from: 1, to: 2 }, problem: null },
    }).value;
    expect(await textOf(missing, "#revision-compare")).toContain("could not be read");
  });

  it("says what was wrong with the query", async () => {
    const html = historyRegion({
      ...base,
      query: parseRevisionQuery({ rev: XSS_PAYLOADS[0] }, [1, 2]),
    }).value;
    expect(await textOf(html, ".warning")).toContain("rev must be a revision number");
    expect((await parseElements(html)).some((e) => e.tag === "script")).toBe(false);
  });
});

describe("the review route with revisions", () => {
  class HistoryLoader implements ReviewLoader {
    wanted: (readonly number[])[] = [];
    async loadReview(_id: string, _key: string, want?: { revisions: readonly number[] }) {
      this.wanted.push(want?.revisions ?? []);
      return {
        ok: true as const,
        value: {
          session: fixtureSession({
            review_url: `/review/${SESSION_ID}?key=${REVIEW_KEY}`,
            reject_count: 1,
          }),
          plan: revisionTexts[1]!,
          events: fixtureEvents(),
          decisions: hostileDecisions,
          revisions: storedRevisions,
          revisionTexts: revisionTexts.filter((t) => want?.revisions.includes(t.revision)),
        },
      };
    }
  }
  const appWith = (loader: ReviewLoader) => {
    const app = new Hono();
    app.route(
      "/review",
      reviewRoutes(() => loader),
    );
    return app;
  };
  const url = (query: string) =>
    `http://planport.test/review/${SESSION_ID}?key=${REVIEW_KEY}${query}`;

  it("?diff=1..2 asks the loader for both texts and renders the comparison", async () => {
    const loader = new HistoryLoader();
    const res = await appWith(loader).request(url("&diff=1..2"));
    expect(res.status).toBe(200);
    expect(loader.wanted).toEqual([[1, 2]]);
    const html = await res.text();
    expect(await textOf(html, ".revision-diff-column h3")).toBe(
      "Changes from revision 1 to revision 2",
    );
  });

  it("the picker form's from/to give the same comparison, also in the refreshed regions", async () => {
    const loader = new HistoryLoader();
    const res = await appWith(loader).request(url("&from=2&to=1&part=regions"));
    const html = await res.text();
    expect(loader.wanted).toEqual([[1, 2]]);
    expect(await textOf(html, ".revision-diff-summary")).toBe("2 lines added, 1 removed.");
  });

  it("a bad revision is a sentence on a 200 page, not an error", async () => {
    const res = await appWith(new HistoryLoader()).request(url("&rev=7"));
    expect(res.status).toBe(200);
    expect(await textOf(await res.text(), "[data-region=history] .warning")).toBe(
      "There is no revision 7 (the plan has revisions 1 to 2).",
    );
  });
});
