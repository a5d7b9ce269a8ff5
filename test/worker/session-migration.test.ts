import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { type Event, type NewEvent, TOOL_NAMES } from "../../src/protocol/index.ts";
import { newReviewKey, newSessionId } from "../../src/session/ids.ts";
import { migrate } from "../../src/session/schema.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { ALICE, api, sessionObject } from "../support/worker/sessions.ts";

/**
 * Sessions stored by an older version (schema version 1: the outcome as JSON, events without
 * their structured fields) read exactly as before after the object restarts on this version:
 * the same Session, the outcome in columns, and the decisions, answers and denials as data.
 */

const T0 = Date.UTC(2026, 4, 1, 10, 0, 0);
const HOUR = 3_600_000;
const PLAN_PATH = "/plans/bold-eagle.md";

const QUESTION = {
  questions: [
    { question: "Which DB?", header: "DB", options: [{ label: "Postgres" }, { label: "SQLite" }] },
  ],
};
const TWO_QUESTIONS = {
  questions: [
    { question: "Q1", header: "One", options: [{ label: "a" }, { label: "b" }] },
    { question: "Q2", header: "Two", options: [{ label: "c" }, { label: "d" }] },
  ],
};

const use = (id: string, name: string, input: Record<string, unknown> = {}): NewEvent => ({
  type: "assistant",
  message: { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
});
const result = (id: string, content: string, isError = false): NewEvent => ({
  type: "user",
  message: {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }],
  },
});

/** A teleported session's log as version 1 wrote it: the prose only. */
const TELEPORTED_LOG: NewEvent[] = [
  {
    type: "system",
    subtype: "init",
    permission_mode: "plan",
    planner: "offline",
    tools: ["Read", "Glob", "Grep", "LS", "Write", "Edit", "AskUserQuestion", "ExitPlanMode"],
  },
  { type: "user", message: { role: "user", content: "Add OAuth login" } },
  use("toolu_w", "Write", { file_path: "src/app.ts", content: "x" }),
  result("toolu_w", "Permission denied: Plan mode is active: the only file you may write…", true),
  use("toolu_q1", "AskUserQuestion", QUESTION),
  result(
    "toolu_q1",
    'User has answered your questions: "Which DB?"="Postgres". You can now continue with the user\'s answers in mind.',
  ),
  use("toolu_q2", "AskUserQuestion", TWO_QUESTIONS),
  result(
    "toolu_q2",
    'The user did not answer in time and may be away; use your best judgment. They answered some questions before leaving: "Q1"="a". State the assumptions you make in the plan\'s open questions.',
  ),
  use("toolu_p1", "ExitPlanMode"),
  result(
    "toolu_p1",
    "The user reviewed the plan and wants you to keep planning.…\n\nFeedback from the user:\nAdd tests.",
    true,
  ),
  use("toolu_p2", "ExitPlanMode"),
  result(
    "toolu_p2",
    "The user approved this plan and sent it to their local terminal…\n\n__ULTRAPLAN_TELEPORT_LOCAL__\n# Plan (edited)\n",
    true,
  ),
  { type: "result", subtype: "archived", is_error: false, num_turns: 5 },
];

interface V1Session {
  outcome: string | null;
  archived: boolean;
  endedSubtype: string | null;
  log: NewEvent[];
  /** Extra statements writing the waits, decisions and plan revisions. */
  records: [string, ...SqlStorageValue[]][];
}

/** Stores a session the way version 1 did, then restarts every object on this version. */
async function storeV1(session: V1Session): Promise<{ id: string; reviewKey: string }> {
  const id = newSessionId(Date.now());
  const reviewKey = newReviewKey();
  const owner = await ownerIdOf(ALICE.token);
  await runInDurableObject(sessionObject(id), (_o: SessionObject, state) => {
    const sql = state.storage.sql;
    state.storage.transactionSync(() => {
      migrate(sql, 1);
      sql.exec(
        `INSERT INTO session (id, owner, review_key, title, prompt, planner, max_turns, plan_path,
          permission_mode, pre_plan_mode, reject_count, outcome, ended_subtype, archived_at,
          purge_due_at, created_at, updated_at)
         VALUES (?, ?, ?, 'Add OAuth login', 'Add OAuth login', 'offline', 50, ?, 'plan', 'default',
          1, ?, ?, ?, ?, ?, ?)`,
        id,
        owner,
        reviewKey,
        PLAN_PATH,
        session.outcome,
        session.endedSubtype,
        session.archived ? T0 + 5 * HOUR : null,
        Date.now() + 24 * HOUR,
        T0,
        T0 + 5 * HOUR,
      );
      session.log.forEach((event, i) => {
        const stored = {
          id: `evt_${String(i + 1).padStart(16, "0")}`,
          created_at: new Date(T0 + i * 1000).toISOString(),
          ...event,
        };
        sql.exec(
          "INSERT INTO events (seq, type, json) VALUES (?, ?, ?)",
          i + 1,
          event.type,
          JSON.stringify(stored),
        );
      });
      for (const [statement, ...values] of session.records) sql.exec(statement, ...values);
    });
  });
  await abortAllDurableObjects();
  return { id, reviewKey };
}

const WAIT =
  "INSERT INTO waits (tool_use_id, kind, input, opened_at, closed_at, partial_answers) VALUES (?, ?, ?, ?, ?, ?)";
const DECISION =
  "INSERT INTO decisions (tool_use_id, decision, feedback, comments, decided_at) VALUES (?, ?, ?, ?, ?)";
const REVISION =
  "INSERT INTO plan_revisions (revision, content, edited_by_user, created_at) VALUES (?, ?, ?, ?)";

describe("a session stored by schema version 1", () => {
  it("keeps its Session, and gets its outcome as columns and its decisions, answers and denials as data", async () => {
    const { id, reviewKey } = await storeV1({
      outcome: JSON.stringify({ kind: "teleport", execution_target: "local" }),
      archived: true,
      endedSubtype: null,
      log: TELEPORTED_LOG,
      records: [
        [
          WAIT,
          "toolu_q1",
          "question",
          JSON.stringify(QUESTION),
          T0,
          T0 + HOUR,
          JSON.stringify({ "Which DB?": "Postgres" }),
        ],
        [
          WAIT,
          "toolu_q2",
          "question",
          JSON.stringify(TWO_QUESTIONS),
          T0 + HOUR,
          T0 + 2 * HOUR,
          JSON.stringify({ Q1: "a" }),
        ],
        [WAIT, "toolu_p1", "plan", "{}", T0 + 2 * HOUR, T0 + 3 * HOUR, "{}"],
        [WAIT, "toolu_p2", "plan", "{}", T0 + 4 * HOUR, T0 + 5 * HOUR, "{}"],
        [DECISION, "toolu_p1", "reject", "Add tests.", null, T0 + 3 * HOUR],
        [DECISION, "toolu_p2", "teleport", null, null, T0 + 5 * HOUR],
        [REVISION, 1, "# Plan\n", 0, T0 + 2 * HOUR],
        // The user's edit, written by the teleport in the same transaction.
        [REVISION, 2, "# Plan (edited)\n", 1, T0 + 5 * HOUR],
      ],
    });

    const session = await api.getSession(ALICE, id);
    expect(session).toMatchObject({
      status: "archived",
      phase: "done",
      reject_count: 1,
      outcome: { kind: "teleport", execution_target: "local" },
    });
    expect(Object.keys(session.outcome ?? {})).toEqual(["kind", "execution_target"]);

    const events = await api.allEvents(ALICE, id);
    expect(events).toHaveLength(TELEPORTED_LOG.length);
    const byResult = (toolUseId: string) =>
      events.find(
        (e) =>
          e.type === "user" &&
          Array.isArray(e.message.content) &&
          e.message.content.some((b) => b.type === "tool_result" && b.tool_use_id === toolUseId),
      ) as Extract<Event, { type: "user" }>;
    expect(byResult("toolu_w").permission_denied).toBe(true);
    expect(byResult("toolu_q1").answers).toEqual({
      tool_use_id: "toolu_q1",
      answers: { "Which DB?": "Postgres" },
      by: "user",
    });
    expect(byResult("toolu_q2").answers).toEqual({
      tool_use_id: "toolu_q2",
      answers: { Q1: "a" },
      by: "afk",
    });
    expect(byResult("toolu_p1").decision).toEqual({ tool_use_id: "toolu_p1", kind: "reject" });
    expect(byResult("toolu_p2").decision).toEqual({ tool_use_id: "toolu_p2", kind: "teleport" });
    // Everything else is as it was stored, to the letter.
    const untouched = events.filter((e) => e.type !== "user" || !Array.isArray(e.message.content));
    expect(untouched.map((e) => e.id)).toEqual(
      ["1", "2", "3", "5", "7", "9", "11", "13"].map((n) => `evt_${n.padStart(16, "0")}`),
    );
    for (const e of events) expect(e).toMatchObject(TELEPORTED_LOG[Number(e.id.slice(4)) - 1]!);

    const stored = await runInDurableObject(
      sessionObject(id),
      async (object: SessionObject, state) => ({
        columns: state.storage.sql
          .exec<{ name: string }>("SELECT name FROM pragma_table_info('session')")
          .toArray()
          .map((c) => c.name),
        row: state.storage.sql.exec("SELECT outcome_kind, outcome_subtype FROM session").one(),
        review: object.review({ kind: "review", key: reviewKey }),
      }),
    );
    expect(stored.columns).not.toContain("outcome");
    expect(stored.row).toEqual({ outcome_kind: "teleport", outcome_subtype: null });
    expect(stored.review.ok && stored.review.value.decisions).toEqual([
      {
        tool_use_id: "toolu_p1",
        kind: "reject",
        feedback: "Add tests.",
        comments: [],
        plan_edited: false,
        decided_by: null,
        decided_at: new Date(T0 + 3 * HOUR).toISOString(),
      },
      {
        tool_use_id: "toolu_p2",
        kind: "teleport",
        feedback: null,
        comments: [],
        plan_edited: true,
        decided_by: null,
        decided_at: new Date(T0 + 5 * HOUR).toISOString(),
      },
    ]);

    // The review page reads it all from the records.
    const page = await exports.default.fetch(
      new Request(`http://planport.test/review/${id}?key=${encodeURIComponent(reviewKey)}`),
    );
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Write src/app.ts (1 line) → denied");
    expect(html).toContain("Presented the plan for review → not approved, keep planning");
    expect(html).toContain("Add tests.");
    expect(html).toContain("Presented the plan for review → sent to your terminal");
  });

  it("keeps a terminated outcome with its subtype", async () => {
    const { id } = await storeV1({
      outcome: JSON.stringify({ kind: "terminated", subtype: "error_max_turns" }),
      archived: false,
      endedSubtype: "error_max_turns",
      log: [
        TELEPORTED_LOG[0]!,
        {
          type: "result",
          subtype: "error_max_turns",
          is_error: true,
          num_turns: 50,
          message: "Stopped.",
        },
      ],
      records: [],
    });
    const session = await api.getSession(ALICE, id);
    expect(session).toMatchObject({ status: "idle", phase: "done" });
    expect(session.outcome).toEqual({ kind: "terminated", subtype: "error_max_turns" });
  });
});

describe("a session stored by schema version 2", () => {
  it("reads as simple, without a group, its cost unknown when a model planner spent tokens", async () => {
    const owner = await ownerIdOf(ALICE.token);
    const stored = [
      { planner: "anthropic", tokens: 500, cost: null },
      { planner: "anthropic", tokens: 0, cost: 0 },
      { planner: "offline", tokens: 0, cost: 0 },
    ] as const;
    const ids: string[] = [];
    for (const s of stored) {
      const id = newSessionId(Date.now());
      ids.push(id);
      await runInDurableObject(sessionObject(id), (_o: SessionObject, state) => {
        const sql = state.storage.sql;
        state.storage.transactionSync(() => {
          migrate(sql, 2);
          sql.exec(
            `INSERT INTO session (id, owner, review_key, title, prompt, planner, max_turns, plan_path,
              permission_mode, pre_plan_mode, input_tokens, output_tokens, created_at, updated_at)
             VALUES (?, ?, ?, 'Old', 'Old', ?, 50, '/plans/bold-eagle.md', 'plan', 'default', ?, ?, ?, ?)`,
            id,
            owner,
            newReviewKey(),
            s.planner,
            s.tokens,
            s.tokens,
            Date.now(),
            Date.now(),
          );
          sql.exec(
            "INSERT INTO events (seq, type, json) VALUES (1, 'system', ?)",
            JSON.stringify({
              id: "evt_0000000000000001",
              created_at: new Date().toISOString(),
              type: "system",
              subtype: "init",
              permission_mode: "plan",
              planner: s.planner,
              tools: [...TOOL_NAMES],
            }),
          );
        });
      });
    }
    await abortAllDurableObjects();
    for (const [i, id] of ids.entries()) {
      const session = await api.getSession(ALICE, id);
      expect(session).toMatchObject({ variant: "simple", group: null });
      expect(session.usage.cost_usd).toBe(stored[i]!.cost);
    }
  });
});
