import { budgetSpent } from "./events.ts";
import {
  type AnnounceTarget,
  announceChanges,
  beginAttempt,
  type Delivery,
  dropDelivery,
  dueDeliveries,
  readAnnounced,
  rememberOrigin,
  settleAttempt,
} from "./outbox.ts";
import { originOf, sendWebhook, type WebhookFetch } from "./send.ts";

/** What one session's webhooks need of the Durable Object that holds them. */
export interface WebhookHost {
  sql: SqlStorage;
  /** Milliseconds since the epoch (the object's clock, which tests move). */
  clock: () => number;
  /** Where webhooks go and the base of their links, read at each use (a seam of the object). */
  target: () => AnnounceTarget;
  /** How a webhook leaves the worker, read at each use (a seam of the object). */
  send: WebhookFetch;
  /** False once the session's storage was purged. */
  stored: () => boolean;
  /** Sets the alarm for what is due next. */
  scheduleAlarm: () => Promise<void>;
}

/**
 * One session's webhooks (DESIGN.md "Webhooks"): recording what a change announces in the
 * outbox, keeping the base of their links, and running the deliveries that are due. The outbox
 * (outbox.ts) stores every fact; this holds only what runs now.
 *
 * @example
 * const webhooks = new SessionWebhooks({ sql, clock, target, send, stored, scheduleAlarm });
 * ctx.storage.transactionSync(() => { archiveSession(sql, row, now, ms); webhooks.announce(); });
 * webhooks.startDeliveries(now); // from the alarm
 */
export class SessionWebhooks {
  /** Webhook attempts running now, by delivery id (never awaited by the alarm). */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The link base last stored (see {@link rememberOrigin}); undefined: not read yet. */
  private storedOrigin: string | undefined;

  constructor(private readonly host: WebhookHost) {}

  /** Records the webhook events of the change just made, in the caller's transaction. */
  announce(origin: string | null = null): void {
    announceChanges(this.host.sql, this.host.clock(), this.host.target(), origin);
  }

  /** {@link announce} after a change that succeeded; the result passes through. */
  announcing<T extends { ok: boolean }>(result: T): T {
    if (result.ok) this.announce();
    return result;
  }

  /**
   * Keeps the base of later webhooks' review links at the origin of the requester's latest
   * request (outbox.ts `rememberOrigin`; DESIGN.md "Review links"). Writes only when it
   * changed. Only the requester's own token counts: an approver's request, like a review-link
   * holder's, could otherwise send a forged `Host` and point the links that receivers get —
   * which carry the decision key — at a host of their choosing.
   */
  rememberOrigin(byRequester: boolean, origin: string): void {
    if (!byRequester || origin === "") return;
    this.storedOrigin ??= readAnnounced(this.host.sql)?.origin;
    if (origin === this.storedOrigin) return;
    rememberOrigin(this.host.sql, origin);
    this.storedOrigin = origin;
  }

  /** The session's storage was deleted: nothing stored is remembered. */
  forget(): void {
    this.storedOrigin = undefined;
  }

  /** Waits until the webhook attempts running now have finished (tests, diagnostics). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /**
   * Starts every due webhook delivery that is not already in flight. Each attempt is counted
   * and leased before it starts (outbox.ts `beginAttempt`), and records its result and sets the
   * alarm for what is due next when it ends.
   */
  startDeliveries(now: number): void {
    const { sql } = this.host;
    const due = dueDeliveries(sql, now, new Set(this.inFlight.keys()));
    if (due.length === 0) return;
    const target = this.host.target().webhook;
    for (const delivery of due) {
      if (target === null) {
        this.drop(delivery, "PLANPORT_WEBHOOK_URL is no longer set");
      } else if (budgetSpent(delivery)) {
        this.drop(delivery, `its last attempt to ${originOf(target.url)} never reported back`);
      } else {
        const attempt = beginAttempt(sql, delivery, now);
        const run = sendWebhook(this.host.send, target, delivery, this.host.clock)
          .then(async (result) => {
            if (!this.host.stored()) return; // purged meanwhile
            const settled = settleAttempt(sql, delivery.seq, attempt, result, this.host.clock());
            if (settled.kind === "dropped") this.logDropped(delivery, attempt, settled.reason);
            if (settled.kind === "gone")
              console.warn(
                `planport: webhook ${delivery.id} answered 410 Gone by ${originOf(target.url)}; not sent again.`,
              );
            await this.host.scheduleAlarm();
          })
          .catch((error: unknown) => {
            console.error(`planport: webhook ${delivery.id}: recording the attempt failed`, error);
          })
          .finally(() => this.inFlight.delete(delivery.id));
        this.inFlight.set(delivery.id, run);
      }
    }
  }

  private drop(delivery: Delivery, reason: string): void {
    dropDelivery(this.host.sql, delivery.seq, reason);
    this.logDropped(delivery, delivery.attempts, reason);
  }

  private logDropped(delivery: Delivery, attempts: number, reason: string): void {
    console.error(
      `planport: webhook ${delivery.id} (${delivery.type}) dropped after ${attempts} attempt(s): ${reason}.`,
    );
  }
}
