/**
 * The session Durable Object's SQLite schema, beside the class that owns it. Migrations only
 * ever append: a stored object runs the ones it has not seen yet, in order, at start-up.
 */

const MIGRATIONS: readonly (readonly string[])[] = [
  [
    // The one session row. Times are ms since the epoch; `outcome` is JSON.
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
];

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
 * Brings the object's database up to the current schema. Cheap when up to date (one read).
 *
 * @example migrate(ctx.storage.sql);
 */
export function migrate(sql: SqlStorage): void {
  sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = sql.exec<{ version: number }>("SELECT version FROM schema_version").toArray()[0];
  const current = row?.version ?? 0;
  for (let v = current; v < MIGRATIONS.length; v++) {
    for (const statement of MIGRATIONS[v] ?? []) sql.exec(statement);
  }
  if (row === undefined)
    sql.exec("INSERT INTO schema_version (version) VALUES (?)", MIGRATIONS.length);
  else if (current < MIGRATIONS.length)
    sql.exec("UPDATE schema_version SET version = ?", MIGRATIONS.length);
}
