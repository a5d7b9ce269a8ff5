import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createSession, listSessions } from "../../src/owner/sessions.ts";
import { ownerIndexStub } from "../../src/owner/stub.ts";
import { ALICE, api, createDrivenSession, ORIGIN } from "../support/worker/sessions.ts";

/** A fresh owner per test, so the list holds exactly what the test created. */
function freshOwner(): string {
  return crypto.randomUUID().replace(/-/g, "");
}

async function createFor(owner: string, title: string): Promise<string> {
  const created = await createSession(env, owner, { prompt: `Plan ${title}`, title }, ORIGIN, {
    autostart: false,
  });
  if (!created.ok) throw new Error(created.error.message);
  return created.value.id;
}

describe("owner index", () => {
  it("lists an owner's sessions newest first, with exact has_more, paging by before", async () => {
    const owner = freshOwner();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await createFor(owner, `session ${i}`));
    const newestFirst = [...ids].reverse();
    expect([...ids].sort()).toEqual(ids); // ids sort by creation time

    const seen: string[] = [];
    let before: string | undefined;
    for (const expected of [
      [0, 3, true],
      [3, 6, true],
      [6, 7, false],
    ] as const) {
      const page = await listSessions(env, owner, { limit: 3, before }, ORIGIN);
      if (!page.ok) throw new Error(page.error.message);
      expect(page.value.data.map((s) => s.id)).toEqual(newestFirst.slice(expected[0], expected[1]));
      expect(page.value.has_more).toBe(expected[2]);
      seen.push(...page.value.data.map((s) => s.id));
      before = page.value.data.at(-1)?.id;
    }
    expect(seen).toEqual(newestFirst);
    const exact = await listSessions(env, owner, { limit: 7 }, ORIGIN);
    expect(exact.ok && exact.value.has_more).toBe(false);
  });

  it("serves each listed session's current state, not a copy from creation time", async () => {
    const session = await createDrivenSession();
    await api.archive(ALICE, session.id);
    const listed = (await api.listSessions(ALICE, { limit: 100 })).data.find(
      (s) => s.id === session.id,
    );
    expect(listed?.status).toBe("archived");
  });

  it("answers the list over HTTP with limit and before, newest first", async () => {
    const a = await createDrivenSession();
    const b = await createDrivenSession();
    const one = await api.listSessions(ALICE, { limit: 1 });
    expect(one.data).toHaveLength(1);
    expect(one.has_more).toBe(true);
    // Other test files may create sessions of the same owner meanwhile: check order, not adjacency.
    const next = await api.listSessions(ALICE, { limit: 1, before: b.id });
    const older = next.data[0]?.id ?? "";
    expect(older < b.id && older >= a.id).toBe(true);
    const ids = (await api.listSessions(ALICE, { limit: 100 })).data.map((s) => s.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect([...ids].sort().reverse()).toEqual(ids);
  });

  it("forgets a session whose creation was refused, so it never shows up", async () => {
    const owner = freshOwner();
    const refused = await createSession(
      env,
      owner,
      { prompt: "x", snapshot_id: "f".repeat(64) },
      ORIGIN,
    );
    expect(refused.ok).toBe(false);
    expect((await ownerIndexStub(env, owner).list(10)).ids).toEqual([]);
  });
});
