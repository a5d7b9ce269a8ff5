import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../local-client/embedded/worker-process.ts";
import {
  type PlanportWorker,
  settled,
  startPlanportWorker,
  uploadRepository,
} from "./planner-support.ts";

/**
 * The offline planner on THIS repository, through the real worker: the client snapshots the
 * planport checkout, the worker (under `wrangler dev`, `PLANPORT_PLANNER=offline`) plans a task
 * whose answer is known — rate limiting the events feed belongs in the event log and the feed
 * route — and the plan must name those files and not unrelated ones.
 */

let pp: PlanportWorker;

beforeAll(async () => {
  pp = await startPlanportWorker({ PLANPORT_PLANNER: "offline" });
}, 120_000);

afterAll(async () => {
  await pp?.close();
});

/** The "Files to change" section of a plan (up to the next heading of the same level). */
function filesToChange(plan: string): string[] {
  const start = plan.indexOf("## Files to change");
  expect(start, "the plan has a Files to change section").toBeGreaterThan(-1);
  const rest = plan.slice(start + 1);
  const end = rest.search(/\n## /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^(?:\d+\.|-) `([^`]+)`/gm)].map((m) => m[1]!);
}

describe("the offline planner on this repository, under wrangler dev", () => {
  it("plans rate limiting of the events feed around the event log and the feed route", async () => {
    const snapshot = await uploadRepository(pp.client, PACKAGE_ROOT);
    expect(snapshot.files).toBeGreaterThan(100);
    const created = await pp.client.createSession({
      prompt: "Add rate limiting to the events feed",
      snapshot_id: snapshot.id,
    });
    expect(created).toMatchObject({ planner: "offline", can_execute_remotely: false });

    const review = await settled(pp, created.id);
    expect(review).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    const plan = (await pp.client.plan(created.id)).content;
    expect(plan).toContain("offline planner");
    const files = filesToChange(plan);
    expect(files).toContain("src/session/events/log.ts");
    // The feed route, the session object, or the rate limiter the API already has.
    expect(
      files.some((f) =>
        ["src/api/sessions.ts", "src/session/session-object.ts", "src/api/rate-limit.ts"].includes(
          f,
        ),
      ),
    ).toBe(true);
    for (const unrelated of [
      "src/review/styles.ts",
      "src/snapshot/gunzip.ts",
      "local-client/handoff/teleport.ts",
    ]) {
      expect(files).not.toContain(unrelated);
      expect(plan).not.toContain(`\`${unrelated}\``);
    }
    expect(files.filter((f) => f.startsWith("src/planner/models/offline/"))).toEqual([]);
    expect(plan).toMatch(/## Verification[\s\S]*npm (run )?test/);

    // It plans only: approving for remote execution is refused with a clear 409.
    const approve = await pp.api.call("POST", `/v1/sessions/${created.id}/decision`, pp.auth, {
      json: { tool_use_id: review.pending!.tool_use_id, decision: "approve" },
    });
    expect(approve.status).toBe(409);
    expect(((await approve.json()) as { error: { code: string } }).error.code).toBe(
      "cannot_execute_remotely",
    );
  }, 120_000);
});
