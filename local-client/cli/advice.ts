import { ApplyRefusedError } from "../handoff/apply-changes.ts";
import { ApiError } from "../http/api.ts";
import type { PollError } from "../poll/error.ts";
import { PollLockedError } from "../poll/sidecar.ts";
import { SnapshotError } from "../snapshot/error.ts";
import { type ServerSource, sourceHint } from "./connection.ts";
import { alreadyWaitingSentence, unknownSessionSentence } from "./sentences.ts";

/**
 * What the user can do next, in planport's own commands and flags. The library's errors say
 * what happened and carry the data (reason, session id, HTTP status, pid…); here that becomes
 * advice, so an embedder of the library never hears of `planport attach` or `--token`.
 */

/**
 * A poll's failure for the terminal: what happened, then what to do.
 *
 * @example
 * pollErrorText(err) // → "Stopped polling; the remote session keeps running. Re-attach with `planport attach ses_…`."
 */
export function pollErrorText(err: PollError): string {
  const { detail } = err;
  if (detail.reason === "network_or_unknown" && detail.status === 404) {
    return unknownSessionSentence(err.sessionId);
  }
  const advice = pollAdvice(err);
  return advice === null ? err.message : `${err.message} ${advice}`;
}

function pollAdvice({ detail, sessionId }: PollError): string | null {
  const attach = `\`planport attach ${sessionId}\``;
  const status = `\`planport status ${sessionId}\``;
  switch (detail.reason) {
    case "stopped":
      return `Re-attach with ${attach}.`;
    case "terminated":
      return null;
    case "timeout_pending":
      return `The session keeps waiting: review it (${status} shows the link), then ${attach}.`;
    case "timeout_no_plan":
      return `Check with ${status}.`;
    case "extract_marker_missing":
      return `Open the session's review page to read the plan (${status} shows the link).`;
    case "network_or_unknown":
      if (detail.status === null) return null;
      if (detail.status === 401 || detail.status === 403) {
        return `Check --token or PLANPORT_TOKEN, then ${attach}.`;
      }
      return `The remote session may still be running: re-attach with ${attach}.`;
  }
}

/**
 * Any other failure of a command for the terminal: its sentence, with advice where planport
 * knows some. `source` is where the server came from, `sessionId` the session the command is
 * about (both when known).
 *
 * @example
 * errorText(new ApiError(401, "unauthorized", "unknown token"))
 * // → "unknown token; check --token or PLANPORT_TOKEN"
 */
export function errorText(
  err: unknown,
  context: { source?: ServerSource; sessionId?: string } = {},
): string {
  const message = err instanceof Error ? err.message : String(err);
  const id = context.sessionId ?? "<id>";
  if (err instanceof ApiError && err.status === 0 && context.source !== undefined) {
    return `${message} (${sourceHint(context.source)})`;
  }
  // The embedded worker's token is planport's own, not one the user passed.
  if (err instanceof ApiError && err.status === 401 && context.source !== "embedded") {
    return `${message}; check --token or PLANPORT_TOKEN`;
  }
  if (err instanceof PollLockedError) return alreadyWaitingSentence(err.sessionId, err.pid);
  // The server's 404 says the same for an unknown id and another owner's session; so do we.
  if (err instanceof ApiError && err.code === "revision_not_found") return message;
  if (err instanceof ApiError && err.status === 404 && context.sessionId !== undefined) {
    return unknownSessionSentence(context.sessionId);
  }
  if (err instanceof SnapshotError && err.code === "not_a_directory") {
    return `${message} Point --repo at the repository to plan.`;
  }
  if (err instanceof ApplyRefusedError) {
    switch (err.reason) {
      case "not_a_work_tree":
        return `${message}; --apply needs git (or save the diff: planport pull ${id} > changes.diff)`;
      case "unsafe_names":
        return `${message} Read it with \`planport pull ${id}\` before deciding what to keep.`;
      case "dirty_files":
        return `${message}\nCommit or stash them first, then run the command again.`;
      case "unreadable_diff":
        return message;
    }
  }
  return message;
}
