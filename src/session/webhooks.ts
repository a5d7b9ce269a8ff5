import type { Session } from "../protocol/index.ts";

/**
 * Webhooks, the pure part (docs/PROTOCOL.md "Webhooks", DESIGN.md "Webhooks"): which events a
 * change of the session makes, the payload and its signature, and the retry schedule. The
 * outbox (webhooks-outbox.ts) stores what this decides; the session object sends it.
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

/** Attempts per delivery, the first included; after the last failure it is dropped (logged). */
export const WEBHOOK_MAX_ATTEMPTS = 8;
/** The wait before the first retry; each further one doubles, up to {@link WEBHOOK_MAX_DELAY_MS}. */
export const WEBHOOK_FIRST_DELAY_MS = 10_000;
export const WEBHOOK_MAX_DELAY_MS = 600_000;
/** One attempt is abandoned after this long: a slow receiver is a failed attempt. */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** A receiver's Retry-After is honoured, but never sooner than this (no hot loop on `0`). */
export const WEBHOOK_MIN_RETRY_AFTER_MS = 1_000;

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
 * 10 minutes. With the default 8 attempts the last one is about 21 minutes after the first.
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
 * After failed attempt number `attempts`: drop it once all {@link WEBHOOK_MAX_ATTEMPTS} were
 * made, else retry after the backoff — or after the receiver's Retry-After, which is honoured
 * within 1 s to 10 minutes.
 *
 * @example afterFailure(1, null, 0) // { kind: "retry", atMs: 10_000 }
 * afterFailure(8, null, 0) // { kind: "drop" }
 */
export function afterFailure(
  attempts: number,
  retryAfter: number | null,
  nowMs: number,
): AfterFailure {
  if (attempts >= WEBHOOK_MAX_ATTEMPTS) return { kind: "drop" };
  const delay =
    retryAfter === null
      ? retryDelayMs(attempts)
      : Math.min(WEBHOOK_MAX_DELAY_MS, Math.max(WEBHOOK_MIN_RETRY_AFTER_MS, retryAfter));
  return { kind: "retry", atMs: nowMs + delay };
}

/**
 * When the outbox tries a delivery again if the attempt that is starting never reports back
 * (the object was evicted or crashed mid-attempt): after its timeout and the usual backoff.
 * An attempt that does report back replaces this time.
 */
export function leaseUntil(attempt: number, nowMs: number): number {
  return nowMs + WEBHOOK_ATTEMPT_TIMEOUT_MS + retryDelayMs(attempt);
}
