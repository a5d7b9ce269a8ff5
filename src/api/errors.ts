import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorBody, ErrorCode, Failure, Result } from "../protocol/index.ts";

/**
 * Errors on the wire (docs/PROTOCOL.md "HTTP API"): `{"error": {"code", "message"}}` with a fitting
 * status, and the one place a domain {@link Result} becomes an HTTP answer.
 */

/** @example return sendError(c, { status: 404, code: "not_found", message: "No such session." }); */
export function sendError(c: Context, failure: Failure): Response {
  const body: ErrorBody = { error: { code: failure.code, message: failure.message } };
  return c.json(body, failure.status as ContentfulStatusCode);
}

/** Shorthand for {@link sendError} with the three parts. */
export function sendFailure(
  c: Context,
  status: Failure["status"],
  code: ErrorCode,
  message: string,
): Response {
  return sendError(c, { status, code, message });
}

/**
 * Maps a Result to HTTP: the value as JSON with `status`, or the refusal.
 *
 * @example return sendResult(c, await stub.get(access, origin));
 */
export function sendResult<T>(
  c: Context,
  result: Result<T, Failure>,
  status: ContentfulStatusCode = 200,
): Response {
  return result.ok ? c.json(result.value as object, status) : sendError(c, result.error);
}
