import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../src/session/session-object.ts";
import {
  ALICE,
  api,
  BOB,
  createDrivenSession,
  errorCode,
  openPlan,
  PLAN_CALL,
  sessionObject,
} from "../support/worker/sessions.ts";

/** Every session-scoped route, with a body that would be valid for it. */
function sessionRoutes(id: string): { method: string; path: string; json?: unknown }[] {
  return [
    { method: "GET", path: `/v1/sessions/${id}` },
    { method: "GET", path: `/v1/sessions/${id}/events` },
    { method: "GET", path: `/v1/sessions/${id}/plan` },
    { method: "GET", path: `/v1/sessions/${id}/changes` },
    { method: "POST", path: `/v1/sessions/${id}/messages`, json: { text: "hello" } },
    {
      method: "POST",
      path: `/v1/sessions/${id}/decision`,
      json: { tool_use_id: PLAN_CALL, decision: "teleport" },
    },
    { method: "POST", path: `/v1/sessions/${id}/archive` },
  ];
}

/** The routes that take no review key: list, create, snapshots. */
const OWNER_ONLY_ROUTES = [
  { method: "GET", path: "/v1/sessions" },
  { method: "POST", path: "/v1/sessions", json: { prompt: "x" } },
  { method: "HEAD", path: `/v1/snapshots/${"a".repeat(64)}` },
];

describe("authentication", () => {
  it("answers the health check without a token", async () => {
    const res = await api.call("GET", "/v1/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("refuses every authenticated route without a token with 401 unauthorized", async () => {
    const session = await createDrivenSession();
    for (const route of [...OWNER_ONLY_ROUTES, ...sessionRoutes(session.id)]) {
      const res = await api.call(route.method, route.path, {}, { json: route.json });
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
      if (route.method !== "HEAD") expect(await errorCode(res)).toBe("unauthorized");
    }
    const upload = await api.call(
      "POST",
      "/v1/snapshots",
      {},
      { body: new Uint8Array([1]), headers: { "content-type": "application/gzip" } },
    );
    expect(upload.status).toBe(401);
  });

  it("refuses an unknown token, a malformed header and a token that only prefixes a real one", async () => {
    for (const authorization of [
      "Bearer nope",
      "Bearer token-alic",
      "Bearer token-alice2",
      "Basic dG9rZW4tYWxpY2U=",
      "token-alice",
      "Bearer",
    ]) {
      const res = await api.call("GET", "/v1/sessions", {}, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(await errorCode(res)).toBe("unauthorized");
    }
  });

  it("accepts the bearer scheme in any letter case", async () => {
    const res = await api.call(
      "GET",
      "/v1/sessions",
      {},
      { headers: { authorization: "bearer token-alice" } },
    );
    expect(res.status).toBe(200);
  });
});

describe("owners", () => {
  it("answers 404 not_found to another owner on every session route, and changes nothing", async () => {
    const session = await createDrivenSession(ALICE.token);
    await openPlan(session.id, "# Plan\n");
    for (const route of sessionRoutes(session.id)) {
      const res = await api.call(route.method, route.path, BOB, { json: route.json });
      expect(res.status, `${route.method} ${route.path}`).toBe(404);
      expect(await errorCode(res)).toBe("not_found");
    }
    const after = await api.getSession(ALICE, session.id);
    expect(after.status).toBe("requires_action");
    expect(after.phase).toBe("plan_ready");
    expect(after.terminal_polled_at).toBeNull();
  });

  it("leaves nothing stored for a probed session id that was never created", async () => {
    const id = "ses_00000000000000000000000001";
    expect((await api.call("GET", `/v1/sessions/${id}/events`, ALICE)).status).toBe(404);
    const tables = await runInDurableObject(sessionObject(id), (_o: SessionObject, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables.filter((t) => !String(t.name).startsWith("_cf"))).toEqual([]);
  });

  it("answers an unknown session and a malformed session id with the same 404", async () => {
    const unknown = await api.call("GET", "/v1/sessions/ses_00000000000000000000000000", ALICE);
    const malformed = await api.call("GET", "/v1/sessions/not-a-session", ALICE);
    expect(unknown.status).toBe(404);
    expect(malformed.status).toBe(404);
    expect(await unknown.json()).toEqual(await malformed.json());
  });

  it("lists only the caller's own sessions", async () => {
    const mine = await createDrivenSession(ALICE.token);
    const theirs = await createDrivenSession(BOB.token);
    const aliceIds = (await api.listSessions(ALICE, { limit: 100 })).data.map((s) => s.id);
    const bobIds = (await api.listSessions(BOB, { limit: 100 })).data.map((s) => s.id);
    expect(aliceIds).toContain(mine.id);
    expect(aliceIds).not.toContain(theirs.id);
    expect(bobIds).toContain(theirs.id);
    expect(bobIds).not.toContain(mine.id);
  });
});

describe("review key", () => {
  it("opens every session-scoped route with X-Review-Key instead of a token", async () => {
    const session = await createDrivenSession();
    const reviewKey = new URL(session.review_url).searchParams.get("key") ?? "";
    expect(reviewKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await api.getSession({ reviewKey }, session.id)).id).toBe(session.id);
    expect((await api.events({ reviewKey }, session.id)).data[0]?.type).toBe("system");
    expect((await api.plan({ reviewKey }, session.id)).revision).toBe(0);
    expect(await api.changes({ reviewKey }, session.id)).toBe("");
    await api.message({ reviewKey }, session.id, { text: "Please also cover the CLI." });
    expect((await api.archive({ reviewKey }, session.id)).status).toBe("archived");
  });

  it("does not count a review-key poll as a terminal polling", async () => {
    const session = await createDrivenSession();
    const reviewKey = new URL(session.review_url).searchParams.get("key") ?? "";
    await openPlan(session.id, "# Plan\n");
    await api.events({ reviewKey }, session.id);
    const res = await api.call(
      "POST",
      `/v1/sessions/${session.id}/decision`,
      { reviewKey },
      {
        json: { tool_use_id: PLAN_CALL, decision: "teleport" },
      },
    );
    expect(res.status).toBe(409);
    expect(await errorCode(res)).toBe("no_terminal");
  });

  it("answers a wrong review key with 404, like an unknown session", async () => {
    const session = await createDrivenSession();
    const key = new URL(session.review_url).searchParams.get("key") ?? "";
    const other = await createDrivenSession();
    const otherKey = new URL(other.review_url).searchParams.get("key") ?? "";
    for (const reviewKey of [`${key.slice(0, -1)}x`, otherKey, "short"]) {
      for (const route of sessionRoutes(session.id)) {
        const res = await api.call(route.method, route.path, { reviewKey }, { json: route.json });
        expect(res.status, `${route.method} ${route.path}`).toBe(404);
        expect(await errorCode(res)).toBe("not_found");
      }
    }
  });

  it("does not open list, create or snapshots", async () => {
    const session = await createDrivenSession();
    const reviewKey = new URL(session.review_url).searchParams.get("key") ?? "";
    for (const route of OWNER_ONLY_ROUTES) {
      const res = await api.call(route.method, route.path, { reviewKey }, { json: route.json });
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
    }
  });
});
