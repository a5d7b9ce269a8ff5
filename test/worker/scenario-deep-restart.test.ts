import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { createSession } from "../../src/owner/sessions.ts";
import { step } from "../../src/planner/loop.ts";
import { type Event, parentToolUseIdOf } from "../../src/protocol/index.ts";
import { requestStep } from "../../src/session/lifecycle.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { eventually } from "../support/eventually.ts";
import { call, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import { ALICE, api, ORIGIN, sessionObject } from "../support/worker/sessions.ts";
import { anthropicLane } from "./planner/anthropic-lane.ts";
import { FAST_RETRY } from "./planner/helpers.ts";
import {
  eventsOf,
  expectWellFormedLog,
  resultOf,
  settled,
  toolCalls,
  uploadShop,
} from "./scenario/support.ts";

/**
 * A restart in the middle of a deep session's exploration, on the real session Durable Object
 * with the real engine and the anthropic planner against the Messages API TEST DOUBLE over
 * HTTP. Three explorers run; one has finished, one has finished a turn, one is waiting for its
 * model when the object is reset with `ctx.abort()` (as when the runtime restarts it). The next
 * instance resumes from SQLite: only the interrupted call is asked again; no finished subagent
 * turn and no finished Task runs twice.
 */

const RESTART = "restart in the middle of the explorers";
/** The interrupted explorer's model latency: long enough to abort the object during it. */
const SLOW_MS = 2_000;

describe("a restart in the middle of a deep session's subagents, in the real session", () => {
  it("resumes each subagent where its log ends: finished turns and finished Tasks are never redone", async () => {
    const r = (x: Parameters<typeof reply>[1]) => reply("anthropic", x);
    const lane = await anthropicLane([
      r({
        match: SESSION_REQUEST,
        content: [
          say("Exploring."),
          call("toolu_a", "Task", {
            description: "Architecture",
            prompt: "EXPLORE-A: how does billing work?",
          }),
          call("toolu_b", "Task", {
            description: "Files",
            prompt: "EXPLORE-B: which files change?",
          }),
          call("toolu_c", "Task", { description: "Risks", prompt: "EXPLORE-C: what could break?" }),
        ],
      }),
      // A: a read, then (after the restart) its report.
      r({
        match: "EXPLORE-A",
        content: [call("toolu_a_read", "Read", { file_path: "src/billing/invoice.ts" })],
      }),
      r({ match: "EXPLORE-A", content: [say("A REPORT.")] }),
      // B: its first call is the one in flight at the restart; the replay gets the second answer.
      r({ match: "EXPLORE-B", delay_ms: SLOW_MS, content: [say("B REPORT (never delivered).")] }),
      r({ match: "EXPLORE-B", content: [say("B REPORT.")] }),
      // C: reports at once, before the restart.
      r({ match: "EXPLORE-C", content: [say("C REPORT.")] }),
      r({ match: SESSION_REQUEST, content: [call("toolu_exit", "ExitPlanMode", {})] }),
    ]);
    const shop = await uploadShop();
    const created = await createSession(
      { ...env, ANTHROPIC_API_KEY: "sk-test-double" },
      await ownerIdOf(ALICE.token),
      {
        prompt: "Round invoice totals to cents",
        planner: "anthropic",
        variant: "deep",
        snapshot_id: shop.id,
      },
      ORIGIN,
      { autostart: false },
    );
    if (!created.ok) throw new Error(created.error.message);
    const session = created.value;
    const armed = async () =>
      runInDurableObject(sessionObject(session.id), async (object: SessionObject, state) => {
        object.planningStep = (port, stepEnv) =>
          step(port, { ...stepEnv, ...lane.env }, { retry: FAST_RETRY });
        return state;
      });
    await runInDurableObject(sessionObject(session.id), async (object: SessionObject, state) => {
      object.planningStep = (port, stepEnv) =>
        step(port, { ...stepEnv, ...lane.env }, { retry: FAST_RETRY });
      const now = Date.now();
      state.storage.transactionSync(() => requestStep(state.storage.sql, now));
      await state.storage.setAlarm(now);
    });

    // Wait until C has finished, A has finished its first turn and B's call is in flight.
    const taskResult = (events: readonly Event[], id: string) =>
      events.some(
        (e) =>
          e.type === "user" &&
          parentToolUseIdOf(e) === null &&
          Array.isArray(e.message.content) &&
          e.message.content.some((b) => b.type === "tool_result" && b.tool_use_id === id),
      );
    await eventually(
      async () => {
        const events = await eventsOf(session);
        const sent = await lane.requests();
        return (
          taskResult(events, "toolu_c") &&
          toolCalls(events).some((c) => c.id === "toolu_a_read") &&
          events.some(
            (e) =>
              parentToolUseIdOf(e) === "toolu_a" &&
              e.type === "user" &&
              Array.isArray(e.message.content),
          ) &&
          sent.some((x) => x.matched === "EXPLORE-B")
        );
      },
      { interval: 20 },
    );
    await expect(
      runInDurableObject(sessionObject(session.id), (_o, state) => state.abort(RESTART)),
    ).rejects.toThrow(RESTART);

    // The next instance (started by this call) gets the test's seam before anything else
    // reaches it; workerd retries the broken alarm only seconds later.
    await armed();
    const before = await eventsOf(session);
    expect(taskResult(before, "toolu_c")).toBe(true);
    expect(taskResult(before, "toolu_a")).toBe(false);
    expect(taskResult(before, "toolu_b")).toBe(false);

    const after = await settled(session.id);
    expect(after).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    // Past the interrupted call's latency: its late answer must not land anywhere.
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));

    const events = await eventsOf(after);
    expectWellFormedLog(events);
    expect(events.slice(0, before.length)).toEqual(before);
    const sent = await lane.requests();
    const count = (m: string) => sent.filter((x) => x.matched === m).length;
    // A: its first turn was not asked again, only its second. C: never again. B: the
    // interrupted call, then its replay.
    expect(count("EXPLORE-A")).toBe(2);
    expect(count("EXPLORE-C")).toBe(1);
    expect(count("EXPLORE-B")).toBe(2);
    expect(count(SESSION_REQUEST)).toBe(2);
    for (const [id, report] of [
      ["toolu_a", "A REPORT."],
      ["toolu_b", "B REPORT."],
      ["toolu_c", "C REPORT."],
    ] as const) {
      expect(resultOf(events, id)).toMatchObject({ content: report, is_error: false });
    }
    expect(resultOf(events, "toolu_a_read").is_error).toBe(false);
    const subagentReplies = events.filter(
      (e) => e.type === "assistant" && parentToolUseIdOf(e) !== null,
    );
    expect(subagentReplies.map((e) => parentToolUseIdOf(e)).sort()).toEqual([
      "toolu_a",
      "toolu_a",
      "toolu_b",
      "toolu_c",
    ]);
    // The interrupted call was never paid for twice: 2 session calls and 4 subagent replies.
    expect(after.usage).toMatchObject({ input_tokens: 6 * 100, output_tokens: 6 * 20 });
    expect((await api.getSession(ALICE, session.id)).pending).toMatchObject({
      tool_use_id: "toolu_exit",
    });
  });
});
