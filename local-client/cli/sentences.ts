import type { Session } from "../../src/protocol/index.ts";
import { UsageError } from "../errors.ts";
import { terminalLine } from "../terminal/text.ts";

/**
 * One sentence per situation (issue 26, "the CLI speaks one language"): every command and the
 * MCP tools say an unknown id, an ended session, a planner that cannot execute and a refused
 * second wait in these words, so a user meets each situation once. The exit code that goes with
 * each is in exit-codes.ts.
 */

/** How a session ended, in the words the CLI uses; null while it lives on. */
export type SessionEnding = "approved" | "teleport" | "stopped" | "superseded" | "failed";

const ENDING_WORDS: Record<SessionEnding, string> = {
  approved: "approved and run in the cloud",
  teleport: "sent to a terminal",
  stopped: "stopped",
  superseded: "superseded",
  failed: "failed",
};

/** The short label of the list's and watch's OUTCOME column. */
const OUTCOME_LABELS: Record<SessionEnding, string> = {
  approved: "approved",
  teleport: "sent to terminal",
  stopped: "stopped",
  superseded: "superseded",
  failed: "failed",
};

/**
 * The outcome a session records, in the CLI's words, whether or not the session has ended yet
 * (an approved plan may still be executing); null when there is none. An older server that
 * archives without an outcome reads as stopped.
 *
 * @example
 * outcomeOf({ status: "archived", phase: "done", outcome: { kind: "terminated", subtype: "superseded" } })
 * // → "superseded"
 */
export function outcomeOf(s: Pick<Session, "status" | "phase" | "outcome">): SessionEnding | null {
  switch (s.outcome?.kind) {
    case "approved":
      return "approved";
    case "teleport":
      return "teleport";
    case "terminated":
      if (s.outcome.subtype === "superseded") return "superseded";
      return s.outcome.subtype === "archived" ? "stopped" : "failed";
    default:
      if (s.status === "archived") return "stopped";
      return s.phase === "done" ? "failed" : null;
  }
}

/**
 * How the session ended, or null while it lives on. An approved session lives on while the
 * cloud executes its plan (stopping it then stops the execution); it has ended once that is
 * done or it was archived.
 *
 * @example
 * sessionEnding({ status: "running", phase: "executing", outcome: { kind: "approved" } }) // → null
 * sessionEnding({ status: "archived", phase: "done", outcome: { kind: "teleport" } }) // → "teleport"
 */
export function sessionEnding(
  s: Pick<Session, "status" | "phase" | "outcome">,
): SessionEnding | null {
  const outcome = outcomeOf(s);
  if (outcome === "approved") return s.status === "archived" || s.phase === "done" ? outcome : null;
  return outcome;
}

/** The OUTCOME cell of `list` and `watch`: "—" when there is none yet. */
export function outcomeLabel(s: Pick<Session, "status" | "phase" | "outcome">): string {
  const outcome = outcomeOf(s);
  return outcome === null ? "—" : OUTCOME_LABELS[outcome];
}

/**
 * An id no session answers to for this token (the server's 404: unknown, or another owner's).
 *
 * @example
 * unknownSessionSentence("ses_…")
 * // → "No session ses_… is visible to this token: check the id, and that the token is the requester's or an approver's."
 */
export function unknownSessionSentence(id: string): string {
  return `No session ${terminalLine(id)} is visible to this token: check the id, and that the token is the requester's or an approver's.`;
}

/**
 * @example
 * endedSentence("ses_…", "stopped") // → "Session ses_… has already ended (stopped)."
 */
export function endedSentence(id: string, ending: SessionEnding): string {
  return `Session ${terminalLine(id)} has already ended (${ENDING_WORDS[ending]}).`;
}

/** A pull from a session whose planner cannot execute plans (`can_execute_remotely: false`). */
export function notExecutableSentence(id: string): string {
  return `Session ${terminalLine(id)} was planned by the offline planner, which cannot run plans in the cloud: there are no changes to pull. Send the plan to your terminal instead.`;
}

/** A second wait for the same session on this machine, refused (the poll lock, pid-lock.ts). */
export function alreadyWaitingSentence(id: string, pid: number): string {
  return `Another planport on this machine (pid ${pid}) is already waiting for session ${terminalLine(id)}; it will receive the plan.`;
}

/** The session had already ended when the command was run on it (exit 3). */
export class SessionEndedError extends Error {
  constructor(
    readonly sessionId: string,
    readonly ending: SessionEnding,
  ) {
    super(endedSentence(sessionId, ending));
    this.name = "SessionEndedError";
  }
}

/**
 * `stop` changes nothing on a session that has ended: it says so instead.
 *
 * @example
 * refuseStop(approvedAndDone) // throws SessionEndedError "Session … has already ended (approved and run in the cloud)."
 */
export function refuseStop(s: Session): void {
  const ending = sessionEnding(s);
  if (ending !== null) throw new SessionEndedError(s.id, ending);
}

/**
 * `pull` has changes to fetch only from a session approved for the cloud: one that ended any
 * other way has none (exit 3), and one whose planner cannot execute will never have any (a
 * request this session cannot serve: a {@link UsageError}, exit 2).
 */
export function refusePull(s: Session): void {
  const ending = sessionEnding(s);
  if (ending !== null && ending !== "approved") throw new SessionEndedError(s.id, ending);
  if (!s.can_execute_remotely && s.outcome?.kind !== "approved") {
    throw new UsageError(notExecutableSentence(s.id));
  }
}

/**
 * `attach` and `review` deliver a plan the feed holds (approved or sent to a terminal); a
 * session that ended without one (stopped, superseded, failed) has nothing to wait for.
 */
export function refuseWait(s: Session): void {
  const ending = sessionEnding(s);
  if (ending !== null && ending !== "approved" && ending !== "teleport") {
    throw new SessionEndedError(s.id, ending);
  }
}
