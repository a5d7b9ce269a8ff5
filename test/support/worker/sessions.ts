import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { ownerIdOf } from "../../../src/api/auth.ts";
import type { OwnerIndex } from "../../../src/owner/owner-index.ts";
import { createSession } from "../../../src/owner/sessions.ts";
import type { SessionPort, StepResult } from "../../../src/planner/port.ts";
import type { CreateSession, NewEvent, Session } from "../../../src/protocol/index.ts";
import type { SessionObject } from "../../../src/session/session-object.ts";
import { ApiClient } from "../api-client.ts";

/**
 * Helpers for worker tests (inside workerd): the API over the worker's own fetch handler, and
 * sessions created without the planning engine so a test drives them through their port, the
 * way the engine would.
 *
 * @example
 * const session = await createDrivenSession();
 * await openPlan(session.id, "# Plan\n");
 * await api.decide(ALICE, session.id, { tool_use_id: PLAN_CALL, decision: "approve" });
 */

/** Tokens configured for the worker project in vitest.config.ts. */
export const ALICE = { token: "token-alice" } as const;
export const BOB = { token: "token-bob" } as const;

/** The worker's HTTP API, called in-process. */
export const api = new ApiClient((request) => exports.default.fetch(request));

export const ORIGIN = "http://planport.test";

/** The id of the ExitPlanMode call {@link openPlan} opens unless told otherwise. */
export const PLAN_CALL = "toolu_plan_1";
/** The id of the AskUserQuestion call {@link openQuestion} opens unless told otherwise. */
export const QUESTION_CALL = "toolu_question_1";

/**
 * The session's Durable Object stub (for `runInDurableObject` and `runDurableObjectAlarm`),
 * typed by the class: the worker's `Env` types it by its RPC surface (src/session/rpc.ts), which
 * has none of the seams tests reach into.
 */
export function sessionObject(id: string): DurableObjectStub<SessionObject> {
  return env.SESSIONS.get(
    env.SESSIONS.idFromName(id),
  ) as unknown as DurableObjectStub<SessionObject>;
}

/** An owner's index stub, typed by the class (see {@link sessionObject}). */
export function ownerObject(owner: string): DurableObjectStub<OwnerIndex> {
  return env.OWNERS.get(env.OWNERS.idFromName(owner)) as unknown as DurableObjectStub<OwnerIndex>;
}

/** Loop steps the {@link parkedStep} double has taken, per session id. */
const parkedSteps = new Map<string, number>();

/**
 * A test double of the planning engine's step: counts the call and goes idle, changing nothing.
 * Driven sessions use it, so a decision or message that wakes the loop does not run the real
 * engine under the test's feet.
 */
function parkedStep(sessionId: string): () => Promise<StepResult> {
  return async () => {
    parkedSteps.set(sessionId, (parkedSteps.get(sessionId) ?? 0) + 1);
    return { next: "idle" };
  };
}

/** How many loop steps a driven session has run (in this Durable Object instance). */
export function stepsRun(sessionId: string): number {
  return parkedSteps.get(sessionId) ?? 0;
}

/**
 * Creates a session whose loop is not started (the internal `autostart: false`) and whose engine
 * is the {@link parkedStep} double: nothing happens until the test acts through the port, as the
 * engine would. Uses the offline planner unless `body` says otherwise.
 */
export async function createDrivenSession(
  token: string = ALICE.token,
  body: Partial<CreateSession> = {},
): Promise<Session> {
  const created = await createSession(
    env,
    await ownerIdOf(token),
    { prompt: "Add OAuth login and reuse the session", ...body },
    ORIGIN,
    { autostart: false },
  );
  if (!created.ok)
    throw new Error(`createSession failed: ${created.error.code}: ${created.error.message}`);
  const id = created.value.id;
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.planningStep = parkedStep(id);
  });
  return created.value;
}

/** Runs `fn` inside the session's object with its port, as the engine would. */
export function withPort<T>(
  id: string,
  fn: (port: SessionPort, object: SessionObject) => T,
): Promise<T> {
  return runInDurableObject(sessionObject(id), (object: SessionObject) =>
    fn(object.port(), object),
  );
}

/**
 * What the engine does when the model calls ExitPlanMode: the plan file holds the plan, the
 * assistant event carries the call, the wait opens (phase plan_ready).
 */
export async function openPlan(id: string, plan: string, toolUseId = PLAN_CALL): Promise<void> {
  await withPort(id, (port) =>
    port.transaction(() => {
      port.writePlan(plan);
      port.appendEvents([assistantToolUse(toolUseId, "ExitPlanMode", {})]);
      port.openWait({ kind: "plan", tool_use_id: toolUseId, input: {} });
    }),
  );
}

/** A clarifying question as the engine opens it (phase needs_input). */
export async function openQuestion(
  id: string,
  questions: readonly string[],
  toolUseId = QUESTION_CALL,
): Promise<void> {
  const input = {
    questions: questions.map((question, i) => ({
      question,
      header: `Q${i + 1}`,
      multiSelect: false,
      options: [
        { label: "Yes", description: "Do it" },
        { label: "No", description: "Leave it" },
      ],
    })),
  };
  await withPort(id, (port) =>
    port.transaction(() => {
      port.appendEvents([assistantToolUse(toolUseId, "AskUserQuestion", input)]);
      port.openWait({ kind: "question", tool_use_id: toolUseId, input });
    }),
  );
}

/** Appends `count` assistant text events (in batches, as a long session would have them). */
export async function seedEvents(id: string, count: number): Promise<void> {
  const BATCH = 500;
  for (let done = 0; done < count; done += BATCH) {
    const n = Math.min(BATCH, count - done);
    await withPort(id, (port) =>
      port.transaction(() =>
        port.appendEvents(
          Array.from({ length: n }, (_, i) => ({
            type: "assistant" as const,
            message: {
              role: "assistant" as const,
              content: [{ type: "text" as const, text: `note ${done + i + 1}` }],
            },
          })),
        ),
      ),
    );
  }
}

function assistantToolUse(id: string, name: string, input: Record<string, unknown>): NewEvent {
  return {
    type: "assistant",
    message: { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
  };
}

/** Reads a JSON error body's code (and checks the CONTRACT shape on the way). */
export async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { error?: { code?: unknown; message?: unknown } };
  if (
    typeof body.error?.code !== "string" ||
    typeof body.error.message !== "string" ||
    body.error.message === ""
  ) {
    throw new Error(`not a CONTRACT error body: ${JSON.stringify(body)}`);
  }
  return body.error.code;
}
