import { DurableObject } from "cloudflare:workers";
import { cachedConfig, configOf } from "../config.ts";
import type { Env } from "../env.ts";
import { step } from "../planner/loop.ts";
import type { SessionPort, StepResult } from "../planner/port.ts";
import type {
  Decision,
  FeedPage,
  Message,
  PlanFile,
  Session,
  Suggestion,
} from "../protocol/index.ts";
import { ok } from "../protocol/index.ts";
import { type AnnounceTarget, nextDeliveryAt } from "../webhooks/outbox.ts";
import type { WebhookFetch } from "../webhooks/send.ts";
import { restoreAlarm } from "./alarm.ts";
import { commandsOf, executionOf } from "./commands.ts";
import { SessionCore } from "./core.ts";
import * as deciding from "./deciding.ts";
import { pendingWait } from "./decisions/waits.ts";
import { overlayDiff } from "./files/overlay.ts";
import { readPlan } from "./files/plan-file.ts";
import { afterDecision, hasChosenPlan, loadGroup } from "./groups.ts";
import { failedStep, followStep } from "./loop-driver.ts";
import { type NewSession, writeNewSession } from "./new-session.ts";
import { SessionPortAdapter } from "./port-adapter.ts";
import {
  feedAfter,
  groupSeenBy,
  planOrEmpty,
  planRevision,
  reviewDetails,
  reviewState,
} from "./reading.ts";
import { type Access, NOT_FOUND, type SessionResult } from "./result.ts";
import type { GroupMember, ReviewDetails, ReviewState, SessionGroup, SessionRpc } from "./rpc.ts";
import { hasSchema, migrate } from "./schema.ts";
import { hasEnded, readRow, updateRow } from "./session-row.ts";
import { listSuggestions } from "./team/store.ts";

/**
 * One planning session (DESIGN.md "Session Durable Object"): its row, event log, decisions,
 * waits, plan file and workspace overlay in SQLite, and the agent loop driven by its alarm.
 * Every RPC method takes an {@link Access}, checks it with the gate (gate.ts), and answers a
 * {@link Result}; the changes it makes are deciding.ts's, what they share core.ts's. Every
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
  /** The session's storage and what every method shares (core.ts). */
  private readonly core: SessionCore;
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.core = new SessionCore(ctx.storage, env, {
      clock: () => this.clock(),
      webhookTarget: () => this.webhookTarget(),
      webhookFetch: (request) => this.webhookFetch(request),
    });
    this.sql = ctx.storage.sql;
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
      this.core.webhooks.announce(input.origin);
    });
    this.core.gate.forget();
    await this.core.scheduleAlarm();
    return this.core.view(input.origin);
  }

  /** The session as the API shows it. */
  get(access: Access, origin: string): SessionResult<Session> {
    const visit = this.core.gate.visit(access);
    if (visit === null) return NOT_FOUND;
    this.core.rememberOrigin(visit.role, origin);
    return this.core.view(origin, visit.role);
  }

  /**
   * The session as a list shows it (`planport list`, `watch`, `--awaiting-me`): {@link get}
   * without noting a person here — `watch` reads every listed session every 3 s, and would
   * otherwise keep every one of them from ever going idle.
   */
  listed(access: Access, origin: string): SessionResult<Session> {
    const allowed = this.core.gate.allowed(access);
    if (allowed === null) return NOT_FOUND;
    this.core.rememberOrigin(allowed.role, origin);
    return this.core.view(origin, allowed.role);
  }

  /**
   * The session and its plan (null before the planner wrote one) as the review page of a
   * sibling in its best-of-N group shows them: read on behalf of that page, so no person is
   * noted here (a share-link tab of one session must not keep its siblings alive).
   */
  groupMember(access: Access, origin: string): SessionResult<GroupMember> {
    const allowed = this.core.gate.allowed(access);
    if (allowed === null) return NOT_FOUND;
    const session = this.core.view(origin, allowed.role);
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
    const found = this.core.gate.roleOf(access);
    if (found === null) return NOT_FOUND;
    const page = feedAfter(this.sql, afterId, limit);
    if (!page.ok) return page;
    // Only the requester's terminal receives a teleport: an approver's poll is not one, but
    // it is a person here, as is the decision link's page polling (activity.ts).
    const { identity, role } = found;
    if (role.kind === "requester") this.core.activity.terminalPolled(identity);
    else this.core.activity.personSeen(identity, role);
    return page;
  }

  /**
   * Everything the review page shows, in one call: the session, the plan, the whole log and
   * the decisions. `origin` builds the review link; relative when absent.
   */
  review(access: Access, origin = ""): SessionResult<ReviewState> {
    const visit = this.core.gate.visit(access);
    if (visit === null) return NOT_FOUND;
    const { row, role } = visit;
    const session = this.core.view(origin, role);
    if (!session.ok) return session;
    return ok(reviewState(this.sql, row, session.value));
  }

  /**
   * The plan file (revision 0 and empty content before the planner wrote one), or one stored
   * `revision` of it (404 `revision_not_found` when there is no such revision).
   */
  plan(access: Access, revision?: number): SessionResult<PlanFile> {
    const row = this.core.gate.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    if (revision === undefined) return ok(planOrEmpty(this.sql, row));
    return planRevision(this.sql, row, revision);
  }

  /**
   * What the review page shows beyond {@link review}: every stored plan revision without its
   * text, the text of the `wanted` ones (the page asks for at most the two it shows or
   * compares), and the session's deadlines (the ask timeout's answer, the purge).
   */
  reviewDetails(access: Access, wanted: readonly number[]): SessionResult<ReviewDetails> {
    const row = this.core.gate.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    return ok(reviewDetails(this.sql, row, wanted));
  }

  /** The workspace overlay as a unified diff against the snapshot; empty when nothing changed. */
  async changes(access: Access): Promise<SessionResult<string>> {
    const row = this.core.gate.visit(access)?.row ?? null;
    if (row === null) return NOT_FOUND;
    return ok(await overlayDiff(this.sql, this.core.snapshotOf(row)));
  }

  /** An answer to the open question, or free text (DESIGN.md "Messages"). */
  async message(access: Access, body: Message, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.core.gate.visit(access);
    return allowed === null ? NOT_FOUND : deciding.sendMessage(this.core, allowed, body, origin);
  }

  /** Decides the pending ExitPlanMode (deciding.ts `decide`). */
  async decide(access: Access, body: Decision, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.core.gate.visit(access);
    if (allowed === null) return NOT_FOUND;
    return deciding.decide(this.core, allowed, body, origin, this.settleGroup);
  }

  /**
   * A sibling of this session's group was chosen: archive this one as superseded (idempotent;
   * a session that has ended keeps its ending). Called by the owner index, the group's arbiter.
   */
  supersede(chosenId: string): Promise<void> {
    return deciding.supersede(this.core, chosenId);
  }

  /** Whether this session recorded an approval or a teleport (the group arbiter's check). */
  chosenPlan(): boolean {
    return hasSchema(this.sql) && hasChosenPlan(this.sql);
  }

  /** The session's best-of-N group with every member's state and plan; null when in none. */
  async group(access: Access, origin: string): Promise<SessionResult<SessionGroup | null>> {
    const allowed = this.core.gate.visit(access);
    if (allowed === null) return NOT_FOUND;
    const { row, role } = allowed;
    if (row.group_name === null) return ok(null);
    const group = await loadGroup(this.env, row.owner, row.id, origin);
    return ok(groupSeenBy(group, role));
  }

  /** Stops the session for good; idempotent (one `result/archived` event, ever). */
  async archive(access: Access, origin: string): Promise<SessionResult<Session>> {
    const allowed = this.core.gate.visit(access);
    return allowed === null ? NOT_FOUND : deciding.archive(this.core, allowed, origin);
  }

  /** A comment on the plan kept for whoever decides (team review; deciding.ts `suggest`). */
  suggest(access: Access, comment: { quote: string; text: string }): SessionResult<Suggestion[]> {
    const allowed = this.core.gate.visit(access);
    return allowed === null ? NOT_FOUND : deciding.suggest(this.core, allowed, comment);
  }

  /** The suggestions readers left, oldest first. */
  suggestions(access: Access): SessionResult<Suggestion[]> {
    if (this.core.gate.visit(access) === null) return NOT_FOUND;
    return ok(listSuggestions(this.sql));
  }

  /** The session as the planning engine sees it. */
  port(): SessionPort {
    const row = hasSchema(this.sql) ? readRow(this.sql) : null;
    if (row === null) throw new Error("This Durable Object holds no session.");
    const snapshot = this.core.snapshotOf(row);
    return new SessionPortAdapter(
      this.ctx.storage,
      snapshot,
      this.clock,
      this.core.retentionMs(),
      () => this.core.webhooks.announce(),
      commandsOf(executionOf(this.env, row), row, this.sql, snapshot),
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
        await this.core.purge(row);
        return;
      }
      // Webhooks still to send (the outcome of a session kept for 0 days, say): the purge waits
      // for them, at most their 20-minute retry budget (and one attempt's timeout); the alarm
      // wakes for the next attempt.
      this.core.webhooks.startDeliveries(now);
      await this.ctx.storage.setAlarm(Math.max(now, nextDeliveryAt(this.sql) ?? now));
      return;
    }
    const archivedIdle = this.core.archiveIfIdle(row, now);
    this.core.webhooks.startDeliveries(now);
    const stepDue = row.step_due_at !== null && row.step_due_at <= now;
    const afkDue =
      row.afk_due_at !== null && row.afk_due_at <= now && pendingWait(this.sql) !== null;
    if (!archivedIdle && !hasEnded(row) && (stepDue || afkDue)) {
      await this.runStep(row.wake_seq, afkDue);
    }
    await this.core.scheduleAlarm();
    await this.core.releaseIfEnded(row);
  }

  private async runStep(wakeSeqAtStart: number, afkDue: boolean): Promise<void> {
    if (afkDue) updateRow(this.sql, { afk_due_at: null });
    let result: StepResult;
    try {
      result = await this.planningStep(this.port(), this.env);
    } catch (err) {
      result = failedStep(this.sql, err, this.clock(), this.core.retentionMs());
    }
    followStep(this.sql, result, wakeSeqAtStart, this.clock());
    this.core.webhooks.announce();
  }

  /** Waits until the webhook attempts running now have finished (tests, diagnostics). */
  deliveriesSettled(): Promise<void> {
    return this.core.webhooks.settled();
  }
}
