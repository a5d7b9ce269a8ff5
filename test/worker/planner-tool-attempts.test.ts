import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseEngineState } from "../../src/planner/engine-state.ts";
import { step } from "../../src/planner/loop.ts";
import { MAX_TOOL_ATTEMPTS } from "../../src/planner/tool-calls.ts";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import { eventually } from "../support/eventually.ts";
import { tarGz } from "../support/tarballs.ts";
import { ALICE, api, sessionObject, withPort } from "../support/worker/sessions.ts";
import { scriptedSession, text, tool, toolResultsOf, turn } from "./planner/helpers.ts";
import { eventsOf, resultOf, resultText, settled, toolCalls } from "./scenario/support.ts";

/**
 * A tool call the session keeps dying in (issue 10, finding 1: a frozen Grep was re-run by
 * every alarm after each restart, freezing the worker again). Each start is recorded before
 * the call runs; a call started {@link MAX_TOOL_ATTEMPTS} times without a result is answered
 * with an error instead of being run again, and the session goes on.
 */

const NOT_FINISHED = "did not finish";

describe("a tool call interrupted again and again", () => {
  it("is run twice at most, then answered with an error saying it was not retried, and the session goes on", async () => {
    const { port, planner, opts } = scriptedSession([
      turn(tool("Grep", { pattern: "createSession" })),
      turn(text("The search did not finish; I will plan without it.")),
    ]);
    let runs = 0;
    // The session dies after the call ran and before its result was stored, every time (the
    // port's hook fires once, so it is armed again before each step).
    const dieAfterTheCall = () => {
      port.crashWhen = (op, detail) => {
        const json = JSON.stringify(detail);
        if (op !== "appendEvents" || !json.includes('"tool_result"')) return false;
        if (json.includes(NOT_FINISHED)) return false;
        runs++;
        return true;
      };
    };
    for (let i = 0; i < MAX_TOOL_ATTEMPTS; i++) {
      dieAfterTheCall();
      await expect(step(port, {}, opts)).rejects.toThrow("simulated crash");
    }
    expect(runs).toBe(MAX_TOOL_ATTEMPTS);
    dieAfterTheCall();

    // The third step does not run the call again: it answers it, and the model hears why.
    expect(await step(port, {}, opts)).toEqual({ next: "continue" });
    expect(runs).toBe(MAX_TOOL_ATTEMPTS);
    const [result] = toolResultsOf(port.listEvents());
    expect(result).toMatchObject({ tool_use_id: "toolu_scripted_0_0", is_error: true });
    expect(result?.content).toContain("Grep did not finish: it was started 2 times");
    expect(result?.content).toContain("was not run again");
    expect(await step(port, {}, opts)).toEqual({ next: "idle" });
    expect(planner.requests).toHaveLength(2);
  });

  it("counts only calls that started: the calls after the one that died run normally", async () => {
    const { port, opts } = scriptedSession([
      turn(tool("Read", { file_path: "src/auth/session.ts" }), tool("Glob", { pattern: "**/*" })),
    ]);
    for (let i = 0; i < MAX_TOOL_ATTEMPTS; i++) {
      port.crashWhen = (op, detail) =>
        op === "appendEvents" &&
        JSON.stringify(detail).includes('"tool_use_id":"toolu_scripted_0_0"');
      await expect(step(port, {}, opts)).rejects.toThrow("simulated crash");
    }
    port.crashWhen = null;
    await step(port, {}, opts);
    const results = toolResultsOf(port.listEvents());
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ["toolu_scripted_0_0", true],
      ["toolu_scripted_0_1", false],
    ]);
    expect(results[1]?.content).toContain("src/auth/session.ts");
  });

  it("reads an engine state saved before attempts were recorded, and drops the opened waits it listed (the waits table has them)", () => {
    const saved = {
      v: 1,
      opened: true,
      schedule: { humanTurns: 1, lastReminderTurn: 1, reminders: 1 },
      lastHumanEventId: "evt_0000000000000002",
      reminders: [],
      openedWaits: ["toolu_q"],
    };
    const { openedWaits: _inTheWaitsTable, ...kept } = saved;
    expect(parseEngineState(saved)).toEqual({
      ok: true,
      value: { ...kept, toolAttempts: {}, taskAttempts: {} },
    });
  });
});

/**
 * 8 files of random a/b lines, 8,000 characters each: `[ab]*a[ab]{24}$` defeats RE2's DFA on
 * them, so its (linear) NFA takes seconds per file and a Grep runs until its time budget.
 */
async function uploadAbCorpus(): Promise<string> {
  let x = 7;
  const line = () => {
    let s = "";
    for (let i = 0; i < 7_999; i++) {
      x = (Math.imul(x, 1103515245) + 12345) | 0;
      s += (x >>> 16) & 1 ? "a" : "b";
    }
    return `${s}\n`;
  };
  const body = Array.from({ length: 125 }, line).join("");
  const files = Array.from({ length: 8 }, (_, i) => ({ name: `ab/f${i}.txt`, body }));
  const res = await api.uploadSnapshot(ALICE, await tarGz(files));
  expect(res.status).toBe(201);
  return ((await res.json()) as SnapshotReceipt).id;
}

/** The recorded starts of one tool call, read from the session's storage. */
async function attemptsOf(sessionId: string, toolUseId: string): Promise<number> {
  return withPort(sessionId, (port) => {
    const state = port.loadState().engineState as {
      toolAttempts?: Record<string, number>;
    } | null;
    return state?.toolAttempts?.[toolUseId] ?? 0;
  });
}

describe("a Grep the session object is reset in, twice, in the real Durable Object", () => {
  it("is answered with an error on the next run instead of being scanned a third time", async () => {
    const grep = "toolu_slow_grep";
    const session = await api.createSession(ALICE, {
      prompt: "Find the a/b patterns",
      planner: "scripted",
      snapshot_id: await uploadAbCorpus(),
      script: [
        turn(tool("Grep", { pattern: "[ab]*a[ab]{24}$", output_mode: "count" }, grep)),
        turn(tool("Write", { file_path: "$PLAN_PATH", content: "# Plan\n" })),
        turn(tool("ExitPlanMode", {})),
      ],
    });
    for (let attempt = 1; attempt <= MAX_TOOL_ATTEMPTS; attempt++) {
      // The call is running once its start is recorded (the scan yields, so the object answers).
      await eventually(async () => (await attemptsOf(session.id, grep)) === attempt, {
        interval: 50,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(resultsFor(await eventsOf(session), grep)).toEqual([]);
      await expect(
        runInDurableObject(sessionObject(session.id), (_o, state) =>
          state.abort(`reset ${attempt} in the middle of a Grep`),
        ),
      ).rejects.toThrow("in the middle of a Grep");
    }

    const after = await settled(session.id);
    expect(after).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    const events = await eventsOf(after);
    const result = resultOf(events, grep);
    expect(result.is_error).toBe(true);
    expect(resultText(result)).toContain(
      `Grep did not finish: it was started ${MAX_TOOL_ATTEMPTS} times`,
    );
    expect(toolCalls(events).map((c) => c.name)).toEqual(["Grep", "Write", "ExitPlanMode"]);
  }, 90_000);
});

function resultsFor(events: Awaited<ReturnType<typeof eventsOf>>, id: string) {
  return events.flatMap((e) =>
    e.type === "user" && typeof e.message.content !== "string"
      ? e.message.content.filter((b) => b.type === "tool_result" && b.tool_use_id === id)
      : [],
  );
}
