/**
 * The `Retry-After` header of a 429 or 503 (RFC 9110 §10.2.3): how long the server asked us to
 * wait. Pure: the current wall-clock time is passed in.
 */

/** The longest wait a Retry-After imposes on a poll or a retry (docs/PROTOCOL.md "Rate limits"). */
export const MAX_RETRY_AFTER_MS = 60_000;

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";
// The three HTTP-date forms, matched exactly: Date.parse alone reads "soon 5" as May 2001.
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * Milliseconds to wait, from delta-seconds (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00
 * GMT`; a date in the past means 0). Anything else (absent, negative, fractional, garbage) is
 * `undefined`: the caller then waits as it would have anyway.
 *
 * @example
 * parseRetryAfter("120", Date.now()) // → 120_000
 * parseRetryAfter("soon", Date.now()) // → undefined
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1_000;
    return Number.isFinite(ms) ? ms : undefined;
  }
  let at = Number.NaN;
  if (IMF_FIXDATE.test(text) || RFC_850.test(text)) at = Date.parse(text);
  // asctime carries no zone; HTTP dates are always GMT.
  else if (ASCTIME.test(text)) at = Date.parse(`${text} GMT`);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/**
 * How long to wait before retrying after `retryAfterMs` (capped at {@link MAX_RETRY_AFTER_MS}),
 * but never less than `atLeastMs`.
 *
 * @example
 * retryWait(99_999_000, 3_000) // → 60_000
 * retryWait(undefined, 3_000)  // → 3_000
 */
export function retryWait(retryAfterMs: number | undefined, atLeastMs: number): number {
  return Math.max(atLeastMs, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}
