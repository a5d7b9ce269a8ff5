import type { Failure, Result } from "../protocol/index.ts";
import { fail } from "../protocol/index.ts";

/**
 * What a session operation answers: a {@link Result} whose error is a wire {@link Failure}.
 * Durable Object RPC methods return these; routes map them to HTTP without deciding anything.
 */
export type SessionResult<T> = Result<T, Failure>;

/**
 * Who is asking: an owner (a bearer token, hashed, with its label when the route knows it) or
 * a holder of one of the session's links (the decision key or the view key). The session
 * object checks it itself, so no route can forget to.
 */
export type Access =
  | { kind: "owner"; owner: string; label?: string }
  | { kind: "review"; key: string };

/**
 * The one answer for an unknown session, another owner's session and a wrong review key, so a
 * caller can never tell which of the three it was.
 */
export const NOT_FOUND = fail(404, "not_found", "No session with this id is visible to you.");
