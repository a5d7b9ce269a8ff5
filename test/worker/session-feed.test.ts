import { describe, expect, it } from "vitest";
import type { Event } from "../../src/protocol/index.ts";
import { MAX_FEED_PAGE_CHARS } from "../../src/session/events/log.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  errorCode,
  seedEvents,
  withPort,
} from "../support/worker/sessions.ts";

const SEEDED = 2_500;
/** `system/init` is the first event of every session. */
const TOTAL = SEEDED + 1;

describe("events feed", () => {
  it("pages through 2,500 events with no event skipped or repeated and has_more exact", async () => {
    const session = await createDrivenSession();
    await seedEvents(session.id, SEEDED);
    // 2,501 = 41 × 61: with limit 41 the last page is exactly full, where has_more is easiest to get wrong.
    for (const limit of [41, 100, 999, 1000]) {
      const seen: Event[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await api.events(ALICE, session.id, { after_id: after, limit });
        pages++;
        expect(page.data.length).toBeLessThanOrEqual(limit);
        expect(page.first_id).toBe(page.data[0]?.id ?? null);
        expect(page.last_id).toBe(page.data.at(-1)?.id ?? null);
        seen.push(...page.data);
        // has_more is exact: true exactly when events remain after this page.
        expect(page.has_more).toBe(seen.length < TOTAL);
        if (!page.has_more) break;
        after = page.last_id ?? undefined;
      }
      expect(pages, `limit ${limit}`).toBe(Math.ceil(TOTAL / limit));
      expect(seen).toHaveLength(TOTAL);
      const ids = seen.map((e) => e.id);
      expect(new Set(ids).size).toBe(TOTAL);
      expect([...ids].sort()).toEqual(ids);
      expect(seen[0]).toMatchObject({ type: "system", subtype: "init" });
      expect(seen.at(-1)).toMatchObject({
        type: "assistant",
        message: { content: [{ text: `note ${SEEDED}` }] },
      });
    }
  }, 60_000);

  it("cuts a page of large events by size, never by dropping one: has_more carries the rest", async () => {
    const session = await createDrivenSession();
    const big = "x".repeat(1_000_000);
    await withPort(session.id, (port) => {
      for (let i = 0; i < 20; i++) {
        port.transaction(() =>
          port.appendEvents([
            {
              type: "assistant",
              message: { role: "assistant", content: [{ type: "text", text: `${i}:${big}` }] },
            },
          ]),
        );
      }
    });
    const seen: Event[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await api.events(ALICE, session.id, { after_id: after, limit: 1000 });
      expect(JSON.stringify(page).length).toBeLessThan(MAX_FEED_PAGE_CHARS + 1_100_000);
      expect(page.data.length).toBeGreaterThan(0);
      seen.push(...page.data);
      if (!page.has_more) break;
      after = page.last_id ?? undefined;
    }
    expect(seen).toHaveLength(21);
    expect(new Set(seen.map((e) => e.id)).size).toBe(21);
  }, 60_000);

  it("answers the limit bounds: 0 and 1001 refused, 1 and 1000 served, default 100", async () => {
    const session = await createDrivenSession();
    await seedEvents(session.id, 1_200);
    const at = (query: string) =>
      api.call("GET", `/v1/sessions/${session.id}/events?${query}`, ALICE);
    expect((await at("limit=0")).status).toBe(400);
    expect((await at("limit=1001")).status).toBe(400);
    expect(await errorCode(await at("limit=1001"))).toBe("invalid_query");
    expect((await api.events(ALICE, session.id, { limit: 1 })).data).toHaveLength(1);
    const max = await api.events(ALICE, session.id, { limit: 1000 });
    expect(max.data).toHaveLength(1000);
    expect(max.has_more).toBe(true);
    const byDefault = await api.events(ALICE, session.id);
    expect(byDefault.data).toHaveLength(100);
    expect(byDefault.has_more).toBe(true);
  });

  it("returns an empty page with null ids after the last event, and for a cursor past the end", async () => {
    const session = await createDrivenSession();
    await seedEvents(session.id, 3);
    const all = await api.events(ALICE, session.id);
    expect(all.data).toHaveLength(4);
    expect(all.has_more).toBe(false);
    for (const after of [all.last_id ?? "", "evt_0000000099999999"]) {
      const empty = await api.events(ALICE, session.id, { after_id: after });
      expect(empty).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
    }
  });

  it("gives events ids that sort in append order, as strings and as numbers", async () => {
    const session = await createDrivenSession();
    await seedEvents(session.id, 12);
    const ids = (await api.events(ALICE, session.id)).data.map((e) => e.id);
    expect(ids[0]).toBe("evt_0000000000000001");
    expect(ids[12]).toBe("evt_0000000000000013");
    expect([...ids].sort()).toEqual(ids);
  });

  it("starts every session with system/init naming plan mode, the planner, the tools and the plan file", async () => {
    const session = await createDrivenSession();
    const [init] = (await api.events(ALICE, session.id)).data;
    expect(init).toMatchObject({
      type: "system",
      subtype: "init",
      permission_mode: "plan",
      planner: "offline",
      tools: ["Read", "Glob", "Grep", "LS", "Write", "Edit", "AskUserQuestion", "ExitPlanMode"],
      session_id: session.id,
    });
    expect((init as { plan_file: string }).plan_file).toMatch(/^\/plans\/[a-z]+-[a-z]+\.md$/);
  });

  it("records a bearer-token poll as a terminal polling, without touching updated_at", async () => {
    const session = await createDrivenSession();
    expect(session.terminal_polled_at).toBeNull();
    await api.events(ALICE, session.id);
    const after = await api.getSession(ALICE, session.id);
    expect(after.terminal_polled_at).not.toBeNull();
    expect(after.updated_at).toBe(session.updated_at);
  });
});
