import type { Session } from "../protocol/index.ts";

/**
 * Webhooks, the pure part (docs/PROTOCOL.md "Webhooks", DESIGN.md "Webhooks"): which events a
 * change of the session makes, the payload and its signature, and the retry schedule. The
 * outbox (outbox.ts) stores what this decides; the session object sends it.
 */

export type WebhookType = "session.phase" | "session.outcome";

/** The wire shape of one delivery. `id` is the same on every attempt. */
export interface WebhookPayload {
  id: string;
  type: WebhookType;
  created_at: string;
  session: Session;
}

/** What a receiver was last told about the session: its phase and outcome (as JSON), or null. */
export interface Announced {
  phase: string | null;
  outcome: string | null;
}

/**
 * How long a delivery is retried: its last attempt is made at most this long after its first;
 * a failure after that drops it (logged). A budget in time, not in attempts: a receiver that
 * answers at once (`503`, `Retry-After: 0`) gets the same 20 minutes to recover as one that
 * hangs until each attempt times out.
 */
export const WEBHOOK_RETRY_BUDGET_MS = 20 * 60_000;
/**
 * The wait before the first retry, and so the shortest wait there is; each further one doubles,
 * up to {@link WEBHOOK_MAX_DELAY_MS}. A receiver's Retry-After can lengthen a wait, never shorten it.
 */
export const WEBHOOK_FIRST_DELAY_MS = 10_000;
export const WEBHOOK_MAX_DELAY_MS = 600_000;
/** One attempt is abandoned after this long: a slow receiver is a failed attempt. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * The events a change from `before` to the session as it is now makes, in order: a phase change
 * (the first phase of a new session counts), then a new outcome. None when nothing a receiver
 * sees changed, so a poll or a step that stays in its phase announces nothing.
 *
 * @example
 * changesOf({ phase: "running", outcome: null }, { phase: "plan_ready", outcome: null })
 * // ["session.phase"]
 */
export function changesOf(
  before: Announced | null,
  now: Pick<Session, "phase" | "outcome">,
): WebhookType[] {
  const changes: WebhookType[] = [];
  if (before?.phase !== now.phase) changes.push("session.phase");
  const outcome = outcomeKey(now.outcome);
  if (outcome !== null && (before?.outcome ?? null) !== outcome) changes.push("session.outcome");
  return changes;
}

/** What is stored as announced for `session`. */
export function announcedOf(session: Pick<Session, "phase" | "outcome">): Announced {
  return { phase: session.phase, outcome: outcomeKey(session.outcome) };
}

function outcomeKey(outcome: Session["outcome"]): string | null {
  return outcome === null ? null : JSON.stringify(outcome);
}

/**
 * The delivery id: the session id and the event's number in it, so it is unique across
 * sessions, the same on every retry, and sorts in the order the events happened.
 *
 * @example webhookId("ses_01jq3v8k2c7x4m9p0a5b6d7e8f", 3) // "whk_01jq3v8k2c7x4m9p0a5b6d7e8f_0003"
 */
export function webhookId(sessionId: string, seq: number): string {
  return `whk_${sessionId.replace(/^ses_/, "")}_${String(seq).padStart(4, "0")}`;
}

/** The body of a delivery, exactly as it is signed and sent (and stored for the retries). */
export function webhookBody(
  id: string,
  type: WebhookType,
  createdAtMs: number,
  session: Session,
): string {
  const payload: WebhookPayload = {
    id,
    type,
    created_at: new Date(createdAtMs).toISOString(),
    session,
  };
  return JSON.stringify(payload);
}

/**
 * The `X-Planport-Signature` header value: `sha256=` and the hex HMAC-SHA256 of the raw body
 * with the secret.
 *
 * @example await signatureOf("s3cret…", '{"id":"whk_…"}') // "sha256=5d41…"
 */
export async function signatureOf(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(body)));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The wait after failed attempt number `attempt` (1 = the first): 10 s, 20 s, 40 s … capped at
 * 10 minutes. Within the 20-minute budget that makes at most 8 attempts: at 0 s, 10 s, 30 s,
 * 70 s, 150 s, 310 s, 630 s and, the next wait cut short by the budget, at 20 minutes.
 *
 * @example retryDelayMs(1) // 10_000
 * retryDelayMs(7) // 600_000 (640 s, capped)
 */
export function retryDelayMs(attempt: number): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  return Math.min(WEBHOOK_MAX_DELAY_MS, WEBHOOK_FIRST_DELAY_MS * 2 ** exponent);
}

/** How one attempt ended. */
export type AttemptResult =
  | { kind: "delivered"; status: number }
  | { kind: "gone"; status: 410 }
  | { kind: "failed"; reason: string; retryAfterMs: number | null };

/**
 * What an HTTP answer means: 2xx delivered, 410 Gone stop for good, anything else a failed
 * attempt (a redirect too: it is not followed), with the receiver's Retry-After if it sent one.
 */
export function resultOfStatus(
  status: number,
  retryAfter: string | null,
  nowMs: number,
): AttemptResult {
  if (status >= 200 && status < 300) return { kind: "delivered", status };
  if (status === 410) return { kind: "gone", status: 410 };
  return {
    kind: "failed",
    reason: `the receiver answered HTTP ${status}`,
    retryAfterMs: retryAfterMs(retryAfter, nowMs),
  };
}

/**
 * Retry-After as milliseconds from now: delta-seconds or an HTTP date; null when absent or
 * unreadable.
 *
 * @example retryAfterMs("120", 0) // 120_000
 */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its weekday and month; a bare number of any other shape is no date.
  const at = /[a-z]{3}/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** What the outbox does after a failed attempt. */
export type AfterFailure = { kind: "retry"; atMs: number } | { kind: "drop" };

/**
 * After failed attempt number `attempts` of a delivery first attempted at `firstAttemptMs`: retry
 * after the backoff ({@link retryDelayMs}), or after the receiver's Retry-After when that is
 * longer (capped at 10 minutes) — but no later than the end of the budget
 * ({@link WEBHOOK_RETRY_BUDGET_MS}), so the last attempt is made right at it. Drop when the
 * budget has no room left for even the shortest wait.
 *
 * @example afterFailure(1, 0, 5_000, 0) // { kind: "retry", atMs: 15_000 } (Retry-After: 0 waits the backoff)
 * afterFailure(7, null, 630_000, 0) // { kind: "retry", atMs: 1_200_000 } (cut short by the budget)
 * afterFailure(8, null, 1_200_000, 0) // { kind: "drop" }
 */
export function afterFailure(
  attempts: number,
  retryAfter: number | null,
  nowMs: number,
  firstAttemptMs: number,
): AfterFailure {
  const budgetEnds = firstAttemptMs + WEBHOOK_RETRY_BUDGET_MS;
  if (nowMs + WEBHOOK_FIRST_DELAY_MS > budgetEnds) return { kind: "drop" };
  const wait = Math.max(retryDelayMs(attempts), Math.min(WEBHOOK_MAX_DELAY_MS, retryAfter ?? 0));
  return { kind: "retry", atMs: Math.min(nowMs + wait, budgetEnds) };
}

/**
 * When the outbox tries a delivery again if the attempt that is starting never reports back
 * (the object was evicted or crashed mid-attempt): after its timeout and the usual backoff, or
 * at the end of the budget if that comes first (but never before the attempt's timeout). An
 * attempt that does report back replaces this time; a lease that runs out past the budget
 * drops the delivery ({@link budgetSpent}).
 */
export function leaseUntil(attempt: number, nowMs: number, firstAttemptMs: number): number {
  const timedOut = nowMs + WEBHOOK_ATTEMPT_TIMEOUT_MS;
  const budgetEnds = firstAttemptMs + WEBHOOK_RETRY_BUDGET_MS;
  return Math.min(timedOut + retryDelayMs(attempt), Math.max(budgetEnds, timedOut));
}

/**
 * Whether a due delivery's retry budget is spent: it is the lease of an attempt that never
 * reported back and ran out past the budget, so it is dropped, not tried again. Retries are
 * never set past the budget, so only a lease can be; a delivery never tried is tried once.
 */
export function budgetSpent(delivery: {
  attempts: number;
  next_attempt_at: number | null;
  first_attempt_at: number | null;
}): boolean {
  return (
    delivery.attempts > 0 &&
    delivery.first_attempt_at !== null &&
    delivery.next_attempt_at !== null &&
    delivery.next_attempt_at > delivery.first_attempt_at + WEBHOOK_RETRY_BUDGET_MS
  );
}
