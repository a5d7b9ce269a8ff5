import { DurableObject } from "cloudflare:workers";
import { cachedConfig, configOf } from "../config.ts";
import type { Env } from "../env.ts";
import { step } from "../planner/loop.ts";
import type { SessionPort, SnapshotFiles, StepResult } from "../planner/port.ts";
import type {
  Decision,
  FeedPage,
  Message,
  PlanFile,
  Session,
  Suggestion,
} from "../protocol/index.ts";
import { fail, ok } from "../protocol/index.ts";
import { openSnapshot } from "../snapshot/index.ts";
import { budgetSpent } from "../webhooks/events.ts";
import {
  type AnnounceTarget,
  announceChanges,
  beginAttempt,
  type Delivery,
  dropDelivery,
  dueDeliveries,
  nextDeliveryAt,
  readAnnounced,
  rememberOrigin,
  settleAttempt,
} from "../webhooks/outbox.ts";
import { originOf, sendWebhook, type WebhookFetch } from "../webhooks/send.ts";
import { Activity } from "./activity.ts";
import { idleDueAt, restoreAlarm, scheduleAlarm } from "./alarm.ts";
import { postMessage } from "./decisions/messages.ts";
import { listDecisions, recordDecision } from "./decisions/record.ts";
import { pendingWait } from "./decisions/waits.ts";
import { feedPage, listEvents } from "./events/log.ts";
import { overlayDiff } from "./files/overlay.ts";
import { listPlanRevisions, readPlan, readPlanRevision } from "./files/plan-file.ts";
import {
  afterDecision,
  claimBeforeDecision,
  hasChosenPlan,
  loadGroup,
  supersedeSession,
} from "./groups.ts";
import { eventSeq } from "./ids.ts";
import { archiveIdleSession, archiveSession } from "./lifecycle.ts";
import { failedStep, followStep } from "./loop-driver.ts";
import { type NewSession, writeNewSession } from "./new-session.ts";
import { NO_SNAPSHOT, SessionPortAdapter } from "./port-adapter.ts";
import { type Access, NOT_FOUND, type SessionResult } from "./result.ts";
import type { GroupMember, ReviewDetails, ReviewState, SessionGroup, SessionRpc } from "./rpc.ts";
import { hasSchema, migrate } from "./schema.ts";
import { hasEnded, readRow, type SessionRow, updateRow } from "./session-row.ts";
import { sessionView } from "./session-view.ts";
import { releaseSnapshot, releasesSnapshot } from "./snapshot-release.ts";
import { type Identity, readIdentity, roleOf } from "./team/access.ts";
import { MAX_SUGGESTIONS, type Role, refuseViewer, roleLabel, roleName } from "./team/rules.ts";
import { addSuggestion, listSuggestions, readTeam, teamView } from "./team/store.ts";

/**
 * One planning session (DESIGN.md "Session Durable Object"): its row, event log, decisions,
 * waits, plan file and workspace overlay in SQLite, and the agent loop driven by its alarm.
 * Every RPC method takes an {@link Access}, checks it here, and answers a {@link Result}. Every
 * method that changes when the alarm is due awaits setting it (see alarm.ts `scheduleAlarm`).
 *
 * @example
 * const stub = env.SESSIONS.get(env.SESSIONS.idFromName(sessionId));
 * const page = await stub.events({ kind: "owner", owner }, "", 100); // { ok: true, value: FeedPage }
 */
export class SessionObject extends DurableObject<Env> implements SessionRpc {
  /** Milliseconds since the epoch. A seam: tests move it to reach retention and time windows. */
  clock: () => number = () => Date.now();
  /** One step of the planning engine. A seam: tests of the loop driver put a test double here. */
  planningStep: (port: SessionPort, env: Env) => Promise<StepResult> = step;
  /** What follows a decision in a best-of-N group. A seam: tests crash the object here. */
  settleGroup: typeof afterDecision = afterDecision;
  /** Where webhooks go. A seam: tests point it at a receiver without changing the worker's vars. */
  webhookTarget: () => AnnounceTarget = () => {
    const config = configOf(this.env);
    return { webhook: config.webhook, publicUrl: config.publicUrl };
  };
  /** How a webhook leaves the worker. A seam: tests put a receiver double here. */
  webhookFetch: WebhookFetch = (request) => fetch(request);
  /** Webhook attempts running now, by delivery id (never awaited by the alarm; see alarm()). */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly sql: SqlStorage;
  /** Who may see the session (never changes once created); undefined until first read. */
  private identity: Identity | null | undefined;
  /** The terminal's polls and the people who came, for teleport and the idle clock. */
  private readonly activity: Activity;
  /** The link base last stored for webhooks (see {@link rememberOrigin}); undefined: not yet. */
  private storedOrigin: string | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.activity = new Activity(this.sql, () => this.clock());
    void ctx.blockConcurrencyWhile(async () => {
      if (!hasSchema(this.sql)) return;
      ctx.storage.transactionSync(() => migrate(this.sql));
      // A bad PLANPORT_IDLE_DAYS is the API's to report (500 server_misconfigured); starting
      // the object must not fail on it, so the idle clock waits until the setting is fixed.
      const config = cachedConfig(env);
      const idleMs = config.ok ? config.value.idleMs : null;
      await restoreAlarm(ctx.storage, readRow(this.sql), nextDeliveryAt(this.sql), idleMs);
    });
  }

  /** Answers 42 from SQLite: a liveness probe of the object's storage. */
  ping(): number {
    return Number(this.sql.exec("SELECT 41 + 1 AS n").one().n);
  }

  /**
   * Creates the session: its row and the `system/init` event, and (unless `autostart` is
   * false) schedules the first loop step.
   */
  async create(input: NewSession): Promise<SessionResult<Session>> {
    this.ctx.storage.transactionSync(() => {
      migrate(this.sql);
      writeNewSession(this.sql, input, this.clock());
      announceChanges(this.sql, this.clock(), this.webhookTarget(), input.origin);
    });
    this.identity = undefined;
    await this.scheduleAlarm();
    return this.view(input.origin);
  }

  /** The session as the API shows it. */
  get(access: Access, origin: string): SessionResult<Session> {
    const visit = this.visit(access);
    if (visit === null) return NOT_FOUND;
    this.rememberOrigin(visit.role, origin);
    return this.view(origin, visit.role);
  }

  /**
   * The session as a list shows it (`planport list`, `watch`, `--awaiting-me`): {@link get}
   * without noting a person here — `watch` reads every listed session every 3 s, and would
   * otherwise keep every one of them from ever going idle.
   */
  listed(access: Access, origin: string): SessionResult<Session> {
    const allowed = this.allowed(access);
    if (allowed === null) return NOT_FOUND;
    this.rememberOrigin(allowed.role, origin);
    return this.view(origin, allowed.role);
  }

  /**
   * The session and its plan (null before the planner wrote one) as the review page of a
   * sibling in its best-of-N group shows them: read on behalf of that page, so no person is
   * noted here (a share-link tab of one session must not keep its siblings alive).
   */
  groupMember(access: Access, origin: string): SessionResult<GroupMember> {
    const allowed = this.allowed(access);
    if (allowed === null) return NOT_FOUND;
    const session = this.view(origin, allowed.role);
    if (!session.ok) return session;
    return ok({ session: session.value, plan: readPlan(this.sql, allowed.row.plan_path) });
  }

  /**
   * A page of the event feed after the event `afterId` ("" for the start). A poll by the owner
   * (a bearer token, i.e. a terminal) is recorded: teleport is offered only while a terminal is
   * polling. Any other poll but the share link's is a person here (activity.ts).
   */
  events(access: Access, afterId: string, limit: number): SessionResult<FeedPage> {
    // The hot path of every terminal poll: the access check uses the cached identity, so a
    // poll is one indexed range read (plus at most one small write every 10 s).
    const identity = this.loadIdentity();
    const role = identity === null ? null : roleOf(identity, access);
    if (identity === null || role === null) return NOT_FOUND;
    const afterSeq = afterId === "" ? 0 : eventSeq(afterId);
    if (afterSeq === null) {
      return fail(
        400,
        "invalid_cursor",
        "after_id must be an event id such as evt_0000000000000042 (the last_id of a previous page).",
      );
    }
    // Only the requester's terminal receives a teleport: an approver's poll is not one, but
    // it is a person here, as is the decision link's page polling (activity.ts).
    if (role.kind === "requester") this.activity.terminalPolled(identity);
    else this.activity.personSeen(identity, role);
    return ok(feedPage(this.sql, afterSeq, limit));
  }

  /**
   * Everything the review page shows, in one call: the session, the plan, the whole log and
   * the decisions. `origin` builds the review link; relative when absent.
   */
  review(access: Access, origin = ""): SessionResult<ReviewState> {
    const visit = this.visit(access);
    if (visit === null) return NOT_FOUND;
    const { row, role } = visit;
    const session = this.view(origin, role);
    if (!session.ok) return session;
    return ok({
      session: session.value,
      plan: readPlan(this.sql, row.plan_path),
      events: listEvents(this.sql),
      decisions: listDecisions(this.sql),
      suggestions: listSuggestions(this.sql),
    });
  }

  /** The plan file (revision 0 and empty content before the planner wrote one). */
  plan(access: Access): SessionResult<PlanFile> {
    const row = this.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    return ok(
      readPlan(this.sql, row.plan_path) ?? {
        path: row.plan_path,
        content: "",
        revision: 0,
        edited_by_user: false,
      },
    );
  }

  /**
   * What the review page shows beyond {@link review}: every stored plan revision without its
   * text, the text of the `wanted` ones (the page asks for at most the two it shows or
   * compares), and the session's deadlines (the ask timeout's answer, the purge).
   */
  reviewDetails(access: Access, wanted: readonly number[]): SessionResult<ReviewDetails> {
    const row = this.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    const contents = [...new Set(wanted)]
      .slice(0, 2)
      .map((n) => readPlanRevision(this.sql, row.plan_path, n))
      .filter((p): p is PlanFile => p !== null);
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return ok({
      revisions: listPlanRevisions(this.sql),
      contents,
      ask_timeout_s: row.ask_timeout_s,
      afk_due_at: iso(row.afk_due_at),
      purge_due_at: iso(row.purge_due_at),
    });
  }

  /** The workspace overlay as a unified diff against the snapshot; empty when nothing changed. */
  async changes(access: Access): Promise<SessionResult<string>> {
    const row = this.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    return ok(await overlayDiff(this.sql, this.snapshotOf(row)));
  }

  /** An answer to the open question, or free text (DESIGN.md "Messages"). */
  async message(access: Access, body: Message, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row, role } = allowed;
    const viewOnly = refuseViewer(role);
    if (viewOnly) return viewOnly;
    const result = this.ctx.storage.transactionSync(() => {
      this.rememberOrigin(role, origin);
      return this.announcing(postMessage(this.sql, row, body, this.clock()));
    });
    if (!result.ok) return result;
    await this.scheduleAlarm();
    return this.view(origin, role);
  }

  /**
   * Decides the pending ExitPlanMode. No `await` from the check to the insert: concurrent
   * decisions serialise in this object, and all but the first get 409. In a best-of-N group an
   * approval or teleport first claims the group, and once it committed the siblings are
   * superseded (groups.ts), both outside the decision's transaction.
   */
  async decide(access: Access, body: Decision, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row: before, role } = allowed;
    const viewOnly = refuseViewer(role);
    if (viewOnly) return viewOnly;
    const team = readTeam(this.sql);
    const approvers = team?.approvers.map((a) => a.label) ?? [];
    const claim = await claimBeforeDecision(this.env, before, body.decision);
    if (!claim.ok) return claim;
    // Read again: other requests may have changed the session while the claim was made.
    const row = readRow(this.sql);
    if (row === null) return NOT_FOUND;
    const result = this.ctx.storage.transactionSync(() => {
      this.rememberOrigin(role, origin);
      return this.announcing(
        recordDecision(this.sql, row, body, {
          nowMs: this.clock(),
          terminalPolledAt: this.activity.applyTo(row).terminal_polled_at,
          retentionMs: this.retentionMs(),
          decider: role,
          approvers,
        }),
      );
    });
    if (result.ok) await this.scheduleAlarm();
    if (result.ok && result.value !== "reject") await this.dropAwaiting(team);
    if (result.ok) await this.releaseIfEnded(row);
    if (claim.value?.kind === "won") {
      // Durable before the arbiter hears of it: superseding the siblings of a decision that a
      // crash then lost would leave the group with no plan at all.
      await this.ctx.storage.sync();
      // A refusal gives the claim back, unless a concurrent request on this session chose the plan.
      await this.settleGroup(this.env, row, claim.value, result.ok || hasChosenPlan(this.sql));
    }
    return result.ok ? this.view(origin, role) : result;
  }

  /**
   * A sibling of this session's group was chosen: archive this one as superseded (idempotent;
   * a session that has ended keeps its ending). Called by the owner index, the group's arbiter.
   */
  async supersede(chosenId: string): Promise<void> {
    const row = hasSchema(this.sql) ? readRow(this.sql) : null;
    if (row === null || row.id === chosenId) return;
    this.ctx.storage.transactionSync(() => {
      supersedeSession(this.sql, row, this.clock(), this.retentionMs());
      this.announce();
    });
    await this.scheduleAlarm();
    await this.releaseIfEnded(row);
  }

  /** Whether this session recorded an approval or a teleport (the group arbiter's check). */
  chosenPlan(): boolean {
    return hasSchema(this.sql) && hasChosenPlan(this.sql);
  }

  /** The session's best-of-N group with every member's state and plan; null when in none. */
  async group(access: Access, origin: string): Promise<SessionResult<SessionGroup | null>> {
    const allowed = this.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row, role } = allowed;
    if (row.group_name === null) return ok(null);
    const group = await loadGroup(this.env, row.owner, row.id, origin);
    // A share link leads only to share links: the siblings' decision keys stay hidden.
    if (group === null || role.kind !== "viewer") return ok(group);
    return ok({
      ...group,
      members: group.members.map((m) => ({
        ...m,
        session: { ...m.session, review_url: m.session.share_url ?? "" },
      })),
    });
  }

  /** Stops the session for good; idempotent (one `result/archived` event, ever). */
  async archive(access: Access, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row, role } = allowed;
    const viewOnly = refuseViewer(role);
    if (viewOnly) return viewOnly;
    this.ctx.storage.transactionSync(() => {
      this.rememberOrigin(role, origin);
      archiveSession(this.sql, row, this.clock(), this.retentionMs());
      this.announce();
    });
    await this.scheduleAlarm();
    await this.dropAwaiting(readTeam(this.sql));
    await this.releaseIfEnded(row);
    return this.view(origin, role);
  }

  /**
   * Keeps a comment on the plan as a suggestion for whoever decides (team review): open to
   * everyone who may see the session, the share link included, until it ends.
   */
  suggest(access: Access, comment: { quote: string; text: string }): SessionResult<Suggestion[]> {
    const allowed = this.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row, role, identity } = allowed;
    if (hasEnded(row)) {
      return fail(409, "session_ended", "This session has ended; its plan takes no more comments.");
    }
    const kept = this.ctx.storage.transactionSync(() =>
      addSuggestion(this.sql, comment, roleLabel(role), this.clock()),
    );
    if (kept) this.activity.commentLeft(identity);
    if (!kept) {
      return fail(
        413,
        "payload_too_large",
        `This session already keeps ${MAX_SUGGESTIONS} suggestions; send yours to the person deciding another way.`,
      );
    }
    return ok(listSuggestions(this.sql));
  }

  /** The suggestions readers left, oldest first. */
  suggestions(access: Access): SessionResult<Suggestion[]> {
    if (this.visit(access) === null) return NOT_FOUND;
    return ok(listSuggestions(this.sql));
  }

  /** The session as the planning engine sees it. */
  port(): SessionPort {
    const row = hasSchema(this.sql) ? readRow(this.sql) : null;
    if (row === null) throw new Error("This Durable Object holds no session.");
    return new SessionPortAdapter(
      this.ctx.storage,
      this.snapshotOf(row),
      this.clock,
      this.retentionMs(),
      () => this.announce(),
    );
  }

  /**
   * The one alarm: purge when retention is due, else the idle archive when the session saw no
   * activity for PLANPORT_IDLE_DAYS, the webhook deliveries that are due, and the loop step or
   * the AFK wake. Deliveries are started, not awaited: the step runs beside them, and the alarm
   * ends when the step does, so a slow or dead receiver never delays the planning (an alarm
   * that ran on would hold back the next one, i.e. the next step).
   */
  override async alarm(): Promise<void> {
    const row = hasSchema(this.sql) ? readRow(this.sql) : null;
    if (row === null) return;
    const now = this.clock();
    if (row.purge_due_at !== null && row.purge_due_at <= now) {
      if (nextDeliveryAt(this.sql) === null) {
        await this.purge(row);
        return;
      }
      // Webhooks still to send (the outcome of a session kept for 0 days, say): the purge waits
      // for them, at most their 20-minute retry budget (and one attempt's timeout); the alarm
      // wakes for the next attempt.
      this.startDeliveries(now);
      await this.ctx.storage.setAlarm(Math.max(now, nextDeliveryAt(this.sql) ?? now));
      return;
    }
    const archivedIdle = this.archiveIfIdle(row, now);
    this.startDeliveries(now);
    const stepDue = row.step_due_at !== null && row.step_due_at <= now;
    const afkDue =
      row.afk_due_at !== null && row.afk_due_at <= now && pendingWait(this.sql) !== null;
    if (!archivedIdle && !hasEnded(row) && (stepDue || afkDue)) {
      await this.runStep(row.wake_seq, afkDue);
    }
    await this.scheduleAlarm();
    await this.releaseIfEnded(row);
  }

  /**
   * Archives the session when it is idle (DESIGN.md "Retention"); true when it did. A terminal
   * poll or a person's request moves the idle time without setting the alarm (a poll stays
   * free of that write), so an alarm set for an idle time that one has since moved finds
   * nothing due and is set again for the new one.
   */
  private archiveIfIdle(row: SessionRow, now: number): boolean {
    const { idleMs } = configOf(this.env);
    const due = idleDueAt(this.activity.applyTo(row), idleMs);
    if (due === null || due > now) return false;
    this.ctx.storage.transactionSync(() => {
      archiveIdleSession(this.sql, row, now, this.retentionMs(), idleMs);
      this.announce();
    });
    return true;
  }

  private async runStep(wakeSeqAtStart: number, afkDue: boolean): Promise<void> {
    if (afkDue) updateRow(this.sql, { afk_due_at: null });
    let result: StepResult;
    try {
      result = await this.planningStep(this.port(), this.env);
    } catch (err) {
      result = failedStep(this.sql, err, this.clock(), this.retentionMs());
    }
    followStep(this.sql, result, wakeSeqAtStart, this.clock());
    this.announce();
  }

  /** Waits until the webhook attempts running now have finished (tests, diagnostics). */
  async deliveriesSettled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /**
   * Starts every due webhook delivery that is not already in flight. Each attempt is counted
   * and leased before it starts (webhooks/outbox.ts `beginAttempt`), and records its result
   * and sets the alarm for what is due next when it ends.
   */
  private startDeliveries(now: number): void {
    const due = dueDeliveries(this.sql, now, new Set(this.inFlight.keys()));
    if (due.length === 0) return;
    const target = this.webhookTarget().webhook;
    for (const delivery of due) {
      if (target === null) {
        this.drop(delivery, "PLANPORT_WEBHOOK_URL is no longer set");
      } else if (budgetSpent(delivery)) {
        this.drop(delivery, `its last attempt to ${originOf(target.url)} never reported back`);
      } else {
        const attempt = beginAttempt(this.sql, delivery, now);
        const run = sendWebhook(this.webhookFetch, target, delivery, this.clock)
          .then(async (result) => {
            if (!hasSchema(this.sql)) return; // purged meanwhile
            const settled = settleAttempt(this.sql, delivery.seq, attempt, result, this.clock());
            if (settled.kind === "dropped") this.logDropped(delivery, attempt, settled.reason);
            if (settled.kind === "gone")
              console.warn(
                `planport: webhook ${delivery.id} answered 410 Gone by ${originOf(target.url)}; not sent again.`,
              );
            await this.scheduleAlarm();
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
    dropDelivery(this.sql, delivery.seq, reason);
    this.logDropped(delivery, delivery.attempts, reason);
  }

  private logDropped(delivery: Delivery, attempts: number, reason: string): void {
    console.error(
      `planport: webhook ${delivery.id} (${delivery.type}) dropped after ${attempts} attempt(s): ${reason}.`,
    );
  }

  /** Records the webhook events of the change just made, in the caller's transaction. */
  private announce(): void {
    announceChanges(this.sql, this.clock(), this.webhookTarget());
  }

  /**
   * Keeps the base of later webhooks' review links at the origin of the requester's latest
   * request (webhooks/outbox.ts `rememberOrigin`; DESIGN.md "Review links"). Writes only when it
   * changed. Only the requester's own token counts: an approver's request, like a review-link
   * holder's, could otherwise send a forged `Host` and point the links that receivers get —
   * which carry the decision key — at a host of their choosing.
   */
  private rememberOrigin(role: Role, origin: string): void {
    if (role.kind !== "requester" || origin === "") return;
    this.storedOrigin ??= readAnnounced(this.sql)?.origin;
    if (origin === this.storedOrigin) return;
    rememberOrigin(this.sql, origin);
    this.storedOrigin = origin;
  }

  /** {@link announce} after a change that succeeded; the result passes through. */
  private announcing<T extends { ok: boolean }>(result: T): T {
    if (result.ok) this.announce();
    return result;
  }

  /** The session ended since `before` was read: its snapshot may go (snapshot-release.ts). */
  private async releaseIfEnded(before: SessionRow): Promise<void> {
    const after = readRow(this.sql);
    if (releasesSnapshot(before, after, this.sql)) await releaseSnapshot(this.env, after);
  }

  private async purge(row: SessionRow): Promise<void> {
    await this.env.OWNERS.get(this.env.OWNERS.idFromName(row.owner)).dropSession(row.owner, row.id);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.activity.forget();
    this.storedOrigin = undefined;
    this.identity = undefined;
  }

  /** Who the session belongs to and who may see it (cached); null when there is no session. */
  private loadIdentity(): Identity | null {
    if (this.identity === undefined)
      this.identity = hasSchema(this.sql) ? readIdentity(this.sql) : null;
    return this.identity;
  }

  /**
   * How `access` may act on the session, with the row; null answers 404. Notes nobody: for
   * reads made on someone else's behalf (a list, a sibling's review page). A person's own
   * request goes through {@link visit}.
   */
  private allowed(access: Access): Allowed | null {
    const identity = this.loadIdentity();
    const role = identity === null ? null : roleOf(identity, access);
    const row = role === null ? null : readRow(this.sql);
    return row === null || role === null || identity === null ? null : { row, role, identity };
  }

  /** {@link allowed}, for a request about this session itself: notes who came (activity.ts). */
  private visit(access: Access): Allowed | null {
    const allowed = this.allowed(access);
    if (allowed !== null) this.activity.personSeen(allowed.identity, allowed.role);
    return allowed;
  }

  /**
   * The session no longer waits for its approvers: drop it from their owner indexes now (their
   * listing would drop it too, when it reads the session; see owner/sessions.ts `listAwaiting`).
   */
  private async dropAwaiting(team: ReturnType<typeof readTeam>): Promise<void> {
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

  /** The session as `role` sees it (the requester when not given: creation, webhooks). */
  private view(origin: string, role: Role | null = null): SessionResult<Session> {
    const row = readRow(this.sql);
    const team = teamView(this.sql, role === null ? "requester" : roleName(role));
    if (row === null || team === null) return NOT_FOUND;
    return ok(sessionView(this.activity.applyTo(row), pendingWait(this.sql), origin, team));
  }

  private snapshotOf(row: SessionRow): SnapshotFiles {
    return row.snapshot_id === null
      ? NO_SNAPSHOT
      : openSnapshot(this.env.SNAPSHOTS, row.owner, row.snapshot_id);
  }

  private retentionMs(): number {
    return configOf(this.env).retentionMs;
  }

  private scheduleAlarm(): Promise<void> {
    const row = readRow(this.sql);
    return scheduleAlarm(
      this.ctx.storage,
      row && this.activity.applyTo(row),
      nextDeliveryAt(this.sql),
      configOf(this.env).idleMs,
    );
  }
}

/** A request the session object let through: the row, the caller's role, the identity. */
interface Allowed {
  row: SessionRow;
  role: Role;
  identity: Identity;
}
