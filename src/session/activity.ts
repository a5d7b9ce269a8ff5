import { type SessionRow, updateRow } from "./session-row.ts";
import type { Identity } from "./team/access.ts";
import type { Role } from "./team/rules.ts";

/**
 * A terminal polls every few seconds, an open review page every 2 s; writing the time of a poll
 * or a visit at most this often keeps most of them free of a storage write (a write holds the
 * answer until it is durable: about +50% on a poll). After a restart the stored times are at
 * most this old, and a terminal or page that is still polling refreshes them within one
 * interval: a teleport inside the 15 s window is never refused for it, and an idle time of days
 * loses at most these seconds.
 */
export const ACTIVITY_RECORD_EVERY_MS = 10_000;

/**
 * The activity a session object notes on its read path (DESIGN.md "Retention", idle sessions),
 * kept exact in memory and written to the row at most every {@link ACTIVITY_RECORD_EVERY_MS}:
 * - `terminal_polled_at`: the requester's terminal polling the feed — teleport is offered only
 *   while one polls, and it keeps the session from going idle;
 * - `person_seen_at`: a person who may act on the session is here — the requester's or an
 *   approver's token, or the decision link (its review page loads, and polls only while its
 *   tab is visible). Never the share link: it is posted to channels and left open in tabs, and
 *   decides nothing; a plan that only readers look at is the very case the idle archive is for.
 *   A comment left with it counts, though: a forgotten tab never writes one.
 *
 * @example
 * const activity = new Activity(sql, () => Date.now());
 * activity.personSeen(identity, { kind: "decider" }); // the review page polled
 * idleDueAt(activity.applyTo(readRow(sql)), idleMs);
 */
export class Activity {
  private terminalPolledAt: number | null = null;
  private personSeenAt: number | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly clock: () => number,
  ) {}

  /** The requester's terminal polled the feed. */
  terminalPolled(identity: Identity): void {
    const now = this.clock();
    this.terminalPolledAt = now;
    if (due(identity.storedPollAt, now)) {
      updateRow(this.sql, { terminal_polled_at: now });
      identity.storedPollAt = now;
    }
  }

  /** A request about this session came from `role`: noted unless it is the share link. */
  personSeen(identity: Identity, role: Role): void {
    if (role.kind !== "viewer") this.commentLeft(identity);
  }

  /** Someone left a comment (whoever they are: writing one is no forgotten tab). */
  commentLeft(identity: Identity): void {
    const now = this.clock();
    this.personSeenAt = now;
    if (due(identity.storedSeenAt, now)) {
      updateRow(this.sql, { person_seen_at: now });
      identity.storedSeenAt = now;
    }
  }

  /** The row with the exact times kept here (the stored ones may be up to 10 s older). */
  applyTo(row: SessionRow): SessionRow {
    return {
      ...row,
      terminal_polled_at: latest(this.terminalPolledAt, row.terminal_polled_at),
      person_seen_at: latest(this.personSeenAt, row.person_seen_at),
    };
  }

  /** Forgets everything (the session was purged). */
  forget(): void {
    this.terminalPolledAt = null;
    this.personSeenAt = null;
  }
}

function due(stored: number | null, now: number): boolean {
  return stored === null || now - stored >= ACTIVITY_RECORD_EVERY_MS;
}

function latest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
