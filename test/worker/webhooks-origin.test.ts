import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../src/session/session-object.ts";
import type { WebhookPayload } from "../../src/session/webhooks.ts";
import { readAnnounced } from "../../src/session/webhooks-outbox.ts";
import { ApiClient } from "../support/api-client.ts";
import {
  ALICE,
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
 * back on another port. A review-link holder's request never moves it.
 */

const HOOK = { url: "https://hooks.example.test/origin", secret: "origin-webhook-secret-01" };
/** The same worker reached on another address, as after an embedded-worker restart. */
const MOVED = "http://127.0.0.1:48123";
const FORGED = "http://attacker.example";

const at = (base: string) => new ApiClient((request) => exports.default.fetch(request), base);

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
