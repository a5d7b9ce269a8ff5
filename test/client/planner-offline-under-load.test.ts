import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { step } from "../../src/planner/loop.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { SCAN_BUDGET_MS } from "../../src/planner/tools/scan-budget.ts";
import type { Event } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { generatedRepository } from "../worker/planner/generated-repo.ts";

/**
 * The same plan, whatever the load (issue 31): the same task on the same tree, planned again and
 * again while two CPU burners (busy-looping processes) take the machine's cores and the clock
 * jumps past every time budget at each read — byte for byte the plan a quiet run gave. The jumping
 * clock makes the verdict independent of how loaded the machine really is: any cut-off tied to
 * elapsed time (a scan's wall-time budget, a deadline) is passed on every run, so a plan that
 * depended on one would differ here whatever the machine's speed. (With the offline planner's
 * scans on the 10 s wall-time budget, as before issue 24, this test fails.)
 */

const TASK =
  "Add GitHub OAuth login that reuses the existing session, validate the invoice export and cache the report chart";
const RUNS = 2;
const BURNERS = 2;

let burners: ChildProcess[] = [];

beforeAll(() => {
  burners = Array.from({ length: BURNERS }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
});

afterAll(() => {
  for (const burner of burners) burner.kill("SIGKILL");
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function plan(files: Record<string, string>): Promise<{ plan: string; events: Event[] }> {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt: TASK } });
  const planner = offlinePlanner();
  for (let i = 0; i < 60; i++) {
    const result = await step(port, {}, { planner });
    if (result.next !== "continue") break;
  }
  expect(port.pendingWait()?.kind).toBe("plan");
  return { plan: port.readPlan()!.content, events: port.listEvents() };
}

/** Every read of the clock finds another `stepMs` gone (Date and performance alike). */
function jumpingClock(stepMs: number): void {
  let date = Date.now();
  let perf = performance.now();
  vi.spyOn(Date, "now").mockImplementation(() => {
    date += stepMs;
    return date;
  });
  vi.spyOn(performance, "now").mockImplementation(() => {
    perf += stepMs;
    return perf;
  });
}

function toolResults(events: readonly Event[]): string[] {
  return events.flatMap((e) =>
    e.type === "user" && typeof e.message.content !== "string"
      ? e.message.content.flatMap((b) =>
          b.type === "tool_result" ? [JSON.stringify(b.content)] : [],
        )
      : [],
  );
}

describe("the offline planner under load", () => {
  it(`gives the quiet run's plan byte for byte in ${RUNS} runs beside ${BURNERS} CPU burners with a clock that jumps past every budget`, async () => {
    const files = generatedRepository(120);
    const quiet = await plan(files);
    expect(burners.every((b) => b.exitCode === null)).toBe(true);
    jumpingClock(SCAN_BUDGET_MS);
    for (let run = 0; run < RUNS; run++) {
      const loaded = await plan(files);
      expect(toolResults(loaded.events)).toEqual(toolResults(quiet.events));
      expect(loaded.plan).toBe(quiet.plan);
    }
    for (const result of toolResults(quiet.events))
      expect(result).not.toMatch(/reached its (time|work) limit/);
  });
});
