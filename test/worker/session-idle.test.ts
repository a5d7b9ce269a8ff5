import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { configOf, DEFAULT_IDLE_DAYS } from "../../src/config.ts";
import type { Event, Session } from "../../src/protocol/index.ts";
import { idleDueAt } from "../../src/session/alarm.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { readRow } from "../../src/session/session-row.ts";
import type { WebhookPayload } from "../../src/webhooks/events.ts";
import { listDeliveries } from "../../src/webhooks/outbox.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  openPlan,
  openQuestion,
  sessionObject,
  withPort,
} from "../support/worker/sessions.ts";

/**
 * The idle archive (DESIGN.md "Retention"): a session that never ended and saw no activity for
 * PLANPORT_IDLE_DAYS is archived exactly as a stop does, announced through the webhook outbox,
 * and purged on the usual retention. The session object's clock seam stands in for the days.
 */

const DAY_MS = 86_400_000;
const IDLE_MS = configOf(env).idleMs;
const RETENTION_MS = configOf(env).retentionMs;
const HOOK = { url: "https://hooks.example.test/idle", secret: "idle-webhook-secret-0123" };

/** Sets the session object's clock to the absolute time `atMs`. */
async function setClock(id: string, atMs: number): Promise<void> {
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.clock = () => atMs;
  });
}

/** Runs the alarm's work at the object's clock and waits for the webhook attempts it started. */
async function runAlarmAt(id: string, atMs: number): Promise<void> {
  await setClock(id, atMs);
  await runInDurableObject(sessionObject(id), async (object: SessionObject) => {
    await object.alarm();
    await object.deliveriesSettled();
  });
}

/**
 * Runs the alarm once at the real time, as the end of the engine step that opened a wait
 * would: the driven sessions' port changes do not set the alarm themselves.
 */
async function settleAlarm(id: string): Promise<void> {
  await runInDurableObject(sessionObject(id), (object: SessionObject) => object.alarm());
}

function alarmOf(id: string): Promise<number | null> {
  return runInDurableObject(sessionObject(id), (_o: SessionObject, state) =>
    state.storage.getAlarm(),
  );
}

function keyOf(url: string | undefined): string {
  return new URL(url ?? "").searchParams.get("key") ?? "";
}

/** The share link: its reads are nobody (they never move the idle time), so tests look with it. */
function shareLink(session: Session): { reviewKey: string } {
  return { reviewKey: keyOf(session.share_url) };
}

/** The session as the share link sees it. */
function look(session: Session): Promise<Session> {
  return api.getSession(shareLink(session), session.id);
}

/** Every event, read with the share link. */
async function eventsOf(session: Session): Promise<Event[]> {
  return api.allEvents(shareLink(session), session.id);
}

/** What an open review page does: loads, then polls the session and its feed. */
async function openReviewPage(session: Session, key: string): Promise<void> {
  const page = await api.call("GET", `/review/${session.id}?key=${key}`);
  expect(page.status).toBe(200);
  await page.text();
  await api.getSession({ reviewKey: key }, session.id);
  await api.events({ reviewKey: key }, session.id, { limit: 1000 });
}

function storedSeenAt(id: string): Promise<number | null> {
  return runInDurableObject(
    sessionObject(id),
    (_o: SessionObject, state) => readRow(state.storage.sql)?.person_seen_at ?? null,
  );
}

function lastActivity(session: Session): number {
  const polled = session.terminal_polled_at ? Date.parse(session.terminal_polled_at) : 0;
  return Math.max(Date.parse(session.updated_at), polled);
}

describe("idle sessions", () => {
  it("uses 30 days unless PLANPORT_IDLE_DAYS says otherwise", () => {
    expect(DEFAULT_IDLE_DAYS).toBe(30);
    expect(IDLE_MS).toBe(DEFAULT_IDLE_DAYS * DAY_MS);
  });

  it("archives a plan nobody reviews after the idle time, as a stop does, sends the webhook, then purges it on retention", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n\nNobody will review this.\n");
    await settleAlarm(session.id);
    const sent: WebhookPayload[] = [];
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => {
      object.webhookTarget = () => ({ webhook: HOOK, publicUrl: null });
      object.webhookFetch = async (request) => {
        sent.push((await request.json()) as WebhookPayload);
        return new Response("ok");
      };
    });
    const waiting = await look(session);
    expect(waiting.phase).toBe("plan_ready");
    const idleAt = lastActivity(waiting) + IDLE_MS;

    // The one alarm is set for the idle time (nothing else is due for a waiting session).
    expect(await alarmOf(session.id)).toBe(idleAt);

    // A minute before, the alarm changes nothing.
    const before = await eventsOf(waiting);
    await runAlarmAt(session.id, idleAt - 60_000);
    expect(await eventsOf(waiting)).toEqual(before);
    expect((await look(session)).status).toBe("requires_action");
    expect(sent).toEqual([]);

    // At it, the session is archived: the feed ends with result/archived saying why.
    await runAlarmAt(session.id, idleAt);
    const archived = await look(session);
    expect(archived).toMatchObject({
      status: "archived",
      phase: "done",
      outcome: { kind: "terminated", subtype: "archived" },
      pending: null,
    });
    const events = await eventsOf(archived);
    expect(events.filter((e) => e.type === "result" && e.subtype === "archived")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({
      type: "result",
      subtype: "archived",
      is_error: false,
      message: `Archived after ${DEFAULT_IDLE_DAYS} days without activity (PLANPORT_IDLE_DAYS); start a new session to continue.`,
    });

    // The webhook went through the outbox: the phase change and the outcome, delivered.
    const outbox = await runInDurableObject(sessionObject(session.id), (_o, state) =>
      listDeliveries(state.storage.sql),
    );
    expect(outbox.map((d) => [d.type, d.state])).toEqual([
      ["session.phase", "delivered"],
      ["session.outcome", "delivered"],
    ]);
    expect(sent.map((p) => p.type)).toEqual(["session.phase", "session.outcome"]);
    expect(sent[1]?.session).toMatchObject({
      id: session.id,
      status: "archived",
      outcome: { kind: "terminated", subtype: "archived" },
    });

    // The purge is the usual one, the retention time after the archive.
    expect(await alarmOf(session.id)).toBe(idleAt + RETENTION_MS);
    await runAlarmAt(session.id, idleAt + RETENTION_MS - 60_000);
    expect((await look(session)).status).toBe("archived");
    await runAlarmAt(session.id, idleAt + RETENTION_MS);
    expect((await api.call("GET", `/v1/sessions/${session.id}`, ALICE)).status).toBe(404);
    const owner = await ownerIdOf(ALICE.token);
    const index = env.OWNERS.get(env.OWNERS.idFromName(owner));
    expect((await index.list(1000)).ids).not.toContain(session.id);
    expect(await alarmOf(session.id)).toBeNull();
  });

  it("a terminal poll or a message starts the idle time again; a share-link read does not", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, ["Keep the old API?"]);
    await settleAlarm(session.id);
    const start = lastActivity(await look(session));

    // A terminal polls a minute before the idle time: the session is not idle then.
    await setClock(session.id, start + IDLE_MS - 60_000);
    await api.events(ALICE, session.id);
    const polled = await look(session);
    expect(Date.parse(polled.terminal_polled_at ?? "")).toBe(start + IDLE_MS - 60_000);
    // The poll does not set the alarm: the alarm at the old idle time finds nothing due and
    // is set again for the new one.
    expect(await alarmOf(session.id)).toBe(start + IDLE_MS);
    await runAlarmAt(session.id, start + IDLE_MS);
    expect((await look(session)).status).toBe("requires_action");
    const afterPoll = start + IDLE_MS - 60_000 + IDLE_MS;
    expect(await alarmOf(session.id)).toBe(afterPoll);

    // A free-text message later still moves it again (the parked engine step changes nothing).
    await setClock(session.id, afterPoll - 60_000);
    await api.message(ALICE, session.id, { text: "Still here, thinking." });
    await runAlarmAt(session.id, afterPoll);
    const messaged = await look(session);
    expect(messaged.status).toBe("requires_action");
    const afterMessage = lastActivity(messaged) + IDLE_MS;
    expect(afterMessage).toBe(afterPoll - 60_000 + IDLE_MS);
    expect(await alarmOf(session.id)).toBe(afterMessage);

    // Reading the session and its feed with the share link is no activity.
    await setClock(session.id, afterMessage - 60_000);
    await look(session);
    await eventsOf(messaged);
    await runAlarmAt(session.id, afterMessage);
    const archived = await look(session);
    expect(archived.status).toBe("archived");
    expect((await eventsOf(archived)).at(-1)).toMatchObject({
      type: "result",
      subtype: "archived",
    });
  });

  it("a session that was stopped or ended is never archived again for being idle", async () => {
    // Stopped: one result/archived, no idle message; its alarm is the purge.
    const stopped = await createDrivenSession();
    await openPlan(stopped.id, "# Plan\n");
    const archived = await api.archive(ALICE, stopped.id);
    const archivedAt = Date.parse(archived.updated_at);
    expect(await alarmOf(stopped.id)).toBe(archivedAt + RETENTION_MS);
    await runAlarmAt(stopped.id, archivedAt + RETENTION_MS - 60_000);
    const stoppedEvents = await eventsOf(archived);
    const results = stoppedEvents.filter((e) => e.type === "result");
    expect(results).toHaveLength(1);
    expect(results[0]).not.toHaveProperty("message");

    // Ended with an error: its alarm is the purge, and the idle clock is off.
    const ended = await createDrivenSession();
    await withPort(ended.id, (port) =>
      port.endSession("error_during_execution", "The model provider failed."),
    );
    await settleAlarm(ended.id);
    const endedView = await api.getSession(ALICE, ended.id);
    expect(endedView.outcome).toEqual({ kind: "terminated", subtype: "error_during_execution" });
    expect(await alarmOf(ended.id)).toBe(Date.parse(endedView.updated_at) + RETENTION_MS);

    // An idle-archived session whose alarm runs again (a stray call) writes nothing more.
    const idle = await createDrivenSession();
    const idleAt = lastActivity(idle) + IDLE_MS;
    await runAlarmAt(idle.id, idleAt);
    const once = await eventsOf(idle);
    expect(once.at(-1)).toMatchObject({ type: "result", subtype: "archived" });
    await runInDurableObject(sessionObject(idle.id), (object: SessionObject) => object.alarm());
    expect(await runDurableObjectAlarm(sessionObject(idle.id))).toBe(true);
    expect(await eventsOf(idle)).toEqual(once);
  });

  it("the decision link's page and its polls, and a comment, keep a waiting plan alive; the share link's page, a list and a group's page do not", async () => {
    const session = await createDrivenSession(ALICE.token, { group: "idle-pair" });
    const sibling = await createDrivenSession(ALICE.token, { group: "idle-pair" });
    await openPlan(session.id, "# Plan\n\nUnder review.\n");
    await settleAlarm(session.id);
    const decisionKey = keyOf(session.review_url);
    const shareKey = keyOf(session.share_url);
    let due = lastActivity(await look(session)) + IDLE_MS;
    expect(await alarmOf(session.id)).toBe(due);

    // The review page of the decision link is opened a minute before the idle time (it also
    // reads the group's other session, on this page's behalf).
    const opened = due - 60_000;
    await setClock(session.id, opened);
    await setClock(sibling.id, opened);
    await openReviewPage(session, decisionKey);
    await runAlarmAt(session.id, due);
    expect((await look(session)).status).toBe("requires_action");
    // That is nobody at the sibling: it goes idle on its own clock.
    await runAlarmAt(sibling.id, lastActivity(await look(sibling)) + IDLE_MS);
    expect((await look(sibling)).status).toBe("archived");

    // The page keeps polling while its tab is visible: the idle time keeps moving.
    due = opened + IDLE_MS;
    expect(await alarmOf(session.id)).toBe(due);
    const polled = due - 60_000;
    await setClock(session.id, polled);
    await api.getSession({ reviewKey: decisionKey }, session.id);
    await api.events({ reviewKey: decisionKey }, session.id);
    await runAlarmAt(session.id, due);
    expect((await look(session)).status).toBe("requires_action");

    // A comment left with the share link is someone too (a forgotten tab never writes one).
    due = polled + IDLE_MS;
    const commented = due - 60_000;
    await setClock(session.id, commented);
    const comment = await api.call(
      "POST",
      `/v1/sessions/${session.id}/comments`,
      shareLink(session),
      {
        json: { quote: "Under review.", text: "Mention the rollback." },
      },
    );
    expect(comment.status).toBe(201);
    await runAlarmAt(session.id, due);
    expect((await look(session)).status).toBe("requires_action");

    // Nobody: the share link's page and its polls, and the owner's list. At the idle time the
    // plan is archived, as a stop would.
    due = commented + IDLE_MS;
    await setClock(session.id, due - 60_000);
    await openReviewPage(session, shareKey);
    await api.listSessions(ALICE, { limit: 100 });
    await runAlarmAt(session.id, due);
    const archived = await look(session);
    expect(archived).toMatchObject({ status: "archived", outcome: { kind: "terminated" } });
    expect((await eventsOf(archived)).at(-1)).toMatchObject({
      type: "result",
      subtype: "archived",
      message: expect.stringContaining("PLANPORT_IDLE_DAYS"),
    });
  });

  it("a person's polls write their time at most every 10 s: the write stays off most polls", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    const decisionKey = { reviewKey: keyOf(session.review_url) };
    const t0 = Date.now() + 1_000;
    expect(await storedSeenAt(session.id)).toBeNull();
    await setClock(session.id, t0);
    await api.events(decisionKey, session.id);
    expect(await storedSeenAt(session.id)).toBe(t0);
    // Two seconds later (the page's next poll) nothing is written, yet the idle clock knows.
    await setClock(session.id, t0 + 2_000);
    await api.events(decisionKey, session.id);
    expect(await storedSeenAt(session.id)).toBe(t0);
    await runAlarmAt(session.id, t0 + IDLE_MS + 1_000);
    expect((await look(session)).status).toBe("requires_action");
    // Ten seconds after the stored time the next poll writes again.
    await setClock(session.id, t0 + 10_000);
    await api.events(decisionKey, session.id);
    expect(await storedSeenAt(session.id)).toBe(t0 + 10_000);
  });

  it("the idle time follows the latest of the last change, terminal poll and person's request, and stops once ended", () => {
    const row = {
      archived_at: null,
      ended_subtype: null,
      updated_at: 1_000,
      terminal_polled_at: null,
      person_seen_at: null,
    };
    expect(idleDueAt(row, 10 * DAY_MS)).toBe(1_000 + 10 * DAY_MS);
    expect(idleDueAt({ ...row, terminal_polled_at: 5_000 }, DAY_MS)).toBe(5_000 + DAY_MS);
    expect(idleDueAt({ ...row, terminal_polled_at: 500 }, DAY_MS)).toBe(1_000 + DAY_MS);
    expect(idleDueAt({ ...row, person_seen_at: 7_000 }, DAY_MS)).toBe(7_000 + DAY_MS);
    expect(idleDueAt({ ...row, terminal_polled_at: 9_000, person_seen_at: 7_000 }, DAY_MS)).toBe(
      9_000 + DAY_MS,
    );
    expect(idleDueAt({ ...row, archived_at: 2_000 }, DAY_MS)).toBeNull();
    expect(idleDueAt({ ...row, ended_subtype: "error_max_turns" }, DAY_MS)).toBeNull();
  });
});
