import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { TOOL_NAMES } from "../../src/protocol/index.ts";
import { newReviewKey, newSessionId } from "../../src/session/ids.ts";
import { migrate, SCHEMA_VERSION } from "../../src/session/schema.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import type { WebhookPayload } from "../../src/webhooks/events.ts";
import { listDeliveries, readAnnounced } from "../../src/webhooks/outbox.ts";
import { ALICE, api, ORIGIN, PLAN_CALL, sessionObject } from "../support/worker/sessions.ts";

/**
 * Sessions stored by schema version 3 (before webhooks) get the outbox on restart, and their
 * present phase and outcome count as announced: a receiver hears of what they do next, never
 * of what they did before it was there.
 */

const PLAN_PATH = "/plans/bold-eagle.md";

/** Stores a session the way version 3 did (waiting for a plan decision, or archived). */
async function storeV3(waitingForPlan: boolean): Promise<string> {
  const id = newSessionId(Date.now());
  const owner = await ownerIdOf(ALICE.token);
  const now = Date.now();
  await runInDurableObject(sessionObject(id), (_o: SessionObject, state) => {
    const sql = state.storage.sql;
    state.storage.transactionSync(() => {
      migrate(sql, 3);
      sql.exec(
        `INSERT INTO session (id, owner, review_key, title, prompt, planner, max_turns, plan_path,
          permission_mode, pre_plan_mode, outcome_kind, outcome_subtype, archived_at, purge_due_at,
          created_at, updated_at)
         VALUES (?, ?, ?, 'Old', 'Old', 'offline', 50, ?, 'plan', 'default', ?, ?, ?, ?, ?, ?)`,
        id,
        owner,
        newReviewKey(),
        PLAN_PATH,
        waitingForPlan ? null : "terminated",
        waitingForPlan ? null : "archived",
        waitingForPlan ? null : now,
        waitingForPlan ? null : now + 86_400_000,
        now,
        now,
      );
      sql.exec(
        "INSERT INTO events (seq, type, json) VALUES (1, 'system', ?)",
        JSON.stringify({
          id: "evt_0000000000000001",
          created_at: new Date(now).toISOString(),
          type: "system",
          subtype: "init",
          permission_mode: "plan",
          planner: "offline",
          tools: [...TOOL_NAMES],
        }),
      );
      sql.exec(
        "INSERT INTO plan_revisions (revision, content, edited_by_user, created_at) VALUES (1, '# Plan\n', 0, ?)",
        now,
      );
      sql.exec(
        "INSERT INTO waits (tool_use_id, kind, input, opened_at, closed_at) VALUES (?, 'plan', '{}', ?, ?)",
        PLAN_CALL,
        now,
        waitingForPlan ? null : now,
      );
    });
  });
  return id;
}

describe("a session stored by schema version 3", () => {
  it("gets the outbox, announces nothing for its past, and announces its next change", async () => {
    const waiting = await storeV3(true);
    const archived = await storeV3(false);
    await abortAllDurableObjects();

    expect((await api.getSession(ALICE, waiting)).phase).toBe("plan_ready");
    expect((await api.getSession(ALICE, archived)).phase).toBe("done");
    const stateOf = (id: string) =>
      runInDurableObject(sessionObject(id), (_o: SessionObject, state) => ({
        announced: readAnnounced(state.storage.sql),
        outbox: listDeliveries(state.storage.sql),
        version: state.storage.sql.exec("SELECT version FROM schema_version").one().version,
      }));
    // No origin was stored before version 4; the owner's reads above taught it one
    // (DESIGN.md "Review links").
    expect(await stateOf(waiting)).toEqual({
      announced: { origin: ORIGIN, phase: "plan_ready", outcome: null },
      outbox: [],
      version: SCHEMA_VERSION,
    });
    expect(await stateOf(archived)).toEqual({
      announced: {
        origin: ORIGIN,
        phase: "done",
        outcome: JSON.stringify({ kind: "terminated", subtype: "archived" }),
      },
      outbox: [],
      version: SCHEMA_VERSION,
    });

    const sent: WebhookPayload[] = [];
    await runInDurableObject(sessionObject(waiting), (object: SessionObject) => {
      object.webhookTarget = () => ({
        webhook: { url: "https://hooks.example.test/", secret: "a-secret-of-enough-length" },
        publicUrl: "https://planport.example.test",
      });
      // A year ahead, so the alarm the decision sets does not fire by itself; the test runs it.
      object.clock = () => Date.now() + 365 * 86_400_000;
      object.planningStep = async () => ({ next: "wait" });
      object.webhookFetch = async (request) => {
        sent.push((await request.json()) as WebhookPayload);
        return new Response("ok");
      };
    });
    await api.decide(ALICE, waiting, {
      tool_use_id: PLAN_CALL,
      decision: "reject",
      feedback: "More tests.",
    });
    await runInDurableObject(sessionObject(waiting), async (object: SessionObject) => {
      await object.alarm();
      await object.deliveriesSettled();
    });
    expect(sent.map((p) => [p.type, p.session.phase])).toEqual([["session.phase", "running"]]);
    // PLANPORT_PUBLIC_URL, when set, wins over any stored origin.
    expect(sent[0]?.session.review_url).toMatch(/^https:\/\/planport\.example\.test\/review\//);
  });
});
