import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Session } from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { retryDelayMs, signatureOf, type WebhookPayload } from "../../src/webhooks/events.ts";
import { type Delivery, listDeliveries, readAnnounced } from "../../src/webhooks/outbox.ts";
import { eventually } from "../support/eventually.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  openPlan,
  openQuestion,
  PLAN_CALL,
  QUESTION_CALL,
  sessionObject,
} from "../support/worker/sessions.ts";

/**
 * Webhook deliveries on the real session Durable Object: the outbox written with the change,
 * the alarm sending what is due, signatures, retries with the same id and bytes, 410, the
 * 20-minute retry budget, and a receiver that hangs while the alarm goes on. The receiver is a test
 * double of the other side of the network (the object's `webhookFetch` seam); the same
 * deliveries over real HTTP under `wrangler dev` are test/e2e/webhooks.test.ts.
 */

const SECRET = "webhook-secret-for-the-worker-tests";
const URL_ = "https://hooks.example.test/planport";
const YEAR = 365 * 86_400_000;

interface Received {
  id: string;
  signature: string | null;
  body: string;
  payload: WebhookPayload;
}

/** A receiver double: records every request, answers with what `answer` says for it. */
function receiver(answer: (n: number) => Response | Promise<Response> = () => new Response("ok")) {
  const received: Received[] = [];
  const send = async (request: Request): Promise<Response> => {
    const body = await request.text();
    const payload = JSON.parse(body) as WebhookPayload;
    received.push({
      id: payload.id,
      signature: request.headers.get("x-planport-signature"),
      body,
      payload,
    });
    return answer(received.length);
  };
  return { received, send };
}

/**
 * Points the session's webhooks at `send`, with the test's clock. It starts a year ahead, so
 * the alarms the object sets never fire by themselves during the test: {@link deliver} runs
 * the alarm when the test says.
 */
async function connect(
  id: string,
  send: (request: Request) => Promise<Response>,
  clock: { now: number } = { now: Date.now() + YEAR },
): Promise<{ now: number }> {
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.webhookTarget = () => ({ webhook: { url: URL_, secret: SECRET }, publicUrl: null });
    object.webhookFetch = send;
    object.clock = () => clock.now;
  });
  return clock;
}

/** Runs the alarm's work now (the deliveries that are due) and waits for their answers. */
async function deliver(id: string): Promise<void> {
  await runInDurableObject(sessionObject(id), async (object: SessionObject) => {
    await object.alarm();
    await object.deliveriesSettled();
  });
}

function outbox(id: string): Promise<Delivery[]> {
  return runInDurableObject(sessionObject(id), (_o: SessionObject, state) =>
    listDeliveries(state.storage.sql),
  );
}

async function expectSigned(r: Received): Promise<void> {
  expect(r.signature).toBe(await signatureOf(SECRET, r.body));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("webhook deliveries", () => {
  it("announce each phase change and the outcome once, signed, and a poll announces nothing", async () => {
    // Scripted: a planner that can execute remotely, so approve is allowed.
    const session = await createDrivenSession(ALICE.token, {
      planner: "scripted",
      script: [{ content: [{ type: "text", text: "unused: the loop is not started" }] }],
    });
    const { received, send } = receiver();
    await connect(session.id, send);

    // A driven session starts idle (needs_input, announced before the receiver was set).
    await api.message(ALICE, session.id, { text: "Cover the CLI too." });
    await openQuestion(session.id, ["Postgres?"]);
    await api.message(ALICE, session.id, {
      tool_use_id: QUESTION_CALL,
      answers: { "Postgres?": "Yes" },
    });
    await openPlan(session.id, "# Plan\n");
    for (let i = 0; i < 5; i++) {
      await api.events(ALICE, session.id, { limit: 10 });
      await api.getSession(ALICE, session.id);
    }
    await deliver(session.id);
    // Approved, then stopped before the (parked) execution step runs.
    await api.decide(ALICE, session.id, { tool_use_id: PLAN_CALL, decision: "approve" });
    await api.archive(ALICE, session.id);
    await deliver(session.id);

    expect(received.map((r) => [r.payload.type, r.payload.session.phase])).toEqual([
      ["session.phase", "running"],
      ["session.phase", "needs_input"],
      ["session.phase", "running"],
      ["session.phase", "plan_ready"],
      ["session.phase", "executing"],
      ["session.outcome", "executing"],
      ["session.phase", "done"],
    ]);
    const outcome = received[5]?.payload as WebhookPayload;
    expect(outcome.session.outcome).toMatchObject({ kind: "approved" });
    for (const r of received) await expectSigned(r);
    expect(new Set(received.map((r) => r.id)).size).toBe(received.length);
    const stored = await outbox(session.id);
    expect(stored.map((d) => d.state)).toEqual(Array(received.length).fill("delivered"));
    const last = received.at(-1)?.payload.session as Session;
    expect(last.review_url).toMatch(/^http:\/\/planport\.test\/review\/ses_/);
  });

  it("a failed attempt is retried after the backoff with the same id and the same bytes", async () => {
    const session = await createDrivenSession();
    const { received, send } = receiver((n) =>
      n === 1 ? new Response("busy", { status: 503 }) : new Response(null, { status: 204 }),
    );
    const clock = await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await deliver(session.id);
    const [first] = await outbox(session.id);
    expect(first).toMatchObject({
      state: "pending",
      attempts: 1,
      next_attempt_at: clock.now + retryDelayMs(1),
      last_error: "the receiver answered HTTP 503",
    });

    clock.now += retryDelayMs(1) - 1;
    await deliver(session.id);
    expect(received).toHaveLength(1);
    clock.now += 1;
    await deliver(session.id);
    expect(received).toHaveLength(2);
    expect(received[1]?.id).toBe(received[0]?.id);
    expect(received[1]?.body).toBe(received[0]?.body);
    await expectSigned(received[1] as Received);
    expect((await outbox(session.id))[0]).toMatchObject({ state: "delivered", attempts: 2 });
  });

  it("honours Retry-After within the 10-minute cap", async () => {
    const session = await createDrivenSession();
    const { send } = receiver(
      (n) =>
        new Response("slow down", {
          status: 429,
          headers: { "retry-after": n === 1 ? "120" : "86400" },
        }),
    );
    const clock = await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await deliver(session.id);
    expect((await outbox(session.id))[0]?.next_attempt_at).toBe(clock.now + 120_000);
    clock.now += 120_000;
    await deliver(session.id);
    expect((await outbox(session.id))[0]?.next_attempt_at).toBe(clock.now + 600_000);
  });

  it("410 Gone stops the delivery for good", async () => {
    const session = await createDrivenSession();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { received, send } = receiver(() => new Response("gone", { status: 410 }));
    const clock = await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await deliver(session.id);
    clock.now += 3_600_000;
    await deliver(session.id);
    expect(received).toHaveLength(1);
    expect((await outbox(session.id))[0]).toMatchObject({ state: "gone", next_attempt_at: null });
    expect(String(warn.mock.calls[0]?.[0])).toContain("410 Gone");
  });

  it("a receiver answering 503 with Retry-After: 0 is retried with the backoff for 20 minutes, then dropped and logged without the secret", async () => {
    const session = await createDrivenSession();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const clock = { now: Date.now() + YEAR };
    const seenAt: number[] = [];
    const { received, send } = receiver(() => {
      seenAt.push(clock.now);
      return new Response("down", { status: 503, headers: { "retry-after": "0" } });
    });
    await connect(session.id, send, clock);
    await openPlan(session.id, "# Plan\n");
    const start = clock.now;
    // Run the alarm at every time the outbox asks for, as the runtime would, until it gives up.
    for (let runs = 0; runs < 50; runs++) {
      await deliver(session.id);
      const [delivery] = await outbox(session.id);
      if (delivery?.state !== "pending" || delivery.next_attempt_at === null) break;
      clock.now = delivery.next_attempt_at;
    }
    expect(seenAt.map((t) => (t - start) / 1000)).toEqual([0, 10, 30, 70, 150, 310, 630, 1200]);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    expect((await outbox(session.id))[0]).toMatchObject({
      state: "dropped",
      attempts: 8,
      next_attempt_at: null,
      first_attempt_at: start,
    });
    const logged = error.mock.calls.map((c) => c.map(String).join(" ")).join("\n");
    expect(logged).toMatch(
      /webhook whk_\w+ \(session\.phase\) dropped after 8 attempt\(s\): the receiver answered HTTP 503/,
    );
    expect(logged).not.toContain(SECRET);
  });

  it("a receiver that hangs does not hold the alarm: the alarm ends while the attempt is still open", async () => {
    const session = await createDrivenSession();
    let release: (r: Response) => void = () => {};
    const answered = new Promise<Response>((resolve) => {
      release = resolve;
    });
    const { received, send } = receiver(() => answered);
    await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await runInDurableObject(sessionObject(session.id), async (object: SessionObject, state) => {
      await object.alarm();
      // The alarm returned; the receiver gets the request and does not answer.
      await eventually(() => received.length === 1);
      expect(listDeliveries(state.storage.sql)[0]).toMatchObject({
        state: "pending",
        attempts: 1,
      });
      // A second alarm meanwhile does not start the same delivery again.
      await object.alarm();
      expect(received).toHaveLength(1);
      release(new Response("ok"));
      await object.deliveriesSettled();
    });
    expect((await outbox(session.id))[0]).toMatchObject({ state: "delivered", attempts: 1 });
  });

  it("an attempt lost with the object (evicted mid-attempt) is retried after its lease, same id", async () => {
    const session = await createDrivenSession();
    const { received, send } = receiver(() => new Promise<Response>(() => {}));
    const clock = await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => object.alarm());
    const [leased] = await outbox(session.id);
    expect(leased).toMatchObject({ state: "pending", attempts: 1 });
    // A new instance of the object (the old one and its open attempt are gone).
    const second = receiver();
    await runInDurableObject(sessionObject(session.id), (object: SessionObject) => {
      // The attempts running now live in the object's webhooks (src/webhooks/session-webhooks.ts).
      const { core } = object as unknown as {
        core: { webhooks: { inFlight: Map<string, unknown> } };
      };
      core.webhooks.inFlight.clear();
    });
    await connect(session.id, second.send, clock);
    await deliver(session.id);
    expect(second.received).toHaveLength(0);
    clock.now = (leased?.next_attempt_at ?? 0) + 1;
    await deliver(session.id);
    expect(second.received.map((r) => r.id)).toEqual([received[0]?.id]);
  });

  it("without PLANPORT_WEBHOOK_URL nothing is queued, and turning it on later announces only later changes", async () => {
    const session = await createDrivenSession();
    await openQuestion(session.id, ["Postgres?"]);
    expect(await outbox(session.id)).toEqual([]);
    const announced = await runInDurableObject(sessionObject(session.id), (_o: SessionObject, s) =>
      readAnnounced(s.storage.sql),
    );
    expect(announced?.phase).toBe("needs_input");
    const { received, send } = receiver();
    await connect(session.id, send);
    await api.archive(ALICE, session.id);
    await deliver(session.id);
    expect(received.map((r) => r.payload.type)).toEqual(["session.phase", "session.outcome"]);
    expect(received[1]?.payload.session.outcome).toEqual({
      kind: "terminated",
      subtype: "archived",
    });
  });

  it("a pending delivery is dropped, and logged, when the URL is no longer set", async () => {
    const session = await createDrivenSession();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const { received, send } = receiver();
    await connect(session.id, send);
    await openPlan(session.id, "# Plan\n");
    await runInDurableObject(sessionObject(session.id), async (object: SessionObject) => {
      object.webhookTarget = () => ({ webhook: null, publicUrl: null });
      await object.alarm();
    });
    expect(received).toHaveLength(0);
    expect((await outbox(session.id))[0]).toMatchObject({ state: "dropped" });
    expect(String(error.mock.calls[0]?.[0])).toContain("PLANPORT_WEBHOOK_URL is no longer set");
  });

  it("the purge of an ended session waits for its webhooks, then happens", async () => {
    const session = await createDrivenSession();
    const { received, send } = receiver((n) =>
      n === 1 ? new Response("busy", { status: 503 }) : new Response("ok"),
    );
    const clock = await connect(session.id, send);
    await api.archive(ALICE, session.id);
    const row = await runInDurableObject(sessionObject(session.id), (_o: SessionObject, state) =>
      state.storage.sql.exec("SELECT purge_due_at FROM session").one(),
    );
    clock.now = Number(row.purge_due_at) + 1;
    await deliver(session.id);
    // Still there: of its two webhooks (phase done, the outcome) one failed and waits.
    expect(received).toHaveLength(2);
    expect((await api.call("GET", `/v1/sessions/${session.id}`, ALICE)).status).toBe(200);
    clock.now += retryDelayMs(1);
    await deliver(session.id);
    expect(received).toHaveLength(3);
    expect(received[2]?.id).toBe(received[0]?.id);
    await deliver(session.id);
    expect((await api.call("GET", `/v1/sessions/${session.id}`, ALICE)).status).toBe(404);
  });
});
