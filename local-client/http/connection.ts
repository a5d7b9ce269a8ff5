import { setImmediate as nextTurn } from "node:timers/promises";
import { unlessAborted } from "./abort-after.ts";

/**
 * Keeping requests off connections the server has already closed (issue 30).
 *
 * workerd — `wrangler dev`, `planport serve`, the embedded worker — closes a keep-alive
 * connection that carried no request for 5 s, without announcing it (no `Keep-Alive: timeout`
 * hint). Node's fetch (undici) drops its own idle connections after 4 s, but by a timer, and a
 * timer cannot fire while this process is busy. A request made right after a busy stretch
 * that ended more than 5 s after the last answer went out on a connection the server had
 * closed: the server never saw it (no line in its log), and the caller got `EPIPE` (a large
 * body, such as a snapshot upload) or "other side closed" (a small one) instead of the
 * answer. The server's close had already arrived; this process had not looked yet.
 *
 * Two remedies, both here: before each request the event loop goes round once, so undici sees
 * every close that arrived and every keep-alive timer that is due, and picks a live connection
 * or opens one; and a request whose connection still closed before any answer (the close
 * crossing the request on the wire, or a runtime so busy that its own idle timer fired before
 * it read a request that had arrived in time) is sent once more when repeating it is harmless.
 */

/**
 * One fetch, made after the event loop went round (so it never goes out on a connection whose
 * close already arrived), and made once more when its connection still closed before any
 * answer and sending it twice is harmless (the module's comment says why both are needed).
 * `fetchOnce` must send the same request each time (a string or byte body, never a stream).
 *
 * @example
 * const res = await fetchOnLiveConnection(() => fetch(url, { signal }), signal, method === "GET");
 */
export async function fetchOnLiveConnection(
  fetchOnce: () => Promise<Response>,
  signal: AbortSignal,
  mayRepeat: boolean,
): Promise<Response> {
  await settleConnections();
  try {
    return await unlessAborted(fetchOnce(), signal);
  } catch (err) {
    if (!mayRepeat || signal.aborted || !closedBeforeAnswer(err)) throw err;
  }
  await settleConnections();
  return unlessAborted(fetchOnce(), signal);
}

/**
 * Lets the event loop go round once, through its poll phase (the server's closes are read,
 * undici drops those connections) and its timers (undici's keep-alive timeouts fire). Two
 * hops: a callback run in the check phase would otherwise reach the next one without a poll
 * in between. Costs a few microseconds when nothing is pending.
 *
 * @example
 * await settleConnections();
 * const res = await fetch(url, init); // never on a connection whose close already arrived
 */
export async function settleConnections(): Promise<void> {
  await nextTurn();
  await nextTurn();
}

/**
 * True when a fetch failed because its connection closed or broke before any answer arrived:
 * undici's "other side closed", or `EPIPE` / `ECONNRESET` while the request was being written.
 * Not a refused connection (no server), a timeout or an abort: those say something else.
 *
 * @example
 * catch (err) { if (closedBeforeAnswer(err) && repeatable) return send(); throw err; }
 */
export function closedBeforeAnswer(err: unknown): boolean {
  const cause = err instanceof Error ? (err as Error & { cause?: unknown }).cause : undefined;
  if (typeof cause !== "object" || cause === null) return false;
  const code = (cause as { code?: unknown }).code;
  return typeof code === "string" && CLOSED_CODES.has(code);
}

const CLOSED_CODES = new Set(["UND_ERR_SOCKET", "EPIPE", "ECONNRESET"]);
