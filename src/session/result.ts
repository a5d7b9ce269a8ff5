/**
 * What a session operation answers: a value, or a refusal with the HTTP status, the error code
 * and a sentence the user can act on. Durable Object RPC methods return these (plain data, so
 * they cross the RPC boundary as they are); routes map them to HTTP without deciding anything.
 */

export type ErrorCode =
  | "unauthorized"
  | "not_found"
  | "invalid_json"
  | "invalid_body"
  | "invalid_query"
  | "invalid_cursor"
  | "feedback_required"
  | "unknown_question"
  | "unknown_snapshot"
  | "planner_unavailable"
  | "not_pending"
  | "already_decided"
  | "no_terminal"
  | "cannot_execute_remotely"
  | "plan_too_large"
  | "session_ended"
  | "payload_too_large"
  | "snapshot_too_large"
  | "snapshot_too_many_files"
  | "rate_limited"
  | "server_misconfigured"
  | "internal_error";

export type FailureStatus = 400 | 401 | 404 | 409 | 413 | 429 | 500;

export interface Failure {
  status: FailureStatus;
  code: ErrorCode;
  message: string;
}

/** A refusal on its own (assignable to any {@link Result}). */
export type Refusal = { ok: false; error: Failure };

export type Result<T> = { ok: true; value: T } | Refusal;

/**
 * Who is asking: the owner (a bearer token, hashed) or a holder of the session's review link.
 * The session object checks it itself, so no route can forget to.
 */
export type Access = { kind: "owner"; owner: string } | { kind: "review"; key: string };

/** @example return ok(session); */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** @example return fail(409, "already_decided", "This plan was already decided."); */
export function fail(status: FailureStatus, code: ErrorCode, message: string): Refusal {
  return { ok: false, error: { status, code, message } };
}

/**
 * The one answer for an unknown session, another owner's session and a wrong review key, so a
 * caller can never tell which of the three it was.
 */
export const NOT_FOUND = fail(404, "not_found", "No session with this id is visible to you.");
