import { PollError, type PollErrorReason } from "./error.ts";
import {
  type PollOptions,
  type PollOutcome,
  type PollPhase,
  pollForApprovedExitPlanMode,
} from "./poller.ts";

/**
 * Waiting for a best-of-N group (CONTRACT "Extensions: Sessions"): every session of the group is
 * polled exactly as one session is (`pollForApprovedExitPlanMode`: every 3 s, its own cursor,
 * scanner and failure count), and the first one approved or teleported is the group's answer.
 * The server lets only one session of a group be chosen; the others end (superseded) and their
 * polls with them. When none is chosen, the most telling failure is the answer.
 */

export interface GroupPollOptions
  extends Omit<PollOptions, "sessionId" | "onPhaseChange" | "onRejected" | "resume"> {
  sessionIds: readonly string[];
  /** A session's own phase changed. */
  onPhaseChange?: (sessionId: string, phase: PollPhase) => void;
  /** A session's plan was rejected (its own count). */
  onRejected?: (sessionId: string, rejectCount: number) => void;
  /** A session's poll ended without a plan (superseded, stopped, failed…). */
  onSessionEnded?: (error: PollError) => void;
}

/** The chosen plan, and which session of the group it came from. */
export interface GroupPollOutcome extends PollOutcome {
  sessionId: string;
}

/**
 * When no session is chosen, which failure speaks for the group: one that leaves a session
 * waiting or unreadable outranks a plain end, since the user can still act on it.
 */
const FAILURE_RANK: Record<PollErrorReason, number> = {
  extract_marker_missing: 6,
  network_or_unknown: 5,
  timeout_pending: 4,
  timeout_no_plan: 3,
  terminated: 2,
  stopped: 1,
};

/**
 * Polls every session of a group until one plan is approved or teleported; the other polls are
 * then stopped. Rejects with the most telling {@link PollError} when none is (every session
 * ended, the timeout passed, the network failed, or `signal` aborted: reason `stopped`).
 *
 * @example
 * const chosen = await pollGroupForChosenPlan({ server, token, sessionIds: ["ses_a", "ses_b"] });
 * console.log(chosen.sessionId, chosen.kind, chosen.plan);
 */
export async function pollGroupForChosenPlan(opts: GroupPollOptions): Promise<GroupPollOutcome> {
  const { sessionIds, onPhaseChange, onRejected, onSessionEnded, signal, ...poll } = opts;
  if (sessionIds.length === 0) throw new RangeError("sessionIds must name at least one session");
  const others = new AbortController();
  const stopAll = () => others.abort();
  signal?.addEventListener("abort", stopAll, { once: true });
  let chosen: GroupPollOutcome | null = null;
  const failures: PollError[] = [];
  try {
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        try {
          const outcome = await pollForApprovedExitPlanMode({
            ...poll,
            sessionId,
            signal: others.signal,
            onPhaseChange: (phase) => onPhaseChange?.(sessionId, phase),
            onRejected: (n) => onRejected?.(sessionId, n),
          });
          if (chosen === null) chosen = { ...outcome, sessionId };
          stopAll();
        } catch (err) {
          if (!(err instanceof PollError)) throw err;
          // Stopped because another session's plan was chosen: not a failure of the group.
          if (err.reason === "stopped" && chosen !== null) return;
          failures.push(err);
          onSessionEnded?.(err);
        }
      }),
    );
  } finally {
    signal?.removeEventListener("abort", stopAll);
    stopAll();
  }
  if (chosen !== null) return chosen;
  if (signal?.aborted) {
    const stopped = failures.find((f) => f.reason === "stopped");
    if (stopped) throw stopped;
  }
  throw mostTelling(failures);
}

function mostTelling(failures: readonly PollError[]): PollError {
  let best = failures[0];
  for (const f of failures)
    if (best === undefined || FAILURE_RANK[f.reason] > FAILURE_RANK[best.reason]) best = f;
  if (best === undefined) throw new Error("every poll of the group ended without an answer");
  return best;
}
