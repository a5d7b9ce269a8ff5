import { afterEach, describe, expect, it, vi } from "vitest";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { findTool, Workspace } from "../../src/planner/tools/index.ts";
import {
  SCAN_BUDGET_MS,
  TIME_LIMIT,
  WORK_LIMIT,
  WORK_LONG_LINE_CHARS,
} from "../../src/planner/tools/scan-budget.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { generatedRepository } from "./planner/generated-repo.ts";
import { PLAN_PATH, runUntilStopped, toolResultsOf } from "./planner/helpers.ts";

/**
 * The same task on the same tree gives the same plan, byte for byte, on a fast worker and on a
 * slow or busy one (issue 24). A long-lived worker that had slowed down 3–5× planned 60 of 140
 * issues differently: its Grep scans reached their 10 s wall-time budget and answered with
 * partial counts, so "defined in N" and the ranking moved. The offline planner's scans now
 * count work instead of time (scan-budget.ts); a model's scans keep the wall-time budget.
 */

const TASK =
  "Add GitHub OAuth login that reuses the existing session, validate the invoice export and cache the report chart";

function repository(): Record<string, string> {
  return generatedRepository(400);
}

async function plan(files: Record<string, string>): Promise<{ plan: string; port: MemoryPort }> {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt: TASK } });
  expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
  return { plan: port.readPlan()!.content, port };
}

/**
 * A worker so slow that every read of the clock finds another `stepMs` gone: each scan would
 * pass a 10 s wall-time budget after a few slices.
 */
function crawlingClock(stepMs: number): void {
  let now = Date.now();
  vi.spyOn(Date, "now").mockImplementation(() => {
    now += stepMs;
    return now;
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the offline planner's plan does not depend on the worker's speed", () => {
  it("gives byte for byte the same plan on a worker whose clock crawls (every scan past 10 s of wall time) as on a fresh one", async () => {
    const files = repository();
    const fresh = await plan(files);
    crawlingClock(SCAN_BUDGET_MS / 4);
    const slow = await plan(files);
    expect(slow.plan).toBe(fresh.plan);
    // Not one of its scans answered partially: no time limit was reached.
    for (const r of toolResultsOf(slow.port.listEvents()))
      expect(String(r.content)).not.toMatch(/reached its (time|work) limit/);
  });

  it("gives the same plan while another job keeps the same thread busy between its yields", async () => {
    const files = repository();
    const fresh = await plan(files);
    // A CPU hog sharing the isolate: a burst of busy work on every turn of the event loop,
    // what other requests and sessions would take from the thread.
    let hogging = true;
    let sink = 0;
    const hog = async () => {
      while (hogging) {
        for (let i = 0; i < 200_000; i++) sink = (sink * 31 + i) % 1_000_003;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    };
    const running = hog();
    try {
      const busy = await plan(files);
      expect(busy.plan).toBe(fresh.plan);
    } finally {
      hogging = false;
      await running;
      expect(sink).toBeGreaterThanOrEqual(0);
    }
  });

  it("keeps the wall-time budget for a model's scans: the same crawling clock cuts a model's Grep short", async () => {
    const port = new MemoryPort({ files: repository() });
    const grep = (limit: typeof TIME_LIMIT) =>
      findTool("Grep")!.run(
        { pattern: "session", output_mode: "count" },
        {
          port,
          workspace: new Workspace(port, PLAN_PATH),
          mode: "plan",
          planPath: PLAN_PATH,
          scanLimit: limit,
        },
      );
    const whole = await grep(WORK_LIMIT);
    crawlingClock(SCAN_BUDGET_MS / 4);
    const timed = await grep(TIME_LIMIT);
    const counted = await grep(WORK_LIMIT);
    if (timed.kind !== "result" || counted.kind !== "result" || whole.kind !== "result")
      throw new Error("Grep opened a wait");
    expect(timed.content).toContain("(The search reached its time limit of 10 s at ");
    expect(counted.content).toBe(whole.content);
  });

  it("cuts a very long line at the same character whatever the clock says (the work limit's fixed cut)", async () => {
    const line = `${"x".repeat(WORK_LONG_LINE_CHARS - 20)} early ${"y".repeat(50_000)} late\n`;
    const port = new MemoryPort({ files: { "dist-like/app.js": line } });
    const grep = async (pattern: string) => {
      const outcome = await findTool("Grep")!.run(
        { pattern, output_mode: "count" },
        {
          port,
          workspace: new Workspace(port, PLAN_PATH),
          mode: "plan",
          planPath: PLAN_PATH,
          scanLimit: WORK_LIMIT,
        },
      );
      if (outcome.kind !== "result") throw new Error("Grep opened a wait");
      return outcome.content;
    };
    const quick = [await grep("early"), await grep("late")];
    crawlingClock(1_000);
    expect([await grep("early"), await grep("late")]).toEqual(quick);
    expect(quick[0]).toContain("dist-like/app.js:1");
    expect(quick[1]).toMatch(
      /^No matches found\n\(1 very long line was searched in its first 65,536 characters only/,
    );
  });
});
