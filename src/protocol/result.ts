/**
 * The one result shape: a value, or an error that says what went wrong. Every fallible step
 * that is not exceptional — parsing model input, a refused request, a denied path — answers
 * one of these rather than a union of its own. Plain data, so it crosses the Durable Object RPC
 * boundary as it is.
 */

export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

/**
 * @example
 * return ok(session);
 */
export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/**
 * @example
 * return err("The path is empty.");
 */
export function err<E>(error: E): { ok: false; error: E } {
  return { ok: false, error };
}
