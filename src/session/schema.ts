import { announcedOf } from "../webhooks/events.ts";
import { pendingWait } from "./decisions/waits.ts";
import { backfillEventRecords } from "./events/backfill.ts";
import { newReviewKey } from "./ids.ts";
import type { SessionRow } from "./session-row.ts";
import { sessionView } from "./session-view.ts";

/**
 * The session Durable Object's SQLite schema, beside the class that owns it. Migrations only
 * ever append: a stored object runs the ones it has not seen yet, in order, at start-up, in one
 * transaction. A step is a statement, or a function for a conversion SQL cannot say.
 */

type MigrationStep = string | ((sql: SqlStorage) => void);

/**
 * The most characters of JSON one stored value (an event, a script) may have: SQLite in a
 * Durable Object holds at most 2 MB per value, so stay clearly below.
 */
export const MAX_STORED_JSON_CHARS = 1_500_000;

const MIGRATIONS: readonly (readonly MigrationStep[])[] = [
  [
    // The one session row. Times are ms since the epoch. (Version 1 stored `outcome` as JSON;
    // version 2 replaced it by `outcome_kind` and `outcome_subtype`.)
    `CREATE TABLE session (
      id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      review_key TEXT NOT NULL,
      title TEXT NOT NULL,
      prompt TEXT NOT NULL,
      planner TEXT NOT NULL,
      instructions TEXT,
      ask_timeout_s INTEGER,
      max_turns INTEGER NOT NULL,
      script TEXT,
      snapshot_id TEXT,
      plan_path TEXT NOT NULL,
      permission_mode TEXT NOT NULL,
      pre_plan_mode TEXT NOT NULL,
      reject_count INTEGER NOT NULL DEFAULT 0,
      outcome TEXT,
      ended_subtype TEXT,
      archived_at INTEGER,
      executed INTEGER NOT NULL DEFAULT 0,
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      engine_state TEXT,
      step_due_at INTEGER,
      wake_seq INTEGER NOT NULL DEFAULT 0,
      afk_due_at INTEGER,
      purge_due_at INTEGER,
      terminal_polled_at INTEGER,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`,
    // The append-only log. `seq` is the rowid, so a feed page is one range scan of the b-tree.
    `CREATE TABLE events (
      seq INTEGER PRIMARY KEY,
      type TEXT NOT NULL,
      json TEXT NOT NULL
    )`,
    // One row per decided ExitPlanMode: the primary key is what makes a decision happen once.
    `CREATE TABLE decisions (
      tool_use_id TEXT PRIMARY KEY,
      decision TEXT NOT NULL,
      feedback TEXT,
      comments TEXT,
      decided_at INTEGER NOT NULL
    )`,
    // AskUserQuestion / ExitPlanMode waits; at most one has closed_at NULL.
    `CREATE TABLE waits (
      tool_use_id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      input TEXT NOT NULL,
      opened_at INTEGER NOT NULL,
      closed_at INTEGER,
      partial_answers TEXT NOT NULL DEFAULT '{}'
    )`,
    `CREATE TABLE plan_revisions (
      revision INTEGER PRIMARY KEY,
      content TEXT NOT NULL,
      edited_by_user INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    )`,
    // Copy-on-write workspace: a row shadows the snapshot's file; deleted = 1 removes it.
    `CREATE TABLE overlay (
      path TEXT PRIMARY KEY,
      content TEXT,
      deleted INTEGER NOT NULL
    )`,
  ],
  [
    // The outcome once, as plain columns; the execution target is derived from the kind
    // (src/protocol/session.ts executionTargetOf), so it is not stored at all.
    "ALTER TABLE session ADD COLUMN outcome_kind TEXT",
    "ALTER TABLE session ADD COLUMN outcome_subtype TEXT",
    `UPDATE session SET outcome_kind = json_extract(outcome, '$.kind'),
      outcome_subtype = json_extract(outcome, '$.subtype') WHERE outcome IS NOT NULL`,
    "ALTER TABLE session DROP COLUMN outcome",
    // Whether a decision came with an edited plan (the review says "approved (edited by you)").
    // Earlier decisions wrote the edited plan as a user revision in the same transaction, at
    // the decision's own time.
    "ALTER TABLE decisions ADD COLUMN plan_edited INTEGER NOT NULL DEFAULT 0",
    `UPDATE decisions SET plan_edited = 1 WHERE decision != 'reject' AND EXISTS (
      SELECT 1 FROM plan_revisions r
      WHERE r.edited_by_user = 1 AND r.created_at = decisions.decided_at)`,
    // Events written before their records were fields: decisions, answers, denials.
    backfillEventRecords,
  ],
  [
    // The planning workflow and the best-of-N group, as given at creation.
    "ALTER TABLE session ADD COLUMN variant TEXT NOT NULL DEFAULT 'simple'",
    "ALTER TABLE session ADD COLUMN group_name TEXT",
    // What the model calls cost in dollars; NULL once a call's price was unknown (NULL + x is
    // NULL in SQL, so it stays unknown). Older sessions priced nothing: a model planner's
    // tokens are of unknown cost, the offline planner and scripted replays cost nothing.
    "ALTER TABLE session ADD COLUMN cost_usd REAL DEFAULT 0",
    `UPDATE session SET cost_usd = NULL
      WHERE planner NOT IN ('offline', 'scripted') AND (input_tokens > 0 OR output_tokens > 0)`,
  ],
  [
    // Webhooks (DESIGN.md "Webhooks"): what receivers were last told (one row), and the outbox.
    // `origin` is the base of the review link when PLANPORT_PUBLIC_URL is not set: the
    // request's at creation, then that of the owner's latest request (DESIGN.md "Review links").
    `CREATE TABLE webhook_state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      origin TEXT NOT NULL,
      phase TEXT,
      outcome TEXT
    )`,
    // One row per delivery; `id` and `body` never change, so every attempt sends the same
    // bytes. `next_attempt_at` is NULL once it is delivered, gone (410) or dropped.
    `CREATE TABLE webhook_outbox (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL,
      next_attempt_at INTEGER,
      state TEXT NOT NULL,
      last_error TEXT
    )`,
    "CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE state = 'pending'",
    // A session stored before webhooks existed has told nobody anything, and nothing it did
    // then is news now: its present phase and outcome count as announced.
    rememberPresentState,
  ],
  [
    // Team review (DESIGN.md "Team review"): the view key beside the decision key, drawn for
    // sessions stored before it too; the owners whose approval the plan needs (JSON
    // [{owner, label}], none before); the requester's label; who made each decision.
    "ALTER TABLE session ADD COLUMN view_key TEXT NOT NULL DEFAULT ''",
    (sql) => {
      sql.exec("UPDATE session SET view_key = ? WHERE view_key = ''", newReviewKey());
    },
    "ALTER TABLE session ADD COLUMN approvers TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE session ADD COLUMN requester_label TEXT",
    "ALTER TABLE decisions ADD COLUMN decided_by TEXT",
    // Comments readers left as suggestions for whoever decides.
    `CREATE TABLE suggestions (
      seq INTEGER PRIMARY KEY,
      quote TEXT NOT NULL,
      text TEXT NOT NULL,
      author TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`,
  ],
  [
    // Idle sessions (DESIGN.md "Retention"): the last request of a person who may act on the
    // session (its requester's or an approver's token, or the decision link), written at most
    // every 10 s. NULL until one comes; a session stored before counts from its last change.
    "ALTER TABLE session ADD COLUMN person_seen_at INTEGER",
    // Webhooks are retried for 20 minutes from their first attempt (DESIGN.md "Webhooks"); a
    // delivery stored before counts from its creation.
    "ALTER TABLE webhook_outbox ADD COLUMN first_attempt_at INTEGER",
  ],
  [
    // Remote execution's commands (docs/EXECUTION.md): one row per `Bash` run, written with
    // its tool result; `is_test` marks a test run (the Session's `last_test_run`).
    `CREATE TABLE command_runs (
      seq INTEGER PRIMARY KEY,
      tool_use_id TEXT NOT NULL,
      command TEXT NOT NULL,
      exit_code INTEGER,
      timed_out INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      is_test INTEGER NOT NULL,
      finished_at INTEGER NOT NULL
    )`,
  ],
];

/** The schema version a session's database is brought up to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Records an existing session's phase and outcome as announced (migration 4). Reads the row as
 * it is at version 4 (`SELECT *`): `readRow` names columns later versions add.
 */
function rememberPresentState(sql: SqlStorage): void {
  const row = sql.exec("SELECT * FROM session LIMIT 1").toArray()[0] as SessionRow | undefined;
  if (row === undefined) return;
  const now = announcedOf(sessionView(row, pendingWait(sql), ""));
  sql.exec(
    "INSERT INTO webhook_state (id, origin, phase, outcome) VALUES (1, '', ?, ?)",
    now.phase,
    now.outcome,
  );
}

/**
 * Whether this object ever held a session. Objects reached with an id that was never created
 * stay without tables, so probing ids leaves nothing stored.
 */
export function hasSchema(sql: SqlStorage): boolean {
  return (
    sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
      .toArray().length > 0
  );
}

/**
 * Brings the object's database up to the current schema (or, for tests of old sessions, up to
 * version `upTo`). Cheap when up to date (one read); run it inside a transaction, so a failed
 * step leaves the previous version intact.
 */
export function migrate(sql: SqlStorage, upTo = MIGRATIONS.length): void {
  sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = sql.exec<{ version: number }>("SELECT version FROM schema_version").toArray()[0];
  const current = row?.version ?? 0;
  for (let v = current; v < upTo; v++) {
    for (const step of MIGRATIONS[v] ?? []) {
      if (typeof step === "string") sql.exec(step);
      else step(sql);
    }
  }
  if (row === undefined) sql.exec("INSERT INTO schema_version (version) VALUES (?)", upTo);
  else if (current < upTo) sql.exec("UPDATE schema_version SET version = ?", upTo);
}
