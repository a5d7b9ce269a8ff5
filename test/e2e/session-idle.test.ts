import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, Session } from "../../src/protocol/index.ts";
import { ApiClient, type Auth } from "../support/api-client.ts";

/**
 * Who keeps a session from going idle (DESIGN.md "Retention", idle sessions), under `wrangler
 * dev` with PLANPORT_IDLE_DAYS set to 20 seconds. A plan waits for review and nobody changes
 * anything; what differs is who is looking: the review page of the decision link (its 2-s poll),
 * an approver's `planport review` (their token's events poll), or only a tab of the share link.
 * The first two are people who can move the plan on: their sessions outlive several idle times
 * and still take "keep planning". The share link alone is no one: that session is archived with
 * the idle message.
 *
 * Nothing here depends on speed: the pollers run for 2.5 idle times and the checks are on the
 * sessions' states; only a stall of the test longer than the idle time (20 s) could fail it.
 */

const IDLE_S = 20;
const ALICE = { token: "e2e-idle-alice" };
const BOB = { token: "e2e-idle-bob" };
const PAGE_POLL_MS = 2_000;
const DEADLINE_MS = 120_000;

const persist = mkdtempSync(join(tmpdir(), "planport-e2e-idle-"));
let worker: WorkerProcess;
let api: ApiClient;

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: {
      PLANPORT_TOKENS: `alice:${ALICE.token},bob:${BOB.token}`,
      PLANPORT_PLANNER: "offline",
      PLANPORT_IDLE_DAYS: String(IDLE_S / 86_400),
    },
  });
  api = new ApiClient((request) => fetch(request), worker.url);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function keyOf(url: string | undefined): { reviewKey: string } {
  return { reviewKey: new URL(url ?? "").searchParams.get("key") ?? "" };
}

/**
 * What an open review page does every 2 s (src/review/browser/live.ts): reads the session,
 * then the feed after its cursor. Or, for an approver's `planport review`, the feed with their
 * token. Polls until `stop` says so; returns every state it saw.
 */
async function poll(
  auth: Auth,
  id: string,
  stop: (session: Session, seen: Session[]) => boolean,
): Promise<Session[]> {
  const seen: Session[] = [];
  let cursor: string | undefined;
  const deadline = Date.now() + DEADLINE_MS + 3 * IDLE_S * 1000;
  for (;;) {
    const session = await api.getSession(auth, id);
    seen.push(session);
    const page = await api.events(auth, id, { after_id: cursor, limit: 1000 });
    cursor = page.last_id ?? cursor;
    if (stop(session, seen)) return seen;
    if (Date.now() > deadline) throw new Error(`gave up polling ${id} (last: ${session.status})`);
    await sleep(PAGE_POLL_MS);
  }
}

/**
 * Polls as `auth` from creation until the plan has waited 2.5 idle times (measured from when
 * it was first seen ready), or the session ended.
 */
async function reviewFor(auth: Auth, id: string): Promise<Session[]> {
  let readyAt = 0;
  return poll(auth, id, (s) => {
    if (s.phase === "plan_ready" && readyAt === 0) readyAt = Date.now();
    if (s.status === "archived" || s.phase === "done") return true;
    return readyAt > 0 && Date.now() - readyAt > 2.5 * IDLE_S * 1000;
  });
}

async function created(body: Record<string, unknown> = {}): Promise<Session> {
  return api.createSession(ALICE, { prompt: "Add a health endpoint to the server", ...body });
}

describe("idle sessions under wrangler dev (PLANPORT_IDLE_DAYS = 20 s)", () => {
  it.concurrent(
    "the decision link's review page keeps a waiting plan alive, and keep planning still works",
    async () => {
      const session = await created();
      const key = keyOf(session.review_url);
      const page = await fetch(session.review_url);
      expect(page.status).toBe(200);
      await page.text();
      const seen = await reviewFor(key, session.id);
      const last = seen.at(-1) as Session;
      expect(seen.some((s) => s.phase === "plan_ready")).toBe(true);
      expect(last).toMatchObject({ status: "requires_action", phase: "plan_ready" });
      const kept = await api.call("POST", `/v1/sessions/${session.id}/decision`, key, {
        json: {
          tool_use_id: last.pending?.tool_use_id,
          decision: "reject",
          feedback: "Also cover the readiness probe.",
        },
      });
      expect(kept.status, await kept.clone().text()).toBe(200);
    },
    DEADLINE_MS + 4 * IDLE_S * 1000,
  );

  it.concurrent(
    "an approver's planport review (their token's polls) keeps a plan that waits on them alive",
    async () => {
      const session = await created({ approvers: ["bob"] });
      const seen = await reviewFor(BOB, session.id);
      const last = seen.at(-1) as Session;
      expect(last).toMatchObject({ status: "requires_action", phase: "plan_ready" });
      // The approver can still act on it: keep planning with their own token.
      const kept = await api.call("POST", `/v1/sessions/${session.id}/decision`, BOB, {
        json: {
          tool_use_id: last.pending?.tool_use_id,
          decision: "reject",
          feedback: "Log every probe.",
        },
      });
      expect(kept.status, await kept.clone().text()).toBe(200);
    },
    DEADLINE_MS + 4 * IDLE_S * 1000,
  );

  it.concurrent(
    "a tab of the share link alone is nobody: the plan is archived with the idle message",
    async () => {
      const session = await created();
      const share = keyOf(session.share_url);
      const seen = await poll(share, session.id, (s) => s.status === "archived");
      expect(seen.some((s) => s.phase === "plan_ready")).toBe(true);
      expect(seen.at(-1)).toMatchObject({
        status: "archived",
        outcome: { kind: "terminated", subtype: "archived" },
      });
      const events = (await api.allEvents(share, session.id)) as Event[];
      expect(events.at(-1)).toMatchObject({ type: "result", subtype: "archived" });
      expect(String((events.at(-1) as { message?: string }).message)).toContain(
        "PLANPORT_IDLE_DAYS",
      );
    },
    DEADLINE_MS + 4 * IDLE_S * 1000,
  );
});
