import { configOf } from "../config.ts";
import type { Env } from "../env.ts";
import type { SnapshotFiles } from "../planner/port.ts";
import type { Session } from "../protocol/index.ts";
import { ok } from "../protocol/index.ts";
import { openSnapshot } from "../snapshot/index.ts";
import { type AnnounceTarget, nextDeliveryAt } from "../webhooks/outbox.ts";
import type { WebhookFetch } from "../webhooks/send.ts";
import { SessionWebhooks } from "../webhooks/session-webhooks.ts";
import { Activity } from "./activity.ts";
import { idleDueAt, scheduleAlarm } from "./alarm.ts";
import { executionOf, lastTestRun, releaseIfExecuted } from "./commands.ts";
import { pendingWait } from "./decisions/waits.ts";
import { AccessGate } from "./gate.ts";
import { archiveIdleSession } from "./lifecycle.ts";
import { NO_SNAPSHOT } from "./port-adapter.ts";
import { NOT_FOUND, type SessionResult } from "./result.ts";
import { hasSchema } from "./schema.ts";
import { readRow, type SessionRow } from "./session-row.ts";
import { sessionView } from "./session-view.ts";
import { releaseSnapshot, releasesSnapshot } from "./snapshot-release.ts";
import type { Role } from "./team/rules.ts";
import { roleName } from "./team/rules.ts";
import { type readTeam, teamView } from "./team/store.ts";

/** The session object's seams that the core reads at each use (tests replace them). */
export interface CoreSeams {
  clock: () => number;
  webhookTarget: () => AnnounceTarget;
  webhookFetch: WebhookFetch;
}

/**
 * What every method of one session's Durable Object shares: its SQLite, the access gate, the
 * activity it notes, its webhooks, and the steps each change ends with — the session as a
 * role sees it, the alarm set for what is due next, the owner indexes told when it ends.
 * session-object.ts is the RPC shell around it; deciding.ts the changes a person asks for.
 */
export class SessionCore {
  readonly sql: SqlStorage;
  /** The terminal's polls and the people who came, for teleport and the idle clock. */
  readonly activity: Activity;
  /** Who may see the session: the check at the top of every RPC method. */
  readonly gate: AccessGate;
  /** The outbox's announcements and the deliveries running now (never awaited by the alarm). */
  readonly webhooks: SessionWebhooks;

  constructor(
    readonly storage: DurableObjectStorage,
    readonly env: Env,
    private readonly seams: CoreSeams,
  ) {
    this.sql = storage.sql;
    this.activity = new Activity(this.sql, () => this.now());
    this.gate = new AccessGate(this.sql, this.activity);
    this.webhooks = new SessionWebhooks({
      sql: this.sql,
      clock: () => this.now(),
      target: () => seams.webhookTarget(),
      send: (request) => seams.webhookFetch(request),
      stored: () => hasSchema(this.sql),
      scheduleAlarm: () => this.scheduleAlarm(),
    });
  }

  /** Milliseconds since the epoch, by the object's clock. */
  now(): number {
    return this.seams.clock();
  }

  /** The session as `role` sees it (the requester when not given: creation, webhooks). */
  view(origin: string, role: Role | null = null): SessionResult<Session> {
    const row = readRow(this.sql);
    const team = teamView(this.sql, role === null ? "requester" : roleName(role));
    if (row === null || team === null) return NOT_FOUND;
    return ok({
      ...sessionView(this.activity.applyTo(row), pendingWait(this.sql), origin, team),
      last_test_run: lastTestRun(this.sql),
    });
  }

  /** Keeps the base of later webhooks' links (only the requester's requests count). */
  rememberOrigin(role: Role, origin: string): void {
    this.webhooks.rememberOrigin(role.kind === "requester", origin);
  }

  snapshotOf(row: SessionRow): SnapshotFiles {
    return row.snapshot_id === null
      ? NO_SNAPSHOT
      : openSnapshot(this.env.SNAPSHOTS, row.owner, row.snapshot_id);
  }

  retentionMs(): number {
    return configOf(this.env).retentionMs;
  }

  scheduleAlarm(): Promise<void> {
    const row = readRow(this.sql);
    return scheduleAlarm(
      this.storage,
      row && this.activity.applyTo(row),
      nextDeliveryAt(this.sql),
      configOf(this.env).idleMs,
    );
  }

  /**
   * Archives the session when it is idle (DESIGN.md "Retention"); true when it did. A terminal
   * poll or a person's request moves the idle time without setting the alarm (a poll stays
   * free of that write), so an alarm set for an idle time that one has since moved finds
   * nothing due and is set again for the new one.
   */
  archiveIfIdle(row: SessionRow, now: number): boolean {
    const { idleMs } = configOf(this.env);
    const due = idleDueAt(this.activity.applyTo(row), idleMs);
    if (due === null || due > now) return false;
    this.storage.transactionSync(() => {
      archiveIdleSession(this.sql, row, now, this.retentionMs(), idleMs);
      this.webhooks.announce();
    });
    return true;
  }

  /** The session ended since `before` was read: its snapshot may go (snapshot-release.ts). */
  async releaseIfEnded(before: SessionRow): Promise<void> {
    const after = readRow(this.sql);
    if (releasesSnapshot(before, after, this.sql)) await releaseSnapshot(this.env, after);
    await releaseIfExecuted(executionOf(this.env, before), before, after);
  }

  /**
   * The session no longer waits for its approvers: drop it from their owner indexes now (their
   * listing would drop it too, when it reads the session; see owner/sessions.ts `listAwaiting`).
   */
  async dropAwaiting(team: ReturnType<typeof readTeam>): Promise<void> {
    const row = readRow(this.sql);
    if (team === null || row === null || team.approvers.length === 0) return;
    try {
      await Promise.all(
        team.approvers.map((a) =>
          this.env.OWNERS.get(this.env.OWNERS.idFromName(a.owner)).dropAwaiting([row.id]),
        ),
      );
    } catch (err) {
      console.error(`planport: ${row.id} is left in an approver's list until it is read`, err);
    }
  }

  /** Retention is due: the owner index forgets the session, and its storage is deleted. */
  async purge(row: SessionRow): Promise<void> {
    await this.env.OWNERS.get(this.env.OWNERS.idFromName(row.owner)).dropSession(row.owner, row.id);
    await this.storage.deleteAlarm();
    await this.storage.deleteAll();
    this.activity.forget();
    this.webhooks.forget();
    this.gate.forget();
  }
}
