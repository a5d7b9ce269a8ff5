import { describe, expect, it } from "vitest";
import { reportMarkdown, summarize, type TreeResult } from "../bench/uploads/report.ts";

/** The uploads benchmark's figures (test/bench/uploads/report.ts), from made-up trees. */

const tree = (over: Partial<TreeResult>): TreeResult => ({
  client: "fetch",
  repo: "sphinx-doc/sphinx",
  commit: "0".repeat(40),
  bodyBytes: 5_900_000,
  sentAfterMs: 4_600,
  upload: "ok",
  uploadMs: 400,
  plan: "plan",
  planMs: 1_500,
  ...over,
});

describe("the uploads benchmark's report", () => {
  it("counts failed uploads by kind and takes the medians of what worked only", () => {
    const results = [
      tree({ uploadMs: 300 }),
      tree({ uploadMs: 500, sentAfterMs: 5_200 }),
      tree({
        upload: "fetch failed (EPIPE)",
        uploadMs: 90,
        plan: null,
        planMs: null,
        sentAfterMs: 5_300,
      }),
      tree({ upload: "fetch failed (EPIPE)", uploadMs: 80, plan: null, planMs: null }),
      tree({ plan: "timeout: still running after 300 s", planMs: 300_000 }),
      tree({ client: "planport", sentAfterMs: 5_300 }),
    ];
    const fetched = summarize("fetch", results);
    expect(fetched).toMatchObject({
      trees: 5,
      sentAfterIdleClose: 2,
      uploadsFailed: 2,
      failures: { "fetch failed (EPIPE)": 2 },
      plans: 2,
      planFailures: 1,
      uploadMedianMs: 400,
      planMedianMs: 1_500,
    });
    const table = reportMarkdown([fetched, summarize("planport", results)]);
    expect(table).toContain("| 5 | 2 | 2 (2× fetch failed (EPIPE)) | 2 (1 failed) |");
    expect(table).toContain("| 1 | 1 | 0 | 1 (0 failed) |");
    expect(table).toContain("planport's client over plain fetch: 1.00×");
  });
});
