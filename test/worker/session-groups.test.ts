import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { CLAIM_CHECK_AFTER_MS } from "../../src/owner/group-choices.ts";
import type { OwnerIndex } from "../../src/owner/owner-index.ts";
import type { Event, Session, SessionList } from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import {
  ALICE,
  api,
  BOB,
  createDrivenSession,
  errorCode,
  openPlan,
  ownerObject,
  PLAN_CALL,
  sessionObject,
} from "../support/worker/sessions.ts";

/**
 * Best-of-N groups on the real session and owner-index Durable Objects: deciding one session of
 * a group (approve or teleport) archives the others as superseded — once each, whatever races
 * with it — and a crash between the decision and the superseding still supersedes.
 */

const SUPERSEDED = { kind: "terminated", subtype: "superseded" };

function newGroup(): string {
  return `g-${crypto.randomUUID().slice(0, 8)}`;
}

/** A group of `n` sessions of ALICE, each with its plan open for review and a terminal polling. */
async function groupWithPlans(n: number, group = newGroup()): Promise<Session[]> {
  const sessions: Session[] = [];
  for (let i = 0; i < n; i++) {
    const s = await createDrivenSession(ALICE.token, { title: `attempt ${i + 1}`, group });
    await openPlan(s.id, `# Plan ${i + 1}\n\n1. Step of attempt ${i + 1}.\n`);
    // A bearer-token events poll: the terminal that a teleport goes to.
    await api.events(ALICE, s.id);
    sessions.push(s);
  }
  return sessions;
}

function teleport(id: string): Promise<Response> {
  return api.call("POST", `/v1/sessions/${id}/decision`, ALICE, {
    json: { tool_use_id: PLAN_CALL, decision: "teleport" },
  });
}

function archivedResults(events: readonly Event[]): Event[] {
  return events.filter((e) => e.type === "result" && e.subtype === "archived");
}

async function expectSuperseded(id: string): Promise<void> {
  const session = await api.getSession(ALICE, id);
  expect(session).toMatchObject({ status: "archived", phase: "done", outcome: SUPERSEDED });
  const events = await api.allEvents(ALICE, id);
  expect(archivedResults(events)).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "result", subtype: "archived" });
}

async function listGroup(auth: { token: string }, group: string): Promise<SessionList> {
  const res = await api.call("GET", `/v1/sessions?group=${group}&limit=10`, auth);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionList;
}

/** Runs the owner index's alarm as if `aheadMs` had passed (its clock is a seam). */
async function runOwnerAlarmAhead(owner: string, aheadMs: number): Promise<void> {
  const stub = ownerObject(owner);
  await runInDurableObject(stub, (index: OwnerIndex) => {
    index.clock = () => Date.now() + aheadMs;
  });
  await runDurableObjectAlarm(stub);
  await runInDurableObject(stub, (index: OwnerIndex) => {
    index.clock = () => Date.now();
  });
}

describe("best-of-N groups", () => {
  it("teleporting one of a group of 3 supersedes the two others: exact outcome, one result/archived each", async () => {
    const [chosen, b, c] = await groupWithPlans(3);
    const res = await teleport(chosen!.id);
    expect(res.status).toBe(200);
    expect(await api.getSession(ALICE, chosen!.id)).toMatchObject({
      status: "archived",
      outcome: { kind: "teleport", execution_target: "local" },
    });
    await expectSuperseded(b!.id);
    await expectSuperseded(c!.id);
    // Superseding again (a retry after a lost answer) changes nothing.
    await sessionObject(b!.id).supersede(chosen!.id);
    await expectSuperseded(b!.id);
    // A superseded sibling cannot be decided any more.
    const late = await teleport(c!.id);
    expect(late.status).toBe(409);
    expect(await errorCode(late)).toBe("already_decided");
  });

  it("two siblings teleported at the same moment: one is chosen, the other refused and superseded", async () => {
    const [a, b, c] = await groupWithPlans(3);
    const answers = await Promise.all([teleport(a!.id), teleport(b!.id)]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    const loser = answers[0]!.status === 409 ? a! : b!;
    const winner = loser === a ? b! : a!;
    expect(await errorCode(answers.find((r) => r.status === 409)!)).toBe("already_decided");
    expect((await api.getSession(ALICE, winner.id)).outcome).toMatchObject({ kind: "teleport" });
    await expectSuperseded(loser.id);
    await expectSuperseded(c!.id);
    // The loser's feed holds no decision at all: its plan was never teleported.
    const loserEvents = await api.allEvents(ALICE, loser.id);
    expect(loserEvents.some((e) => e.type === "user" && e.decision !== undefined)).toBe(false);
  });

  it("lists a group's sessions, newest first, for its owner only", async () => {
    const group = newGroup();
    const sessions = await groupWithPlans(3, group);
    await createDrivenSession(ALICE.token, { group: newGroup() });
    const listed = await listGroup(ALICE, group);
    expect(listed.data.map((s) => s.id)).toEqual(sessions.map((s) => s.id).reverse());
    expect(listed.has_more).toBe(false);
    // Another owner's group of the same name is another group.
    expect((await listGroup(BOB, group)).data).toEqual([]);
    const bad = await api.call("GET", "/v1/sessions?group=Not%20A%20Group", ALICE);
    expect(bad.status).toBe(400);
  });

  it("refuses a new session in a group that already chose its plan", async () => {
    const group = newGroup();
    const [chosen] = await groupWithPlans(2, group);
    expect((await teleport(chosen!.id)).status).toBe(200);
    const res = await api.call("POST", "/v1/sessions", ALICE, {
      json: { prompt: "one more attempt", group },
    });
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("already_decided");
  });

  it("a crash between the decision and the superseding still supersedes (the owner index's alarm)", async () => {
    const [chosen, b, c] = await groupWithPlans(3);
    const CRASH = "crash right after the decision committed";
    await runInDurableObject(sessionObject(chosen!.id), (object: SessionObject, state) => {
      object.settleGroup = async () => state.abort(CRASH);
    });
    // The object is reset mid-request: the caller gets a 500, the decision is on disk.
    expect((await teleport(chosen!.id)).status).toBe(500);
    // The decision committed before the crash; the siblings are still open.
    expect((await api.getSession(ALICE, chosen!.id)).outcome).toMatchObject({ kind: "teleport" });
    expect((await api.getSession(ALICE, b!.id)).status).not.toBe("archived");

    await runOwnerAlarmAhead(await ownerIdOf(ALICE.token), CLAIM_CHECK_AFTER_MS + 1_000);
    await expectSuperseded(b!.id);
    await expectSuperseded(c!.id);
    expect((await api.getSession(ALICE, chosen!.id)).outcome).toMatchObject({ kind: "teleport" });
  });

  it("a claim whose decision never committed is dropped, and the group stays open", async () => {
    const [a, b] = await groupWithPlans(2);
    const owner = await ownerIdOf(ALICE.token);
    // What a session that crashed between its claim and its decision leaves behind.
    expect(await ownerObject(owner).claimGroup(a!.id)).toMatchObject({ kind: "won" });
    const refused = await teleport(b!.id);
    expect(refused.status).toBe(409);
    expect(await errorCode(refused)).toBe("already_decided");

    await runOwnerAlarmAhead(owner, CLAIM_CHECK_AFTER_MS + 1_000);
    expect((await teleport(b!.id)).status).toBe(200);
    await expectSuperseded(a!.id);
  });

  it("a rejection does not decide the group", async () => {
    const [a, b] = await groupWithPlans(2);
    await api.decide(ALICE, a!.id, {
      tool_use_id: PLAN_CALL,
      decision: "reject",
      feedback: "Say how it is tested.",
    });
    expect((await api.getSession(ALICE, b!.id)).status).toBe("requires_action");
    expect((await teleport(b!.id)).status).toBe(200);
    await expectSuperseded(a!.id);
  });
});
