import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { knownOwners, ownerIdOf } from "../../src/api/auth.ts";
import { configOf, readConfig } from "../../src/config.ts";
import { createSession } from "../../src/owner/sessions.ts";
import type { CreateSession, Event, Session } from "../../src/protocol/index.ts";
import { TOOL_NAMES } from "../../src/protocol/index.ts";
import { reviewView } from "../../src/review/view.ts";
import { newReviewKey, newSessionId } from "../../src/session/ids.ts";
import { migrate } from "../../src/session/schema.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { ApiClient } from "../support/api-client.ts";
import {
  ALICE,
  BOB,
  errorCode,
  ORIGIN,
  openPlan,
  openQuestion,
  PLAN_CALL,
  QUESTION_CALL,
  sessionObject,
} from "../support/worker/sessions.ts";
import { fixturePlan, fixtureSession } from "./review-fixtures.ts";

/**
 * Team review (issue 17; docs/PROTOCOL.md "Team review"): the read-only share link beside the
 * decision link, plans that need someone else's approval, and owner labels. The worker runs
 * with labelled tokens here (alice, bob, carol, and a bare token for dave), over the real app
 * and the real Durable Objects.
 */

const TOKENS = "alice:token-alice,bob:token-bob,carol:token-carol,token-dave";
const CAROL = { token: "token-carol" } as const;
const DAVE = { token: "token-dave" } as const;

const app = createApp();
function teamApi(vars: Record<string, string> = {}) {
  return new ApiClient(
    async (request) => await app.fetch(request, { ...env, PLANPORT_TOKENS: TOKENS, ...vars }),
  );
}
const api = teamApi();

const PLAN = "# Plan\n\n1. Add the OAuth callback route.\n2. Reuse the session cookie.\n";

/** A session whose loop never starts (the test drives it), created as the API would. */
async function drivenSession(
  token: string,
  body: Partial<CreateSession> = {},
  vars: Record<string, string> = {},
): Promise<Session> {
  const known = await knownOwners(TOKENS);
  const owner = await ownerIdOf(token);
  const created = await createSession(
    { ...env, PLANPORT_TOKENS: TOKENS, ...vars },
    owner,
    {
      prompt: "Add OAuth login",
      planner: "scripted",
      script: [{ content: [{ type: "text", text: "unused: the loop is not started" }] }],
      ...body,
    },
    ORIGIN,
    {
      autostart: false,
      team: { label: known.find((o) => o.owner === owner)?.label ?? "", known },
    },
  );
  if (!created.ok) throw new Error(`${created.error.code}: ${created.error.message}`);
  await runInDurableObject(sessionObject(created.value.id), (object: SessionObject) => {
    object.planningStep = async () => ({ next: "idle" });
  });
  return created.value;
}

function keyOf(url: string): string {
  return new URL(url).searchParams.get("key") ?? "";
}

function decide(auth: { token: string } | { reviewKey: string }, id: string, body: object) {
  return api.call("POST", `/v1/sessions/${id}/decision`, auth, {
    json: { tool_use_id: PLAN_CALL, ...body },
  });
}

async function message(res: Response): Promise<string> {
  return ((await res.json()) as { error: { message: string } }).error.message;
}

async function decisionEvents(id: string) {
  const events = (await api.allEvents(ALICE, id)) as Event[];
  return events.flatMap((e) => (e.type === "user" && e.decision ? [e.decision] : []));
}

describe("owner labels (PLANPORT_TOKENS label:token)", () => {
  it("reads labelled and bare tokens; a bare token is shown as its owner hash's first 8 characters", async () => {
    const config = readConfig({ PLANPORT_TOKENS: TOKENS });
    expect(config.ok && config.value.tokens.map((t) => t.label)).toEqual([
      "alice",
      "bob",
      "carol",
      null,
    ]);
    const known = await knownOwners(TOKENS);
    expect(known.map((o) => o.label)).toEqual([
      "alice",
      "bob",
      "carol",
      (await ownerIdOf(DAVE.token)).slice(0, 8),
    ]);
    // Owners stay hashes of the token, label or not: a label never changes whose sessions are whose.
    expect(known[0]?.owner).toBe(await ownerIdOf("token-alice"));
    // Backward compatible: bare tokens only, as before.
    expect(readConfig({ PLANPORT_TOKENS: "token-alice,token-bob" }).ok).toBe(true);
  });

  it.each([
    ["Alice:t1", "label"],
    ["3f5c1a2b:t1", "label"],
    ["a b:t1", "label"],
    ["alice:t1,alice:t2", "same label"],
    ["alice:t1,bob:t1", "repeats the token"],
    ["alice:", "no token"],
  ])("refuses PLANPORT_TOKENS %j by name, without repeating a token", (tokens, says) => {
    const config = readConfig({ PLANPORT_TOKENS: tokens });
    expect(config.ok).toBe(false);
    if (config.ok) return;
    expect(config.error).toContain("PLANPORT_TOKENS");
    expect(config.error).toContain(says);
    expect(config.error).not.toContain("t1");
  });

  it("answers 500 server_misconfigured for a bad label, and for other-owner with one token", async () => {
    const bad = teamApi({ PLANPORT_TOKENS: "Bad Label:token-alice" });
    const res = await bad.call("GET", "/v1/sessions", ALICE);
    expect(res.status).toBe(500);
    expect(await errorCode(res)).toBe("server_misconfigured");
    const lonely = teamApi({
      PLANPORT_TOKENS: "alice:token-alice",
      PLANPORT_REQUIRE_APPROVAL: "other-owner",
    });
    const res2 = await lonely.call("GET", "/v1/sessions", ALICE);
    expect(res2.status).toBe(500);
    expect(await message(res2)).toContain("PLANPORT_REQUIRE_APPROVAL");
    const typo = teamApi({ PLANPORT_REQUIRE_APPROVAL: "others" });
    expect((await typo.call("GET", "/v1/sessions", ALICE)).status).toBe(500);
  });
});

describe("the share link (view key)", () => {
  it("is returned beside review_url, is a different key, and never shows the decision key", async () => {
    const session = await drivenSession(ALICE.token);
    expect(session.share_url).toMatch(/\/review\/ses_[0-9a-z]{26}\?key=[A-Za-z0-9_-]{43}$/);
    const viewKey = keyOf(session.share_url ?? "");
    const decisionKey = keyOf(session.review_url);
    expect(viewKey).not.toBe(decisionKey);
    expect(session.your_role).toBe("requester");

    const seen = await api.getSession({ reviewKey: viewKey }, session.id);
    expect(seen.your_role).toBe("viewer");
    expect(seen.review_url).toBe(seen.share_url);
    expect(JSON.stringify(seen)).not.toContain(decisionKey);
    expect((await api.getSession({ reviewKey: decisionKey }, session.id)).your_role).toBe(
      "decider",
    );
  });

  it("is accepted on every reading route", async () => {
    const session = await drivenSession(ALICE.token);
    await openPlan(session.id, PLAN);
    const auth = { reviewKey: keyOf(session.share_url ?? "") };
    for (const path of ["", "/events", "/events?limit=5", "/plan", "/changes", "/comments"]) {
      const res = await api.call("GET", `/v1/sessions/${session.id}${path}`, auth);
      expect(res.status, `GET ${path}`).toBe(200);
    }
    const page = `/review/${session.id}?key=${auth.reviewKey}`;
    for (const query of ["", "&part=regions", "&compare=1", "&rev=1", "&diff=1"]) {
      const res = await api.call("GET", `${page}${query}`);
      expect(res.status, `review page ${query}`).toBe(200);
      expect(await res.text()).not.toContain(keyOf(session.review_url));
    }
  });

  it("is refused with 403 view_only on every deciding route, and changes nothing", async () => {
    const session = await drivenSession(ALICE.token);
    await openPlan(session.id, PLAN);
    await api.events(ALICE, session.id); // a terminal polls: teleport would be allowed
    const auth = { reviewKey: keyOf(session.share_url ?? "") };
    const attempts: [string, string, object | undefined][] = [
      ["POST", "/decision", { tool_use_id: PLAN_CALL, decision: "approve" }],
      ["POST", "/decision", { tool_use_id: PLAN_CALL, decision: "teleport" }],
      ["POST", "/decision", { tool_use_id: PLAN_CALL, decision: "reject", feedback: "No." }],
      ["POST", "/messages", { text: "Please also cover logout." }],
      ["POST", "/messages", { tool_use_id: PLAN_CALL, answers: { q: "a" } }],
      ["POST", "/archive", undefined],
    ];
    for (const [method, path, json] of attempts) {
      const res = await api.call(method, `/v1/sessions/${session.id}${path}`, auth, { json });
      expect(res.status, `${method} ${path} ${JSON.stringify(json)}`).toBe(403);
      expect(await errorCode(res)).toBe("view_only");
    }
    const after = await api.getSession(ALICE, session.id);
    expect(after.phase).toBe("plan_ready");
    expect(after.status).not.toBe("archived");
    expect(await decisionEvents(session.id)).toEqual([]);
  });

  it("refuses an answer to an open question from the share link too", async () => {
    const session = await drivenSession(ALICE.token);
    await openQuestion(session.id, ["Keep the cookie?"]);
    const res = await api.call(
      "POST",
      `/v1/sessions/${session.id}/messages`,
      {
        reviewKey: keyOf(session.share_url ?? ""),
      },
      { json: { tool_use_id: QUESTION_CALL, answers: { "Keep the cookie?": "Yes" } } },
    );
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("view_only");
    expect((await api.getSession(ALICE, session.id)).phase).toBe("needs_input");
  });

  it("renders the plan without any decision control, and takes comments as suggestions", async () => {
    const session = await drivenSession(ALICE.token);
    await openPlan(session.id, PLAN);
    const viewKey = keyOf(session.share_url ?? "");
    const served = await (await api.call("GET", `/review/${session.id}?key=${viewKey}`)).text();
    // The controls as rendered: the inline script names them in its selectors.
    const page = served.replace(/<script[\s\S]*?<\/script>/g, "");
    expect(page).toContain("Add the OAuth callback route");
    expect(page).toContain("read-only share link");
    for (const control of [
      'data-action="approve"',
      'data-action="teleport"',
      'data-action="reject"',
      'data-action="stop"',
      'id="decision-form"',
      'id="message-form"',
      'id="question-form"',
    ]) {
      expect(page).not.toContain(control);
    }
    expect(page).toContain("data-suggest");

    const posted = await api.call(
      "POST",
      `/v1/sessions/${session.id}/comments`,
      {
        reviewKey: viewKey,
      },
      { json: { quote: "Reuse the session cookie.", text: "Rotate it on login." } },
    );
    expect(posted.status).toBe(201);
    const list = (await (
      await api.call("GET", `/v1/sessions/${session.id}/comments`, ALICE)
    ).json()) as { data: { quote: string; text: string; from: string }[] };
    expect(list.data).toEqual([
      expect.objectContaining({
        quote: "Reuse the session cookie.",
        text: "Rotate it on login.",
        from: "share_link",
      }),
    ]);
    expect((await api.getSession(ALICE, session.id)).suggestion_count).toBe(1);
    // The decider's page lists it, ready to be sent with "Keep planning".
    const own = await (
      await api.call("GET", `/review/${session.id}?key=${keyOf(session.review_url)}`)
    ).text();
    expect(own).toContain("Suggestions from viewers (1)");
    expect(own).toContain("Rotate it on login.");
    expect(own).toContain('data-action="adopt-suggestion"');
    expect(own).toContain('data-action="approve"');
    // A comment needs a quote and a note; a wrong key is 404 like an unknown session.
    const empty = await api.call(
      "POST",
      `/v1/sessions/${session.id}/comments`,
      {
        reviewKey: viewKey,
      },
      { json: { quote: "x", text: " " } },
    );
    expect(empty.status).toBe(400);
    const wrong = await api.call(
      "POST",
      `/v1/sessions/${session.id}/comments`,
      {
        reviewKey: newReviewKey(),
      },
      { json: { quote: "x", text: "y" } },
    );
    expect(wrong.status).toBe(404);
  });

  it("leads only to share links in a best-of-N group", async () => {
    const first = await drivenSession(ALICE.token, { group: `team-${Date.now()}` });
    const second = await drivenSession(ALICE.token, { group: first.group ?? "" });
    const viewKey = keyOf(first.share_url ?? "");
    for (const query of ["", "&compare=1"]) {
      const page = await (
        await api.call("GET", `/review/${first.id}?key=${viewKey}${query}`)
      ).text();
      expect(page).toContain(keyOf(second.share_url ?? ""));
      expect(page).not.toContain(keyOf(second.review_url));
      expect(page).not.toContain(keyOf(first.review_url));
    }
  });

  it("is drawn for a session stored before it existed (schema version 4)", async () => {
    const id = newSessionId(Date.now());
    const owner = await ownerIdOf(ALICE.token);
    const decisionKey = newReviewKey();
    const now = Date.now();
    await runInDurableObject(sessionObject(id), (_o: SessionObject, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => {
        migrate(sql, 4);
        sql.exec(
          `INSERT INTO session (id, owner, review_key, title, prompt, planner, max_turns, plan_path,
            permission_mode, pre_plan_mode, created_at, updated_at)
           VALUES (?, ?, ?, 'Old', 'Old', 'offline', 50, '/plans/old.md', 'plan', 'default', ?, ?)`,
          id,
          owner,
          decisionKey,
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
          "INSERT INTO webhook_state (id, origin, phase, outcome) VALUES (1, '', 'running', NULL)",
        );
      });
    });
    await abortAllDurableObjects();
    const session = await api.getSession(ALICE, id);
    const viewKey = keyOf(session.share_url ?? "");
    expect(viewKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(viewKey).not.toBe(decisionKey);
    expect(session.approvers).toEqual([]);
    expect((await api.getSession({ reviewKey: viewKey }, id)).your_role).toBe("viewer");
    const res = await api.call("POST", `/v1/sessions/${id}/archive`, { reviewKey: viewKey });
    expect(res.status).toBe(403);
  });
});

describe("required approvers", () => {
  it("refuses approve and teleport from the requester's token and the decision key with 409 approval_required", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob"] });
    expect(session.approvers).toEqual(["bob"]);
    await openPlan(session.id, PLAN);
    await api.events(ALICE, session.id); // the requester's terminal polls
    const decisionKey = { reviewKey: keyOf(session.review_url) };
    for (const auth of [ALICE, decisionKey]) {
      for (const kind of ["approve", "teleport"]) {
        const res = await decide(auth, session.id, { decision: kind });
        expect(res.status, `${kind} by ${JSON.stringify(auth)}`).toBe(409);
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("approval_required");
        expect(body.error.message).toContain("bob");
      }
    }
    const viewOnly = await decide({ reviewKey: keyOf(session.share_url ?? "") }, session.id, {
      decision: "approve",
    });
    expect(viewOnly.status).toBe(403);
    expect(await decisionEvents(session.id)).toEqual([]);
    expect((await api.getSession(ALICE, session.id)).phase).toBe("plan_ready");
  });

  it("keeps planning open to the requester, and lets a listed approver approve, recorded once", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob", "carol"] });
    await openPlan(session.id, PLAN);
    const rejected = await decide(ALICE, session.id, {
      decision: "reject",
      feedback: "Cover logout too.",
    });
    expect(rejected.status).toBe(200);
    expect(((await rejected.json()) as Session).decided_by).toBeNull();

    await openPlan(session.id, `${PLAN}3. Logout.\n`, "toolu_plan_2");
    const approved = await api.call("POST", `/v1/sessions/${session.id}/decision`, BOB, {
      json: { tool_use_id: "toolu_plan_2", decision: "approve" },
    });
    expect(approved.status).toBe(200);
    const after = (await approved.json()) as Session;
    expect(after.decided_by).toBe("bob");
    expect(after.your_role).toBe("approver");
    expect(after.outcome?.kind).toBe("approved");
    // Exactly once: the second approver is too late, and the record is unchanged.
    const again = await api.call("POST", `/v1/sessions/${session.id}/decision`, CAROL, {
      json: { tool_use_id: "toolu_plan_2", decision: "approve" },
    });
    expect(again.status).toBe(409);
    expect(await errorCode(again)).toBe("already_decided");
    expect(await decisionEvents(session.id)).toEqual([
      { tool_use_id: PLAN_CALL, kind: "reject", decided_by: "alice" },
      { tool_use_id: "toolu_plan_2", kind: "approve", decided_by: "bob" },
    ]);
    expect((await api.getSession(ALICE, session.id)).decided_by).toBe("bob");
  });

  it("shows the session to a listed approver, and to nobody else (404)", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob"] });
    await openPlan(session.id, PLAN);
    expect((await api.getSession(BOB, session.id)).your_role).toBe("approver");
    expect((await api.call("GET", `/v1/sessions/${session.id}/plan`, BOB)).status).toBe(200);
    for (const path of ["", "/events", "/plan", "/comments"]) {
      const res = await api.call("GET", `/v1/sessions/${session.id}${path}`, CAROL);
      expect(res.status, `GET ${path}`).toBe(404);
    }
    const stranger = await decide(CAROL, session.id, { decision: "approve" });
    expect(stranger.status).toBe(404);
  });

  it("sends an approver's teleport to the requester's polling terminal, not to the approver's", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob"] });
    await openPlan(session.id, PLAN);
    // The approver's own polling (planport review) is not a terminal that receives the plan.
    await api.events(BOB, session.id);
    const early = await decide(BOB, session.id, { decision: "teleport" });
    expect(early.status).toBe(409);
    expect(await errorCode(early)).toBe("no_terminal");
    await api.events(ALICE, session.id);
    const sent = await decide(BOB, session.id, { decision: "teleport" });
    expect(sent.status).toBe(200);
    const after = await api.getSession(ALICE, session.id);
    expect(after.outcome?.kind).toBe("teleport");
    expect(after.decided_by).toBe("bob");
  });

  it("lists the sessions awaiting the caller's approval, until they are decided", async () => {
    const waiting = await drivenSession(ALICE.token, { approvers: ["carol"] });
    const decided = await drivenSession(ALICE.token, { approvers: ["carol"] });
    const stopped = await drivenSession(DAVE.token, { approvers: ["carol"] });
    const notMine = await drivenSession(ALICE.token, { approvers: ["bob"] });
    await openPlan(decided.id, PLAN);
    expect((await decide(CAROL, decided.id, { decision: "approve" })).status).toBe(200);
    await api.archive({ token: DAVE.token }, stopped.id);
    const ids = async (auth: { token: string }) =>
      (
        (await (await api.call("GET", "/v1/sessions?awaiting=me&limit=100", auth)).json()) as {
          data: Session[];
        }
      ).data.map((s) => s.id);
    const carols = await ids(CAROL);
    expect(carols).toContain(waiting.id);
    expect(carols).not.toContain(decided.id);
    expect(carols).not.toContain(stopped.id);
    expect(carols).not.toContain(notMine.id);
    expect(await ids(BOB)).toContain(notMine.id);
    // The requester's own list is unchanged: their sessions, not the ones they approve.
    expect(await ids(ALICE)).not.toContain(waiting.id);
    const bad = await api.call("GET", "/v1/sessions?awaiting=you", CAROL);
    expect(bad.status).toBe(400);
    const both = await api.call("GET", "/v1/sessions?awaiting=me&group=g1", CAROL);
    expect(both.status).toBe(400);
    expect(await errorCode(both)).toBe("invalid_query");
  });

  it("gives an approver the share link as review_url, never the decision key (GET, awaiting=me, their decision)", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob"] });
    await openPlan(session.id, PLAN);
    const decisionKey = keyOf(session.review_url);
    const shown: Session[] = [await api.getSession(BOB, session.id)];
    const awaiting = await api.call("GET", "/v1/sessions?awaiting=me&limit=100", BOB);
    shown.push(
      ...((await awaiting.json()) as { data: Session[] }).data.filter((s) => s.id === session.id),
    );
    const kept = await decide(BOB, session.id, { decision: "reject", feedback: "Cover logout." });
    expect(kept.status).toBe(200);
    shown.push((await kept.json()) as Session);
    expect(shown).toHaveLength(3);
    for (const seen of shown) {
      expect(seen.your_role).toBe("approver");
      expect(seen.review_url).toBe(session.share_url);
      expect(JSON.stringify(seen)).not.toContain(decisionKey);
    }
    // The requester still gets the decision link (CONTRACT: review_url carries the review key).
    expect((await api.getSession(ALICE, session.id)).review_url).toBe(session.review_url);
    // And the share page an approver lands on says where they decide (on the revised plan).
    await openPlan(session.id, PLAN, "toolu_plan_2");
    const ready = await api.call(
      "GET",
      `/review/${session.id}?key=${keyOf(session.share_url ?? "")}`,
    );
    expect(await ready.text()).toContain(
      `approvers decide with their own token (planport review ${session.id})`,
    );
  });

  it("an approver's requests keep a plan that waits on them from going idle; their awaiting-me list does not", async () => {
    const session = await drivenSession(ALICE.token, { approvers: ["bob"] });
    await openPlan(session.id, PLAN);
    const idleMs = configOf(env).idleMs;
    const setClock = (at: number) =>
      runInDurableObject(sessionObject(session.id), (object: SessionObject) => {
        object.clock = () => at;
      });
    const alarmAt = async (at: number) => {
      await setClock(at);
      await runInDurableObject(sessionObject(session.id), (object: SessionObject) =>
        object.alarm(),
      );
    };
    const share = { reviewKey: keyOf(session.share_url ?? "") };
    const status = async () => (await api.getSession(share, session.id)).status;
    let due = Date.parse((await api.getSession(share, session.id)).updated_at) + idleMs;

    // The approver's planport review: it reads the plan and polls the feed with bob's token.
    await setClock(due - 60_000);
    await api.call("GET", `/v1/sessions/${session.id}/plan`, BOB);
    await api.events(BOB, session.id);
    await alarmAt(due);
    expect(await status()).toBe("requires_action");
    due = due - 60_000 + idleMs;

    // A list of what awaits bob reads every session in it: that is not bob at this one.
    await setClock(due - 60_000);
    await api.call("GET", "/v1/sessions?awaiting=me&limit=100", BOB);
    await alarmAt(due);
    expect(await status()).toBe("archived");
  });

  it("refuses an unknown approver by name, and the requester as their own approver", async () => {
    const unknown = await api.call("POST", "/v1/sessions", ALICE, {
      json: { prompt: "Add OAuth", approvers: ["bob", "mallory"] },
    });
    expect(unknown.status).toBe(400);
    expect(await errorCode(unknown.clone())).toBe("unknown_approver");
    expect(await message(unknown)).toContain('"mallory"');
    const self = await api.call("POST", "/v1/sessions", ALICE, {
      json: { prompt: "Add OAuth", approvers: ["alice"] },
    });
    expect(self.status).toBe(400);
    expect(await message(self)).toContain("alice is you");
    const shape = await api.call("POST", "/v1/sessions", ALICE, {
      json: { prompt: "Add OAuth", approvers: ["Bob!"] },
    });
    expect(shape.status).toBe(400);
  });

  it("with PLANPORT_REQUIRE_APPROVAL=other-owner, every other owner may approve and the requester may not", async () => {
    const rule = { PLANPORT_REQUIRE_APPROVAL: "other-owner" };
    const session = await drivenSession(DAVE.token, {}, rule);
    expect(session.approvers).toEqual(["alice", "bob", "carol"]);
    expect(session.requested_by).toBe((await ownerIdOf(DAVE.token)).slice(0, 8));
    await openPlan(session.id, PLAN);
    const own = await decide({ token: DAVE.token }, session.id, { decision: "approve" });
    expect(own.status).toBe(409);
    expect(await message(own)).toContain("alice, bob or carol");
    expect((await decide(CAROL, session.id, { decision: "approve" })).status).toBe(200);
    expect((await api.getSession({ token: DAVE.token }, session.id)).decided_by).toBe("carol");
  });

  it("without approvers, records the requester's label or the review link as decided_by", async () => {
    const byToken = await drivenSession(ALICE.token);
    await openPlan(byToken.id, PLAN);
    expect(byToken.approvers).toEqual([]);
    expect(byToken.requested_by).toBe("alice");
    expect((await decide(ALICE, byToken.id, { decision: "approve" })).status).toBe(200);
    expect((await api.getSession(ALICE, byToken.id)).decided_by).toBe("alice");

    const byLink = await drivenSession(ALICE.token);
    await openPlan(byLink.id, PLAN);
    const res = await decide({ reviewKey: keyOf(byLink.review_url) }, byLink.id, {
      decision: "approve",
    });
    expect(res.status).toBe(200);
    expect((await api.getSession(ALICE, byLink.id)).decided_by).toBe("review_link");
    expect(await decisionEvents(byLink.id)).toEqual([
      { tool_use_id: PLAN_CALL, kind: "approve", decided_by: "review_link" },
    ]);
  });
});

describe("what the review page offers in team review (reviewView, pure)", () => {
  const NOW = Date.parse("2026-05-01T10:01:05.000Z");
  const polling = { terminal_polled_at: "2026-05-01T10:01:00.000Z" };
  const view = (over: Partial<Session>) =>
    reviewView(
      { session: fixtureSession({ ...polling, ...over }), plan: fixturePlan("# P\n"), events: [] },
      NOW,
    );

  it("the share link offers no question, decision, message or stop, but takes comments", () => {
    const shared = view({ your_role: "viewer" });
    expect([
      shared.viewOnly,
      shared.decision,
      shared.question,
      shared.canMessage,
      shared.canStop,
    ]).toEqual([true, null, null, false, false]);
    expect(shared.canComment).toBe(true);
    expect(shared.phaseHint).toContain("read-only share link");
    const asking = view({
      your_role: "viewer",
      phase: "needs_input",
      pending: {
        kind: "question",
        tool_use_id: "toolu_q",
        input: {},
        opened_at: "2026-05-01T10:01:00.000Z",
      },
    });
    expect(asking.question).toBeNull();
  });

  it("withholds approve and send-to-terminal from all but the approvers, and keeps planning open", () => {
    for (const role of ["requester", "decider"] as const) {
      const decision = view({ your_role: role, approvers: ["bob"] }).decision;
      expect(decision?.approve.offered, role).toBe(false);
      expect(decision?.teleport.offered, role).toBe(false);
      expect(decision?.approvalNeeded, role).toContain("approval of bob");
    }
    const approver = view({ your_role: "approver", approvers: ["bob"] }).decision;
    expect([
      approver?.approve.offered,
      approver?.teleport.offered,
      approver?.approvalNeeded,
    ]).toEqual([true, true, null]);
    const nobody = view({ your_role: "requester", approvers: [] }).decision;
    expect(nobody?.approve.offered).toBe(true);
  });
});
