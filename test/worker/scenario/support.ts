import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ownerIdOf } from "../../../src/api/auth.ts";
import { createSession } from "../../../src/owner/sessions.ts";
import { step } from "../../../src/planner/loop.ts";
import { createPlanner } from "../../../src/planner/models/index.ts";
import type { ModelRequest, Planner } from "../../../src/planner/models/types.ts";
import type {
  CreateSession,
  Event,
  ScriptedTurn,
  Session,
  SnapshotReceipt,
  ToolResultBlock,
  ToolUseBlock,
} from "../../../src/protocol/index.ts";
import { requestStep } from "../../../src/session/lifecycle.ts";
import type { SessionObject } from "../../../src/session/session-object.ts";
import { eventually } from "../../support/eventually.ts";
import { tarGz } from "../../support/tarballs.ts";
import { ALICE, api, ORIGIN, sessionObject } from "../../support/worker/sessions.ts";
import { shopFixture } from "../planner/helpers.ts";

/**
 * Scenario tests run the REAL session Durable Object with the REAL engine: sessions are created
 * through the HTTP API (`exports.default.fetch`), the alarm-driven loop runs `step` with the
 * scripted planner, and the test acts as the user through the public routes. The only seam
 * used is a recording spy around the real scripted planner where a test must see what the
 * model was sent.
 */

/** Uploads the `shop` fixture repository as a snapshot through the API; returns its id. */
export async function uploadShop(): Promise<{ id: string; files: Record<string, string> }> {
  const files = shopFixture();
  const body = await tarGz(Object.entries(files).map(([name, text]) => ({ name, body: text })));
  const res = await api.uploadSnapshot(ALICE, body);
  expect(res.status).toBe(201);
  const receipt = (await res.json()) as SnapshotReceipt;
  return { id: receipt.id, files };
}

/** Creates a scripted session on the shop snapshot through `POST /v1/sessions`; the loop starts. */
export async function startScripted(
  script: ScriptedTurn[],
  extra: Partial<CreateSession> = {},
): Promise<{ session: Session; files: Record<string, string> }> {
  const shop = await uploadShop();
  const session = await api.createSession(ALICE, {
    prompt: "Round invoice totals to whole cents and show the currency",
    planner: "scripted",
    script,
    snapshot_id: shop.id,
    ...extra,
  });
  return { session, files: shop.files };
}

/**
 * Creates a scripted session whose real engine step runs with a recording spy around the real
 * scripted planner, so the test sees every model request. The loop is started only once the
 * spy is in place (the same step request `create` would make), so not even the first request
 * is missed.
 */
export async function startRecorded(
  script: ScriptedTurn[],
  extra: Partial<CreateSession> = {},
): Promise<{ session: Session; requests: ModelRequest[] }> {
  const shop = await uploadShop();
  const created = await createSession(
    env,
    await ownerIdOf(ALICE.token),
    {
      prompt: "Round invoice totals to whole cents and show the currency",
      planner: "scripted",
      script,
      snapshot_id: shop.id,
      ...extra,
    },
    ORIGIN,
    { autostart: false },
  );
  if (!created.ok) throw new Error(`createSession: ${created.error.message}`);
  const session = created.value;
  const requests: ModelRequest[] = [];
  await runInDurableObject(sessionObject(session.id), async (object: SessionObject, state) => {
    object.planningStep = (port, stepEnv) => {
      const planner = createPlanner(port.facts, stepEnv);
      const spy: Planner = {
        name: planner.name,
        canExecuteRemotely: planner.canExecuteRemotely,
        next(request) {
          // Recorded as sent, before the planner answers (the session may settle right after).
          requests.push(structuredClone({ ...request, signal: undefined }));
          return planner.next(request);
        },
      };
      return step(port, stepEnv, { planner: spy });
    };
    const now = Date.now();
    state.storage.transactionSync(() => requestStep(state.storage.sql, now));
    await state.storage.setAlarm(now);
  });
  return { session, requests };
}

/** Waits until the loop has stopped: the session waits for the user, is idle, or ended. */
export async function settled(id: string): Promise<Session> {
  let session = await api.getSession(ALICE, id);
  await eventually(
    async () => {
      session = await api.getSession(ALICE, id);
      return session.status !== "running";
    },
    { interval: 20 },
  );
  return session;
}

/**
 * Runs the session's alarm by hand until none is due at the object's clock (deterministic
 * stepping). A session that has not ended always keeps one alarm, its idle archive days
 * ahead (DESIGN.md "Retention"): that one is left alone.
 */
export async function drainAlarms(id: string, max = 50): Promise<number> {
  for (let ran = 0; ran < max; ran++) {
    const due = await runInDurableObject(
      sessionObject(id),
      async (object: SessionObject, state) => {
        const at = await state.storage.getAlarm();
        return at !== null && at <= object.clock();
      },
    );
    if (!due || !(await runDurableObjectAlarm(sessionObject(id)))) return ran;
  }
  throw new Error(`session ${id} still had an alarm after ${max} runs`);
}

/** Every event of the session (through the feed, with a review key so no terminal poll counts). */
export async function eventsOf(session: Session): Promise<Event[]> {
  return api.allEvents({ reviewKey: reviewKeyOf(session) }, session.id);
}

/** The review key inside a session's review link. */
export function reviewKeyOf(session: Session): string {
  const key = new URL(session.review_url).searchParams.get("key");
  if (key === null) throw new Error(`no key in ${session.review_url}`);
  return key;
}

export function toolCalls(events: readonly Event[]): ToolUseBlock[] {
  return events.flatMap((e) =>
    e.type === "assistant" ? e.message.content.filter((b) => b.type === "tool_use") : [],
  );
}

export function toolResults(events: readonly Event[]): ToolResultBlock[] {
  return events.flatMap((e) =>
    e.type === "user" && typeof e.message.content !== "string"
      ? e.message.content.filter((b) => b.type === "tool_result")
      : [],
  );
}

/** The text of a tool result (string or text blocks). */
export function resultText(block: ToolResultBlock): string {
  return typeof block.content === "string"
    ? block.content
    : block.content.map((b) => b.text).join("");
}

/** The result that answered a tool call, found by the call's id. */
export function resultOf(events: readonly Event[], toolUseId: string): ToolResultBlock {
  const found = toolResults(events).filter((r) => r.tool_use_id === toolUseId);
  expect(found, `results of ${toolUseId}`).toHaveLength(1);
  return found[0]!;
}

/**
 * The log's invariants after any scenario: ids unique and increasing, each tool call answered
 * at most once, and every result answers a call made earlier.
 */
export function expectWellFormedLog(events: readonly Event[]): void {
  const ids = events.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const e of events) {
    for (const call of toolCalls([e])) {
      expect(called.has(call.id), `tool_use ${call.id} appears twice`).toBe(false);
      called.add(call.id);
    }
    for (const r of toolResults([e])) {
      expect(called.has(r.tool_use_id), `result for unknown call ${r.tool_use_id}`).toBe(true);
      expect(answered.has(r.tool_use_id), `call ${r.tool_use_id} answered twice`).toBe(false);
      answered.add(r.tool_use_id);
    }
  }
}

/** A scripted tool call; `$PLAN_PATH` in its input becomes the session's plan file. */
export const use = (name: string, input: Record<string, unknown>, id?: string) => ({
  type: "tool_use" as const,
  name,
  input,
  ...(id !== undefined && { id }),
});
export const say = (text: string) => ({ type: "text" as const, text });
export const turn = (...content: ScriptedTurn["content"]): ScriptedTurn => ({
  content,
  usage: { input_tokens: 100, output_tokens: 20 },
});
