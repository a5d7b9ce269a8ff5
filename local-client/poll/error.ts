import { formatDuration } from "../duration.ts";
import { markerMissingText, type ScannerState } from "./scanner.ts";

/**
 * Why a poll ended without a plan, as data: the reason (docs/PROTOCOL.md "Local client
 * library"), where the poll got to, and what each reason knows (the session's own last word,
 * how long it waited, what the last request said). `message` says what happened, in words any
 * embedder can show; what to do next is the caller's to say (the CLI: cli/advice.ts).
 */

/** Where a poll got to: enough for `attach` to carry on without re-counting rejections. */
export interface PollProgress {
  cursor: string | null;
  scanner: ScannerState;
}

export type PollErrorDetail =
  /** The session ended before a plan was approved; `sessionMessage` is its own sentence, if any. */
  | { reason: "terminated"; subtype: string; sessionMessage?: string }
  /** The time ran out while a plan had been submitted for review (at some point). */
  | { reason: "timeout_pending"; waitedMs: number }
  /** The time ran out and no plan was ever submitted. */
  | { reason: "timeout_no_plan"; waitedMs: number }
  /** The ExitPlanMode call was answered, but its tool result has none of `markers`. */
  | { reason: "extract_marker_missing"; toolUseId: string; markers: readonly string[] }
  | {
      reason: "network_or_unknown";
      /** The server polled. */
      server: string;
      /** Failed polls in a row, the last one included. */
      attempts: number;
      /**
       * The last failure may go away on its own (no answer, 5xx, 429): the poll gave up after
       * `attempts` of them. False: it will answer the same next time (401, 404, a bad body).
       */
      transient: boolean;
      /** The last failure's HTTP status (0: no answer); null when no request failed (`cause`). */
      status: number | null;
      /** The last failure's error code (the server's, or planport's own: `network_error`…). */
      code: string | null;
      /** What the last failure said. */
      lastError: string;
    }
  /** The caller's signal aborted the poll; the remote session was left running. */
  | { reason: "stopped" };

export type PollErrorReason = PollErrorDetail["reason"];

/** A poll that ended without a plan. `reason` and `rejectCount` are read off the data. */
export class PollError extends Error {
  readonly reason: PollErrorReason;
  readonly rejectCount: number;
  constructor(
    readonly detail: PollErrorDetail,
    readonly sessionId: string,
    /** Where the poll got to, so it can be resumed. */
    readonly progress: PollProgress,
    options?: { cause?: unknown },
  ) {
    super(describe(detail, sessionId), options);
    this.name = "PollError";
    this.reason = detail.reason;
    this.rejectCount = progress.scanner.rejectCount;
  }
}

/**
 * The error for a poll whose time ran out: `timeout_pending` when a plan was ever seen waiting
 * for review, else `timeout_no_plan`.
 *
 * @example
 * throw pollTimeoutError("ses_…", 600_000, { cursor: sidecar.cursor, scanner: sidecar.scanner });
 */
export function pollTimeoutError(
  sessionId: string,
  waitedMs: number,
  progress: PollProgress,
): PollError {
  const reason = progress.scanner.everSeenPending ? "timeout_pending" : "timeout_no_plan";
  return new PollError({ reason, waitedMs }, sessionId, progress);
}

/** What happened, in a sentence; no advice (that depends on who is asking). */
function describe(d: PollErrorDetail, sessionId: string): string {
  switch (d.reason) {
    case "terminated":
      if (d.subtype === "archived") {
        return "The session was stopped (archived) before a plan was approved.";
      }
      return `The remote session ended (${d.subtype}) before a plan was approved${d.sessionMessage ? `: ${d.sessionMessage}` : "."}`;
    case "timeout_pending":
      return `A plan was submitted for review, but no decision arrived within ${formatDuration(d.waitedMs)}.`;
    case "timeout_no_plan":
      return (
        `No plan was submitted within ${formatDuration(d.waitedMs)}. The remote session may have ` +
        `failed to start, or the session id ${sessionId} is wrong.`
      );
    case "extract_marker_missing":
      return `${markerMissingText(d.toolUseId, d.markers)}.`;
    case "network_or_unknown":
      return networkSentence(d, sessionId);
    case "stopped":
      return "Stopped polling; the remote session keeps running.";
  }
}

function networkSentence(
  d: Extract<PollErrorDetail, { reason: "network_or_unknown" }>,
  sessionId: string,
): string {
  if (d.status === null) return `Polling failed: ${d.lastError}`;
  if (d.transient) {
    return `Lost contact with ${d.server} after ${d.attempts} failed polls in a row (last: ${d.lastError}).`;
  }
  if (d.status === 401 || d.status === 403) {
    return `The server refused the token (${d.status} ${d.code}: ${d.lastError}).`;
  }
  if (d.status === 404) return `Session ${sessionId} was not found (404 ${d.code}).`;
  return `Polling failed (${d.status} ${d.code}: ${d.lastError}).`;
}
