import { UsageError } from "../errors.ts";
import { ApiError } from "../http/error.ts";
import type { PollErrorReason } from "../poll/error.ts";

/** Exit codes of `plan` and `attach` (docs/PROTOCOL.md "CLI"); the other commands reuse them. */
export const EXIT = {
  ok: 0,
  /** The plan arrived, but a local step failed (the --on-teleport command, git apply). */
  localFailure: 1,
  usage: 2,
  terminated: 3,
  timeoutPending: 4,
  timeoutNoPlan: 5,
  networkOrUnknown: 6,
  extractMarkerMissing: 7,
  interrupted: 130,
} as const;

const BY_REASON: Record<PollErrorReason, number> = {
  terminated: EXIT.terminated,
  timeout_pending: EXIT.timeoutPending,
  timeout_no_plan: EXIT.timeoutNoPlan,
  network_or_unknown: EXIT.networkOrUnknown,
  extract_marker_missing: EXIT.extractMarkerMissing,
  stopped: EXIT.interrupted,
};

/**
 * @example
 * exitCodeForReason("timeout_pending") // → 4
 */
export function exitCodeForReason(reason: PollErrorReason): number {
  return BY_REASON[reason];
}

/**
 * The exit code for an error outside the poll: bad input is 2 (including the server's 400 and
 * 413 answers about what we sent), everything else the server or network did is 6.
 *
 * @example
 * exitCodeForError(new ApiError(413, "snapshot_too_large", "…")) // → 2
 */
export function exitCodeForError(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof ApiError) {
    return err.status === 400 || err.status === 413 || err.code === "invalid_server"
      ? EXIT.usage
      : EXIT.networkOrUnknown;
  }
  return EXIT.networkOrUnknown;
}
