import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { knownOwners, ownerIdOf } from "../../src/api/auth.ts";
import { createSession } from "../../src/owner/sessions.ts";
import type { Session } from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import type { WebhookPayload } from "../../src/webhooks/events.ts";
import { readAnnounced } from "../../src/webhooks/outbox.ts";
import { ApiClient } from "../support/api-client.ts";
import {
  ALICE,
  BOB,
  createDrivenSession,
  ORIGIN,
  openPlan,
  PLAN_CALL,
  sessionObject,
} from "../support/worker/sessions.ts";

/**
 * The review link in a webhook (DESIGN.md "Webhooks"): a delivery has no request of its own, so
 * its link is built on PLANPORT_PUBLIC_URL when set, else on the origin of the owner's latest
 * request — not the one the session was created on, which is gone once the embedded worker came
 * back on another port. A review-link holder's request never moves it, nor an approver's.
 */

const HOOK = { url: "https://hooks.example.test/origin", secret: "origin-webhook-secret-01" };
/** The same worker reached on another address, as after an embedded-worker restart. */
const MOVED = "http://127.0.0.1:48123";
const FORGED = "http://attacker.example";

const at = (base: string) => new ApiClient((request) => exports.default.fetch(request), base);

/** Labelled tokens, so that bob can be named as an approver (docs/PROTOCOL.md "Team review"). */
const TEAM_TOKENS = "alice:token-alice,bob:token-bob";
const teamApp = createApp();
const teamAt = (base: string) =>
  new ApiClient(
    async (request) => await teamApp.fetch(request, { ...env, PLANPORT_TOKENS: TEAM_TOKENS }),
    base,
  );

/** A session of alice's that needs bob's approval; its loop is not started (the test drives it). */
async function awaitingBob(): Promise<Session> {
  const known = await knownOwners(TEAM_TOKENS);
  const created = await createSession(
    { ...env, PLANPORT_TOKENS: TEAM_TOKENS },
    await ownerIdOf(ALICE.token),
    { prompt: "Add OAuth login", approvers: ["bob"] },
    ORIGIN,
    { autostart: false, team: { label: "alice", known } },
  );
  if (!created.ok) throw new Error(`${created.error.code}: ${created.error.message}`);
  await runInDurableObject(sessionObject(created.value.id), (object: SessionObject) => {
    object.planningStep = async () => ({ next: "idle" });
  });
  return created.value;
}

async function connect(id: string, publicUrl: string | null): Promise<WebhookPayload[]> {
  const sent: WebhookPayload[] = [];
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.webhookTarget = () => ({ webhook: HOOK, publicUrl });
    object.webhookFetch = async (request) => {
      sent.push((await request.json()) as WebhookPayload);
      return new Response("ok");
    };
  });
  return sent;
}

async function deliver(id: string): Promise<void> {
  await runInDurableObject(sessionObject(id), async (object: SessionObject) => {
    await object.alarm();
    await object.deliveriesSettled();
  });
}

function storedOrigin(id: string): Promise<string | undefined> {
  return runInDurableObject(
    sessionObject(id),
    (_o: SessionObject, state) => readAnnounced(state.storage.sql)?.origin,
  );
}

describe("webhook review links", () => {
  it("follow the owner's latest request; a review-key request on another host changes nothing", async () => {
    const session = await createDrivenSession();
    expect(await storedOrigin(session.id)).toBe(ORIGIN);
    await openPlan(session.id, "# Plan\n");
    const sent = await connect(session.id, null);

    // The owner reads the session on the worker's new address (as `planport list` would).
    const moved = await at(MOVED).getSession(ALICE, session.id);
    expect(moved.review_url.startsWith(`${MOVED}/review/${session.id}?key=`)).toBe(true);
    expect(await storedOrigin(session.id)).toBe(MOVED);

    // A review-link holder's request with a forged Host: its own answer uses that host, but
    // what receivers are sent does not.
    const key = new URL(moved.review_url).searchParams.get("key") ?? "";
    const forged = await at(FORGED).getSession({ reviewKey: key }, session.id);
    expect(forged.review_url.startsWith(FORGED)).toBe(true);
    expect(await storedOrigin(session.id)).toBe(MOVED);

    // The decision's webhooks carry the new address.
    await at(MOVED).decide(ALICE, session.id, {
      tool_use_id: PLAN_CALL,
      decision: "reject",
      feedback: "Split the migration.",
    });
    await deliver(session.id);
    expect(sent.length).toBeGreaterThan(0);
    for (const payload of sent) {
      expect(payload.session.review_url).toBe(moved.review_url);
    }
  });

  it("never follow an approver's request on a forged host; receivers keep the owner's link", async () => {
    const session = await awaitingBob();
    await openPlan(session.id, "# Plan\n");
    const sent = await connect(session.id, null);
    const decisionKey = new URL(session.review_url).searchParams.get("key") ?? "";

    // The approver reads, lists and polls on a forged host: none of it is remembered.
    const forged = await teamAt(FORGED).getSession(BOB, session.id);
    expect(forged.your_role).toBe("approver");
    await teamAt(FORGED).events(BOB, session.id);
    await teamAt(FORGED).call("GET", "/v1/sessions?awaiting=me", BOB);
    // Keep planning is open to approvers: a change, made on the forged host.
    await teamAt(FORGED).decide(BOB, session.id, {
      tool_use_id: PLAN_CALL,
      decision: "reject",
      feedback: "Split the migration.",
    });
    expect(await storedOrigin(session.id)).toBe(ORIGIN);

    // The webhooks of that change carry the owner's link, on the owner's origin.
    await deliver(session.id);
    expect(sent.length).toBeGreaterThan(0);
    for (const payload of sent) {
      expect(payload.session.review_url).toBe(
        `${ORIGIN}/review/${session.id}?key=${encodeURIComponent(decisionKey)}`,
      );
    }
  });

  it("use PLANPORT_PUBLIC_URL when it is set, whatever address the requests came on", async () => {
    const session = await createDrivenSession();
    await openPlan(session.id, "# Plan\n");
    const sent = await connect(session.id, "https://planport.example.test");
    await at(MOVED).archive(ALICE, session.id);
    await deliver(session.id);
    expect(sent.map((p) => p.type)).toEqual(["session.phase", "session.outcome"]);
    for (const payload of sent) {
      expect(payload.session.review_url).toMatch(
        new RegExp(`^https://planport\\.example\\.test/review/${session.id}\\?key=`),
      );
    }
  });
});
