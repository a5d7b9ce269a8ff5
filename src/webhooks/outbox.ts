import type { WebhookTarget } from "../config/urls.ts";
import { pendingWait } from "../session/decisions/waits.ts";
import { readRow } from "../session/session-row.ts";
import { sessionView } from "../session/session-view.ts";
import { teamView } from "../session/team/store.ts";
import {
  type Announced,
  type AttemptResult,
  afterFailure,
  announcedOf,
  changesOf,
  leaseUntil,
  type WebhookType,
  webhookBody,
  webhookId,
} from "./events.ts";

/**
 * The webhook outbox in the session's SQLite (DESIGN.md "Webhooks"). {@link announceChanges}
 * runs inside the transaction that changed the session and adds a delivery for each change a
 * receiver has not been told of; the session object's alarm sends what is due. A delivery row
 * keeps its id and body for every attempt, so a retry is byte-for-byte the same payload.
 */

/** Where announcements go: the receiver (null = none configured) and the base of review links. */
export interface AnnounceTarget {
  webhook: WebhookTarget | null;
  /**
   * PLANPORT_PUBLIC_URL when set; else the stored origin, that of the latest request by the
   * owner ({@link rememberOrigin}).
   */
  publicUrl: string | null;
}

/** One stored delivery. */
export interface Delivery {
  seq: number;
  id: string;
  type: WebhookType;
  body: string;
  attempts: number;
  next_attempt_at: number | null;
  state: "pending" | "delivered" | "gone" | "dropped";
  last_error: string | null;
  /**
   * When its first attempt started: the retry budget counts from here. Null before it; a
   * delivery stored before schema version 6 counts from its creation.
   */
  first_attempt_at: number | null;
}

const DELIVERY_COLUMNS =
  "seq, id, type, body, attempts, next_attempt_at, state, last_error, coalesce(first_attempt_at, CASE WHEN attempts > 0 THEN created_at END) AS first_attempt_at";

/**
 * Compares the session as it is now with what receivers were last told and records the
 * difference, in the caller's transaction: the new announced state always (so turning webhooks
 * on later announces only later changes), and one outbox row per change when a receiver is
 * configured. Phase and outcome come from {@link sessionView}, the one place they are decided,
 * so an event is made once per real change however many writes it took. `origin` is the
 * request's at creation; later calls pass null and use the stored one, which
 * {@link rememberOrigin} keeps current.
 */
export function announceChanges(
  sql: SqlStorage,
  nowMs: number,
  target: AnnounceTarget,
  origin: string | null = null,
): WebhookType[] {
  const row = readRow(sql);
  if (row === null) return [];
  const stored = readAnnounced(sql);
  const base = target.publicUrl ?? origin ?? stored?.origin ?? "";
  // As its requester sees it (receivers are the owner's), with who approved it.
  const session = sessionView(row, pendingWait(sql), base, teamView(sql, "requester") ?? undefined);
  const changes = changesOf(stored, session);
  if (changes.length === 0) return [];
  const now = announcedOf(session);
  sql.exec(
    `INSERT INTO webhook_state (id, origin, phase, outcome) VALUES (1, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, outcome = excluded.outcome`,
    origin ?? stored?.origin ?? "",
    now.phase,
    now.outcome,
  );
  if (target.webhook === null) return changes;
  for (const type of changes) {
    const seq = Number(
      sql.exec("SELECT coalesce(max(seq), 0) + 1 AS seq FROM webhook_outbox").one().seq,
    );
    const id = webhookId(row.id, seq);
    sql.exec(
      `INSERT INTO webhook_outbox (seq, id, type, body, created_at, attempts, next_attempt_at, state)
        VALUES (?, ?, ?, ?, ?, 0, ?, 'pending')`,
      seq,
      id,
      type,
      webhookBody(id, type, nowMs, session),
      nowMs,
      nowMs,
    );
  }
  return changes;
}

/**
 * Remembers the origin of a request by the session's owner as the base of the review links in
 * later webhooks (DESIGN.md "Webhooks"): a delivery the alarm makes has no request of its own,
 * and the origin the session was created on may be gone (the embedded worker came back on
 * another port). Only the owner's requests count: a review-link holder could otherwise choose
 * the host that receivers' links, which carry the review key, point at.
 */
export function rememberOrigin(sql: SqlStorage, origin: string): void {
  sql.exec("UPDATE webhook_state SET origin = ? WHERE id = 1 AND origin <> ?", origin, origin);
}

/** What receivers were last told, and the stored origin; null before the first announcement. */
export function readAnnounced(sql: SqlStorage): (Announced & { origin: string }) | null {
  const rows = sql
    .exec<{ origin: string; phase: string | null; outcome: string | null }>(
      "SELECT origin, phase, outcome FROM webhook_state WHERE id = 1",
    )
    .toArray();
  return rows[0] ?? null;
}

/** The pending deliveries due at `nowMs`, oldest first, except those in `skip` (in flight). */
export function dueDeliveries(
  sql: SqlStorage,
  nowMs: number,
  skip: ReadonlySet<string>,
): Delivery[] {
  return sql
    .exec<Record<string, SqlStorageValue>>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_outbox
        WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY seq`,
      nowMs,
    )
    .toArray()
    .map((r) => r as unknown as Delivery)
    .filter((d) => !skip.has(d.id));
}

/** Every stored delivery, oldest first (tests and diagnostics). */
export function listDeliveries(sql: SqlStorage): Delivery[] {
  return sql
    .exec<Record<string, SqlStorageValue>>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_outbox ORDER BY seq`,
    )
    .toArray()
    .map((r) => r as unknown as Delivery);
}

/** When the next pending delivery is due, or null: one of the alarm's clocks. */
export function nextDeliveryAt(sql: SqlStorage): number | null {
  const row = sql
    .exec<{ at: number | null }>(
      "SELECT min(next_attempt_at) AS at FROM webhook_outbox WHERE state = 'pending'",
    )
    .one();
  return row.at ?? null;
}

/**
 * Starts attempt number `attempts + 1`: counts it, keeps the time of the first, and moves the
 * delivery's time to the lease ({@link leaseUntil}), so an attempt lost with the object is
 * retried, not forgotten. Returns the attempt's number.
 */
export function beginAttempt(sql: SqlStorage, delivery: Delivery, nowMs: number): number {
  const attempt = delivery.attempts + 1;
  const first = delivery.first_attempt_at ?? nowMs;
  sql.exec(
    "UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ?, first_attempt_at = ? WHERE seq = ?",
    attempt,
    leaseUntil(attempt, nowMs, first),
    first,
    delivery.seq,
  );
  return attempt;
}

/** How a finished attempt left the delivery, for the log. */
export type Settled =
  | { kind: "delivered" | "gone" | "retry" | "missing" }
  | { kind: "dropped"; reason: string };

/**
 * Records how attempt number `attempt` ended: delivered, gone (410: never again), retried
 * later, or dropped once the retry budget is spent. `missing` when the delivery is no longer
 * there (the session was purged meanwhile).
 */
export function settleAttempt(
  sql: SqlStorage,
  seq: number,
  attempt: number,
  result: AttemptResult,
  nowMs: number,
): Settled {
  const pending =
    sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'webhook_outbox'")
      .toArray().length > 0
      ? sql
          .exec<{ first_attempt_at: number }>(
            "SELECT coalesce(first_attempt_at, created_at) AS first_attempt_at FROM webhook_outbox WHERE seq = ? AND state = 'pending'",
            seq,
          )
          .toArray()[0]
      : undefined;
  if (pending === undefined) return { kind: "missing" };
  if (result.kind !== "failed") {
    sql.exec(
      "UPDATE webhook_outbox SET state = ?, next_attempt_at = NULL, last_error = NULL WHERE seq = ?",
      result.kind,
      seq,
    );
    return { kind: result.kind };
  }
  const next = afterFailure(attempt, result.retryAfterMs, nowMs, pending.first_attempt_at);
  sql.exec(
    "UPDATE webhook_outbox SET state = ?, next_attempt_at = ?, last_error = ? WHERE seq = ?",
    next.kind === "drop" ? "dropped" : "pending",
    next.kind === "drop" ? null : next.atMs,
    result.reason,
    seq,
  );
  return next.kind === "drop" ? { kind: "dropped", reason: result.reason } : { kind: "retry" };
}

/**
 * Drops a due delivery that cannot be attempted: its budget is spent (the last attempt never
 * reported back), or no receiver is configured any more.
 */
export function dropDelivery(sql: SqlStorage, seq: number, reason: string): void {
  sql.exec(
    "UPDATE webhook_outbox SET state = 'dropped', next_attempt_at = NULL, last_error = ? WHERE seq = ?",
    reason,
    seq,
  );
}
