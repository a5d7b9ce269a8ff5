/**
 * Identifiers (DESIGN.md "Identifiers"): session ids that sort by creation time, event ids that
 * sort in append order, review keys with 256 bits of randomness. Pure apart from the random
 * source and the clock handed in.
 */

const CROCKFORD_BASE32 = "0123456789abcdefghjkmnpqrstvwxyz";
const SESSION_TIME_CHARS = 10;
const SESSION_RANDOM_CHARS = 16;
const EVENT_ID_DIGITS = 16;
const REVIEW_KEY_BYTES = 32;

/** The last id made in this isolate, so ids made within one millisecond still sort in order. */
let last: { time: number; tail: number[] } | null = null;

/**
 * A new session id: `ses_` + 10 base32 characters of the creation time in ms + 16 random ones.
 * Within one isolate ids are strictly increasing: in the same millisecond the random part of
 * the previous id is incremented instead of drawn again (ULID's monotonic rule).
 *
 * @example newSessionId(Date.now()) // "ses_01jq3v8k2c7x4m9p0a5b6d7e8f"
 */
export function newSessionId(nowMs: number): string {
  let time = Math.floor(nowMs);
  let tail: number[];
  if (last !== null && time <= last.time) {
    time = last.time;
    tail = increment(last.tail);
  } else {
    tail = Array.from(crypto.getRandomValues(new Uint8Array(SESSION_RANDOM_CHARS)), (b) => b % 32);
  }
  last = { time, tail };
  let timeChars = "";
  for (let i = 0, t = time; i < SESSION_TIME_CHARS; i++, t = Math.floor(t / 32)) {
    timeChars = CROCKFORD_BASE32[t % 32] + timeChars;
  }
  return `ses_${timeChars}${tail.map((d) => CROCKFORD_BASE32[d]).join("")}`;
}

/** Base-32 digits plus one (a carry past the top wraps, which 80 random bits never reach). */
function increment(digits: readonly number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    next[i] = ((next[i] ?? 0) + 1) % 32;
    if (next[i] !== 0) break;
  }
  return next;
}

/**
 * The event id of an append sequence number; sorts like the number.
 *
 * @example eventId(1) // "evt_0000000000000001"
 */
export function eventId(seq: number): string {
  return `evt_${String(seq).padStart(EVENT_ID_DIGITS, "0")}`;
}

const EVENT_ID_PATTERN = /^evt_(\d{16})$/;

/**
 * The sequence number of an event id, or null when the text is not an event id.
 *
 * @example eventSeq("evt_0000000000000042") // 42
 */
export function eventSeq(id: string): number | null {
  const match = EVENT_ID_PATTERN.exec(id);
  if (!match) return null;
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) ? seq : null;
}

/** A fresh review key: 32 random bytes, base64url without padding (43 characters). */
export function newReviewKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(REVIEW_KEY_BYTES));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Compares two secrets in time that does not depend on where they differ (the length of a
 * review key is public, so an early answer on a length mismatch reveals nothing).
 */
export function sameSecret(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}
