import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../../src/config.ts";
import type { SessionPort, StepResult } from "../../src/planner/port.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { eventually } from "../support/eventually.ts";
import { ALICE, api, createDrivenSession, sessionObject } from "../support/worker/sessions.ts";

/**
 * The alarm drives the planning engine: these tests put a test double in the engine's place
 * (`planningStep`) and check how the session follows each StepResult.
 */

type StepDouble = (port: SessionPort) => Promise<StepResult>;

async function useStepDouble(id: string, double: StepDouble): Promise<void> {
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.planningStep = (port) => double(port);
  });
}

function alarmOf(id: string): Promise<number | null> {
  return runInDurableObject(sessionObject(id), (_object: SessionObject, state) =>
    state.storage.getAlarm(),
  );
}

function note(port: SessionPort, text: string): void {
  port.appendEvents([
    { type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] } },
  ]);
}

describe("the loop driven by the alarm", () => {
  it("creating a session writes system/init and schedules the first step", async () => {
    const session = await api.createSession(ALICE, { prompt: "Add OAuth login" });
    expect(session.status).toBe("running");
    expect(session.phase).toBe("running");
    const [init] = (await api.events(ALICE, session.id, { limit: 1 })).data;
    expect(init).toMatchObject({ type: "system", subtype: "init", permission_mode: "plan" });
  });

  it("continue runs the next step at once; idle stops the loop and leaves only the idle clock on the alarm", async () => {
    const session = await createDrivenSession();
    let calls = 0;
    await useStepDouble(session.id, async (port) => {
      calls++;
      note(port, `step ${calls}`);
      return calls < 3 ? { next: "continue" } : { next: "idle" };
    });
    await api.message(ALICE, session.id, { text: "go" });
    await eventually(async () => (await api.getSession(ALICE, session.id)).status === "idle");
    expect(calls).toBe(3);
    const texts = (await api.allEvents(ALICE, session.id)).flatMap((e) =>
      e.type === "assistant"
        ? e.message.content.flatMap((b) => (b.type === "text" ? [b.text] : []))
        : [],
    );
    expect(texts).toEqual(["step 1", "step 2", "step 3"]);
    // No step is due; what is left is the idle archive (DESIGN.md "Retention").
    const idle = await api.getSession(ALICE, session.id);
    // (The feed read above was a terminal poll, which moves the idle time without setting the
    // alarm: the alarm finds it moved when it fires. See session-idle.test.ts.)
    expect(await alarmOf(session.id)).toBe(Date.parse(idle.updated_at) + configOf(env).idleMs);
  });

  it("a message that arrives during a step gets another step, even when the step answered idle", async () => {
    const session = await createDrivenSession();
    let calls = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await useStepDouble(session.id, async () => {
      calls++;
      if (calls === 1) await gate;
      return { next: "idle" };
    });
    await api.message(ALICE, session.id, { text: "first" });
    await eventually(() => calls === 1);
    await api.message(ALICE, session.id, { text: "second, while the step runs" });
    release();
    await eventually(() => calls === 2);
    await eventually(async () => (await api.getSession(ALICE, session.id)).status === "idle");
  });

  it("wait with wakeAt sets the alarm for the AFK timeout and wakes the engine then", async () => {
    const session = await createDrivenSession();
    const wakeAt = Date.now() + 3_600_000;
    let calls = 0;
    let sawWait = false;
    await useStepDouble(session.id, async (port) => {
      calls++;
      if (calls === 1) {
        port.openWait({
          kind: "question",
          tool_use_id: "toolu_q",
          input: { questions: [{ question: "Which?" }] },
        });
        return { next: "wait", wakeAt };
      }
      sawWait = port.pendingWait()?.tool_use_id === "toolu_q";
      port.closeWait("toolu_q");
      return { next: "idle" };
    });
    await api.message(ALICE, session.id, { text: "go" });
    await eventually(async () => (await api.getSession(ALICE, session.id)).phase === "needs_input");
    await eventually(async () => (await alarmOf(session.id)) === wakeAt);
    // Nothing runs before the AFK deadline…
    expect(await runDurableObjectAlarm(sessionObject(session.id))).toBe(true);
    expect(calls).toBe(1);
    // …and at it, the engine is woken with the question still open.
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => {
      object.clock = () => wakeAt + 1;
    });
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => object.alarm());
    expect(calls).toBe(2);
    expect(sawWait).toBe(true);
    expect(await api.getSession(ALICE, session.id)).toMatchObject({
      status: "idle",
      phase: "needs_input",
      pending: null,
    });
  });

  it("a step that throws ends the session with error_during_execution and a readable message", async () => {
    const session = await createDrivenSession();
    await useStepDouble(session.id, async () => {
      throw new Error("model endpoint refused the request");
    });
    await api.message(ALICE, session.id, { text: "go" });
    await eventually(async () => (await api.getSession(ALICE, session.id)).phase === "done");
    const after = await api.getSession(ALICE, session.id);
    expect(after).toMatchObject({
      status: "idle",
      outcome: { kind: "terminated", subtype: "error_during_execution" },
    });
    const last = (await api.allEvents(ALICE, session.id)).at(-1);
    expect(last).toMatchObject({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
    });
    expect((last as { message: string }).message).toContain("model endpoint refused the request");
  });

  it("a session archived during a step takes no further effect from that step", async () => {
    const session = await createDrivenSession();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    let threw = false;
    await useStepDouble(session.id, async (port) => {
      started = true;
      await gate;
      try {
        note(port, "too late");
      } catch {
        threw = true;
      }
      return { next: "continue" };
    });
    await api.message(ALICE, session.id, { text: "go" });
    await eventually(() => started);
    await api.archive(ALICE, session.id);
    release();
    await eventually(() => threw);
    const events = await api.allEvents(ALICE, session.id);
    expect(events.at(-1)).toMatchObject({ type: "result", subtype: "archived" });
    expect((await api.getSession(ALICE, session.id)).status).toBe("archived");
  });
});
