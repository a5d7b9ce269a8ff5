import { performance } from "node:perf_hooks";
import type { Api } from "../../../local-client/http/api.ts";
import type { Session } from "../../../src/protocol/index.ts";

/**
 * One planning session through the real worker, as the CLI would run it: create the session
 * on an uploaded snapshot, wait until it stops running, and read what it left waiting — a
 * plan (ExitPlanMode pending), a clarifying question, or a failure with its reason. The
 * session is archived afterwards so the worker holds no open work between tasks.
 */

/** How often the session is looked at while it plans (also the client-side timing's grain). */
export const STATUS_PROBE_MS = 100;

export type PlanOutcome =
  | { kind: "plan"; text: string; serverMs: number; clientMs: number; sessionId: string }
  | { kind: "question"; text: string; serverMs: number; clientMs: number; sessionId: string }
  | { kind: "failure"; reason: string; clientMs: number; sessionId: string | null };

/**
 * Plans `prompt` on `snapshotId` and returns the outcome; never throws for a failed session,
 * a timeout or an HTTP error (they are outcomes with a reason).
 *
 * @example
 * const outcome = await planOnce(api, snapshot.id, "Add retry jitter (area: source)", 120_000);
 * if (outcome.kind === "plan") console.log(outcome.text);
 */
export async function planOnce(
  api: Api,
  snapshotId: string,
  prompt: string,
  timeoutMs: number,
): Promise<PlanOutcome> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  let session: Session;
  try {
    session = await api.createSession({ prompt, snapshot_id: snapshotId, planner: "offline" });
  } catch (error) {
    return {
      kind: "failure",
      reason: `create: ${describe(error)}`,
      clientMs: elapsed(),
      sessionId: null,
    };
  }
  const sessionId = session.id;
  try {
    while (session.status === "running") {
      if (elapsed() > timeoutMs) {
        return {
          kind: "failure",
          reason: `timeout: still ${session.phase} after ${Math.round(timeoutMs / 1000)} s`,
          clientMs: elapsed(),
          sessionId,
        };
      }
      await sleep(STATUS_PROBE_MS);
      session = await api.getSession(sessionId);
    }
    const clientMs = elapsed();
    const pending = session.pending ?? null;
    const serverMs =
      pending === null
        ? Number.NaN
        : Date.parse(pending.opened_at) - Date.parse(session.created_at);
    if (pending?.kind === "plan") {
      const plan = await api.plan(sessionId);
      return { kind: "plan", text: plan.content, serverMs, clientMs, sessionId };
    }
    if (pending?.kind === "question") {
      return {
        kind: "question",
        text: JSON.stringify(pending.input),
        serverMs,
        clientMs,
        sessionId,
      };
    }
    return { kind: "failure", reason: await whyItStopped(api, session), clientMs, sessionId };
  } catch (error) {
    return { kind: "failure", reason: describe(error), clientMs: elapsed(), sessionId };
  } finally {
    await api.archive(sessionId).catch(() => undefined);
  }
}

/** The ending result's sentence, or the state the session was left in. */
async function whyItStopped(api: Api, session: Session): Promise<string> {
  try {
    const events = (await api.events(session.id, { limit: 1000 })).data;
    const result = [...events].reverse().find((event) => event.type === "result");
    if (result?.type === "result" && result.subtype !== "success") {
      return `${result.subtype}: ${result.message ?? "no message"}`;
    }
  } catch (error) {
    return `stopped (${session.status}/${session.phase}); events unreadable: ${describe(error)}`;
  }
  return `stopped without a plan or a question (${session.status}/${session.phase})`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
