import { PollLockedError, UsageError } from "../errors.ts";
import { ApiError } from "../http/error.ts";
import type { PollErrorReason } from "../poll/error.ts";
import { SessionEndedError } from "./sentences.ts";

/**
 * Exit codes, the same for every command in the same situation (docs/PROTOCOL.md "CLI"; those
 * of `plan` and `attach` are CONTRACT's). A status or a list is a read-only report: it exits 0
 * whatever state the session is in.
 */
export const EXIT = {
  /** Done: the plan arrived (approved or sent here), or the command did what it was asked. */
  ok: 0,
  /** The plan arrived, but a local step failed (the --on-teleport command, git apply), or `pull --check` found the changes would not apply cleanly. */
  localFailure: 1,
  /** Usage or bad input, refused before any work: a malformed id, bad flags, a preset whose program is missing, an unwritable --plans-dir, a pull from a planner that cannot execute. */
  usage: 2,
  /** The session ended without a plan for you (stopped, failed, superseded), or had already ended when attach, review, stop or pull was run on it. */
  terminated: 3,
  /** The time ran out while a plan waited for review. */
  timeoutPending: 4,
  /** The time ran out and no plan was ever submitted. */
  timeoutNoPlan: 5,
  /** The server could not be reached or answered unexpectedly, or no session with this id is visible to this token. */
  networkOrUnknown: 6,
  /** The plan was decided, but its tool result carries no marker to read it from. */
  extractMarkerMissing: 7,
  /** Another planport on this machine is already waiting for this session (its poll lock). */
  alreadyWaiting: 8,
  /** Ctrl-C: the session was left running. */
  interrupted: 130,
} as const;

/**
 * The `reason` of a `{"event":"error"}` line: the poll's reasons (CONTRACT), and the CLI's own
 * for the codes no poll produces.
 */
export type ErrorReason = PollErrorReason | "usage" | "local_failure" | "already_waiting";

const BY_REASON: Record<ErrorReason, number> = {
  terminated: EXIT.terminated,
  timeout_pending: EXIT.timeoutPending,
  timeout_no_plan: EXIT.timeoutNoPlan,
  network_or_unknown: EXIT.networkOrUnknown,
  extract_marker_missing: EXIT.extractMarkerMissing,
  stopped: EXIT.interrupted,
  usage: EXIT.usage,
  local_failure: EXIT.localFailure,
  already_waiting: EXIT.alreadyWaiting,
};

/**
 * @example
 * exitCodeForReason("timeout_pending") // → 4
 */
export function exitCodeForReason(reason: ErrorReason): number {
  return BY_REASON[reason];
}

/**
 * The error line's reason for an exit code (the first reason that exits with it).
 *
 * @example
 * reasonForExitCode(8) // → "already_waiting"
 */
export function reasonForExitCode(code: number): ErrorReason {
  const found = (Object.keys(BY_REASON) as ErrorReason[]).find((r) => BY_REASON[r] === code);
  return found ?? "network_or_unknown";
}

/**
 * The exit code for an error outside the poll: a refused second wait is 8, an ended session 3,
 * bad input 2 (including the server's 400 and 413 answers about what we sent, and a plan
 * revision that was never written), everything else
 * the server or network did — an unknown session id too — is 6.
 *
 * @example
 * exitCodeForError(new ApiError(413, "snapshot_too_large", "…")) // → 2
 */
export function exitCodeForError(err: unknown): number {
  if (err instanceof PollLockedError) return EXIT.alreadyWaiting;
  if (err instanceof SessionEndedError) return EXIT.terminated;
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof ApiError) {
    return err.status === 400 ||
      err.status === 413 ||
      err.code === "invalid_server" ||
      err.code === "revision_not_found"
      ? EXIT.usage
      : EXIT.networkOrUnknown;
  }
  return EXIT.networkOrUnknown;
}
