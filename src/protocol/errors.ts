import { err } from "./result.ts";

/**
 * Errors on the wire (docs/PROTOCOL.md "HTTP API"): every refusal is
 * `{"error": {"code", "message"}}` with one of these codes and a fitting status.
 */

export type ErrorCode =
  | "unauthorized"
  | "not_found"
  | "revision_not_found"
  | "invalid_json"
  | "invalid_body"
  | "invalid_query"
  | "invalid_cursor"
  | "feedback_required"
  | "unknown_question"
  | "unknown_snapshot"
  | "invalid_manifest"
  | "blobs_missing"
  | "planner_unavailable"
  | "variant_unavailable"
  | "not_pending"
  | "already_decided"
  | "no_terminal"
  | "cannot_execute_remotely"
  | "executor_unavailable"
  | "plan_too_large"
  | "session_ended"
  | "view_only"
  | "approval_required"
  | "unknown_approver"
  | "payload_too_large"
  | "snapshot_too_large"
  | "snapshot_too_many_files"
  | "rate_limited"
  | "server_misconfigured"
  | "internal_error";

export type FailureStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500;

/** A refusal: the HTTP status, the error code and a sentence the user can act on. */
export interface Failure {
  status: FailureStatus;
  code: ErrorCode;
  message: string;
}

/** A refusal on its own (assignable to any Result whose error is a {@link Failure}). */
export type Refusal = { ok: false; error: Failure };

/**
 * @example
 * return fail(409, "already_decided", "This plan was already decided.");
 */
export function fail(status: FailureStatus, code: ErrorCode, message: string): Refusal {
  return err({ status, code, message });
}
