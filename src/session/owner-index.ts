import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import { deleteSnapshot } from "../snapshot/index.ts";

/**
 * One Durable Object per owner (`OWNERS.idFromName(owner)`): the owner's session ids, newest
 * first (ids sort by creation time), and which snapshot each uses, so retention deletes a
 * snapshot from R2 only when no session of the owner still needs it. Chosen over D1: no
 * provisioning or migration command, identical under `wrangler dev` and in production,
 * strongly consistent per owner, and it spreads across owners.
 */

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    snapshot_id TEXT,
    created_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS sessions_by_snapshot ON sessions (snapshot_id)",
  // Snapshots whose deletion from R2 failed; the alarm tries again.
  `CREATE TABLE IF NOT EXISTS orphan_snapshots (
    owner TEXT NOT NULL,
    snapshot_id TEXT NOT NULL,
    PRIMARY KEY (owner, snapshot_id)
  )`,
];

const ORPHAN_RETRY_MS = 3_600_000;

export interface SessionIdPage {
  ids: string[];
  hasMore: boolean;
}

export class OwnerIndex extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.storage.transactionSync(() => {
      for (const statement of MIGRATIONS) this.sql.exec(statement);
    });
  }

  /** Registers a new session (before it is created, so its snapshot is counted as in use). */
  add(sessionId: string, snapshotId: string | null, createdAtMs: number): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO sessions (id, snapshot_id, created_at) VALUES (?, ?, ?)",
      sessionId,
      snapshotId,
      createdAtMs,
    );
  }

  /** Forgets a session whose creation failed; its snapshot is left alone. */
  remove(sessionId: string): void {
    this.sql.exec("DELETE FROM sessions WHERE id = ?", sessionId);
  }

  /**
   * A page of session ids, newest first, older than `before` when given.
   *
   * @example await index.list(20) // { ids: ["ses_…", …], hasMore: false }
   */
  list(limit: number, before?: string): SessionIdPage {
    const rows =
      before === undefined
        ? this.sql.exec<{ id: string }>(
            "SELECT id FROM sessions ORDER BY id DESC LIMIT ?",
            limit + 1,
          )
        : this.sql.exec<{ id: string }>(
            "SELECT id FROM sessions WHERE id < ? ORDER BY id DESC LIMIT ?",
            before,
            limit + 1,
          );
    const ids = rows.toArray().map((r) => r.id);
    return { ids: ids.slice(0, limit), hasMore: ids.length > limit };
  }

  /** Snapshot ids still used by this owner's sessions (for tests and retention checks). */
  snapshotsInUse(): string[] {
    return this.sql
      .exec<{ snapshot_id: string }>(
        "SELECT DISTINCT snapshot_id FROM sessions WHERE snapshot_id IS NOT NULL ORDER BY snapshot_id",
      )
      .toArray()
      .map((r) => r.snapshot_id);
  }

  /**
   * Retention: drops a purged session and deletes its snapshot from R2 when no other session of
   * this owner uses it. A failed deletion is retried by the alarm, never lost.
   */
  async dropSession(owner: string, sessionId: string): Promise<void> {
    const row = this.sql
      .exec<{ snapshot_id: string | null }>(
        "SELECT snapshot_id FROM sessions WHERE id = ?",
        sessionId,
      )
      .toArray()[0];
    this.sql.exec("DELETE FROM sessions WHERE id = ?", sessionId);
    const snapshotId = row?.snapshot_id ?? null;
    if (snapshotId === null) return;
    const stillUsed =
      this.sql.exec("SELECT 1 FROM sessions WHERE snapshot_id = ? LIMIT 1", snapshotId).toArray()
        .length > 0;
    if (stillUsed) return;
    this.sql.exec(
      "INSERT OR IGNORE INTO orphan_snapshots (owner, snapshot_id) VALUES (?, ?)",
      owner,
      snapshotId,
    );
    await this.deleteOrphans();
  }

  override async alarm(): Promise<void> {
    await this.deleteOrphans();
  }

  private async deleteOrphans(): Promise<void> {
    const orphans = this.sql
      .exec<{ owner: string; snapshot_id: string }>(
        "SELECT owner, snapshot_id FROM orphan_snapshots",
      )
      .toArray();
    let failed = false;
    for (const { owner, snapshot_id } of orphans) {
      // A session created meanwhile may use it again.
      const used =
        this.sql.exec("SELECT 1 FROM sessions WHERE snapshot_id = ? LIMIT 1", snapshot_id).toArray()
          .length > 0;
      try {
        if (!used) await deleteSnapshot(this.env.SNAPSHOTS, owner, snapshot_id);
        this.sql.exec(
          "DELETE FROM orphan_snapshots WHERE owner = ? AND snapshot_id = ?",
          owner,
          snapshot_id,
        );
      } catch (err) {
        failed = true;
        console.error(`planport: deleting snapshot ${snapshot_id} failed; retrying later`, err);
      }
    }
    if (failed) await this.ctx.storage.setAlarm(Date.now() + ORPHAN_RETRY_MS);
  }
}
