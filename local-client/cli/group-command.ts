import type { CreateSession, PlannerName, Session } from "../../src/protocol/index.ts";
import { PollError } from "../poll/error.ts";
import { pollGroupForChosenPlan } from "../poll/group-poller.ts";
import type { PollPhase } from "../poll/poller.ts";
import { acquirePollLock, RESUMABLE, removeSidecar, saveSidecar } from "../poll/sidecar.ts";
import { pollErrorText } from "./advice.ts";
import type { Connection } from "./connection.ts";
import { exitCodeForReason } from "./exit-codes.ts";
import type { Settings } from "./flags.ts";
import { handOff } from "./handoff.ts";
import type { Reporter } from "./reporter.ts";

/**
 * `planport plan … --attempts N` / `--planners a,b`: a best-of-N group. The sessions are started
 * on the one snapshot already uploaded, all are polled (group-poller.ts), the user sees "2 of 3
 * plans ready", and the first plan approved or teleported is handed off exactly as a single
 * session's is; the server archives the others (superseded).
 */

export interface GroupPlan {
  /** What every session of the group is created with (prompt, snapshot, variant). */
  request: Omit<CreateSession, "planner" | "group">;
  /** One entry per session: its planner (undefined: the server's choice). */
  planners: readonly (PlannerName | undefined)[];
}

/**
 * A fresh group name (CONTRACT: 1–64 of `[a-z0-9_-]`): the size, the time, and randomness.
 *
 * @example
 * newGroupName(3) // "bo3-m8rrnz41-k2x9q0"
 */
export function newGroupName(size: number, nowMs = Date.now()): string {
  const random = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) =>
    (b % 36).toString(36),
  ).join("");
  return `bo${size}-${nowMs.toString(36)}-${random}`;
}

/**
 * Creates the group's sessions, waits for the first decided plan, hands it off; resolves with
 * the exit code (as `plan` does for one session).
 */
export async function runGroup(
  conn: Connection,
  plan: GroupPlan,
  settings: Settings,
  reporter: Reporter,
  signal: AbortSignal,
): Promise<number> {
  const group = newGroupName(plan.planners.length);
  const sessions: Session[] = [];
  try {
    // One by one and never retried: a retried create could start a session twice.
    for (const planner of plan.planners) {
      sessions.push(await conn.api.createSession({ ...plan.request, planner, group }));
    }
  } catch (err) {
    // Half a group is no comparison: stop what was started, then report the failure.
    await Promise.allSettled(sessions.map((s) => conn.api.archive(s.id)));
    throw err;
  }
  reporter.group(group, sessions);
  const releases = sessions.map((s) => acquirePollLock(s.id));
  try {
    return await waitForGroup(conn, group, sessions, settings, reporter, signal);
  } finally {
    for (const release of releases) release();
  }
}

async function waitForGroup(
  conn: Connection,
  group: string,
  sessions: readonly Session[],
  settings: Settings,
  reporter: Reporter,
  signal: AbortSignal,
): Promise<number> {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const phases = new Map<string, PollPhase | "ended">();
  let shownPhase: PollPhase | null = null;
  let shownReady = -1;
  const showProgress = () => {
    const states = [...phases.values()];
    const ready = states.filter((p) => p === "plan_ready").length;
    // The group's phase: a plan to review beats a question, which beats research.
    const phase: PollPhase = states.includes("plan_ready")
      ? "plan_ready"
      : states.includes("needs_input")
        ? "needs_input"
        : "running";
    if (phase !== shownPhase) {
      shownPhase = phase;
      const first = sessions.find((s) => phases.get(s.id) === phase) ?? sessions[0]!;
      reporter.phase(phase, first.review_url);
    }
    if (ready !== shownReady) {
      shownReady = ready;
      reporter.progress(ready, sessions.length);
    }
  };
  try {
    const chosen = await pollGroupForChosenPlan({
      server: conn.server,
      token: conn.token,
      sessionIds: sessions.map((s) => s.id),
      timeoutMs: settings.timeoutMs,
      intervalMs: settings.intervalMs,
      signal,
      onPhaseChange: (id, phase) => {
        phases.set(id, phase);
        showProgress();
      },
      onRejected: (id, n) => reporter.rejected(n, id),
      onRecovered: () => reporter.recovered(),
      onTransientFailure: (n, err) =>
        reporter.status(`cannot reach the server (${n} in a row): ${err.message}`),
      onSessionEnded: (err) => {
        phases.set(err.sessionId, "ended");
        if (RESUMABLE.has(err.reason)) save(conn, byId.get(err.sessionId), settings, err);
        else removeSidecar(err.sessionId);
        if (err.reason === "terminated") reporter.note(`${err.sessionId}: ${err.message}`);
      },
    });
    for (const s of sessions) removeSidecar(s.id);
    const session = byId.get(chosen.sessionId)!;
    if (sessions.length > 1) reporter.note(`chosen: ${session.id} (${session.planner} planner)`);
    return await handOff(session, { ...chosen, group }, settings, reporter);
  } catch (err) {
    if (!(err instanceof PollError)) throw err;
    reporter.error({
      reason: err.reason,
      message: groupErrorText(group, sessions, err),
      sessionId: err.sessionId,
      rejectCount: err.rejectCount,
    });
    return exitCodeForReason(err.reason);
  }
}

function save(conn: Connection, session: Session | undefined, settings: Settings, err: PollError) {
  saveSidecar({
    sessionId: err.sessionId,
    server: conn.server,
    reviewUrl: session?.review_url,
    repo: settings.repoRoot,
    progress: err.progress,
  });
}

/** The group's failure for the terminal: what happened to the group, then what to do. */
function groupErrorText(group: string, sessions: readonly Session[], err: PollError): string {
  const ids = sessions.map((s) => s.id).join(", ");
  switch (err.reason) {
    case "terminated":
      return `Every session of group ${group} ended without a plan being chosen (${ids}). The last: ${err.message}`;
    case "stopped":
      return `Stopped waiting; the ${sessions.length} sessions of group ${group} keep running. Re-attach to one with \`planport attach <id>\` (${ids}).`;
    default:
      return `Group ${group} (${ids}): ${pollErrorText(err)}`;
  }
}
