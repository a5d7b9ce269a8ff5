import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.ts";
import type { ManifestFile, SkippedEntry } from "../protocol/index.ts";
import { supersedeSiblings } from "../session/groups.ts";
import { sessionStub } from "../session/stub.ts";
import type { CommitOutcome, NewBlob } from "../snapshot/index.ts";
import { AWAITING_INDEX_MIGRATIONS, addAwaiting, awaitingPage, dropAwaiting } from "./awaiting.ts";
import { BLOB_STORE_MIGRATIONS, blobStoreStats, touchSnapshot } from "./blob-store.ts";
import {
  choiceOf,
  claimChoice,
  confirmChoice,
  dueChoices,
  GROUP_INDEX_MIGRATIONS,
  type GroupClaim,
  groupOf,
  groupPage,
  joinGroup,
  leaveGroup,
  nextChoiceCheck,
  releaseChoice,
  settled,
  siblingsOf,
} from "./group-choices.ts";
import { PACK_STORE_MIGRATIONS } from "./pack-store.ts";
import type { NotRegistered, OwnerIndexRpc, SessionIdPage } from "./rpc.ts";
import { SnapshotRegistry } from "./snapshot-registry.ts";

/**
 * One Durable Object per owner (`OWNERS.idFromName(owner)`): the owner's session ids, newest
 * first (ids sort by creation time), and which snapshot each uses, so retention deletes a
 * snapshot from R2 only when no session of the owner still needs it; the owner's blobs and
 * snapshots (snapshot-registry.ts: which blob is where, which snapshots use it); and the best-of-N groups,
 * of which it is the arbiter (session/groups.ts: which session of a group was chosen, and the archiving
 * of the others). Chosen over D1: no
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
  ...GROUP_INDEX_MIGRATIONS,
  ...BLOB_STORE_MIGRATIONS,
  ...PACK_STORE_MIGRATIONS,
  ...AWAITING_INDEX_MIGRATIONS,
];

const ORPHAN_RETRY_MS = 3_600_000;

export class OwnerIndex extends DurableObject<Env> implements OwnerIndexRpc {
  /** Milliseconds since the epoch. A seam: tests move it to reach the arbiter's checks. */
  clock: () => number = () => Date.now();
  private readonly sql: SqlStorage;
  private readonly snapshots: SnapshotRegistry;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.storage.transactionSync(() => {
      for (const statement of MIGRATIONS) this.sql.exec(statement);
    });
    this.snapshots = new SnapshotRegistry(
      ctx.storage,
      env.SNAPSHOTS,
      () => this.clock(),
      (at) => this.setAlarmBy(at),
    );
  }

  /** The ids among `ids` this owner has not stored (docs/PROTOCOL.md "Incremental snapshots"). */
  missingBlobs(ids: string[]): string[] {
    return this.snapshots.missingBlobs(ids);
  }

  /** Records uploaded blobs; answers how many were new. */
  addBlobs(blobs: NewBlob[]): Promise<{ stored: number; bytes: number }> {
    return this.snapshots.addBlobs(blobs);
  }

  /** Commits a tree of stored blobs as a snapshot of `owner`, writing its index. */
  commitSnapshot(
    owner: string,
    id: string,
    files: ManifestFile[],
    skipped: SkippedEntry[],
  ): Promise<CommitOutcome> {
    return this.snapshots.commitSnapshot(owner, id, files, skipped);
  }

  /** True when `owner` has the snapshot and a session may start on it. */
  hasSnapshot(owner: string, id: string): Promise<boolean> {
    return this.snapshots.hasSnapshot(owner, id);
  }

  /** Blob counts (tests and benchmarks). */
  blobStats(): { blobs: number; unused: number; packs: number } {
    return blobStoreStats(this.sql);
  }

  /**
   * Registers a new session (before it is created, so its snapshot is counted as in use), in
   * its best-of-N group when it has one. Answers null, or (nothing registered) the session a
   * group already chose.
   */
  async add(
    sessionId: string,
    snapshotId: string | null,
    createdAtMs: number,
    group: string | null = null,
    owner = "",
  ): Promise<NotRegistered | null> {
    if (snapshotId !== null) await this.snapshots.adoptLegacy(owner, snapshotId);
    return this.ctx.storage.transactionSync(() => {
      // In the same transaction as the registration: a purge cannot start in between.
      if (snapshotId !== null && !this.snapshots.claimForSession(snapshotId)) {
        return { unknownSnapshot: true as const };
      }
      if (group !== null) {
        const chosen = joinGroup(this.sql, group, sessionId);
        if (chosen !== null) return { chosen };
      }
      this.sql.exec(
        "INSERT OR IGNORE INTO sessions (id, snapshot_id, created_at) VALUES (?, ?, ?)",
        sessionId,
        snapshotId,
        createdAtMs,
      );
      return null;
    });
  }

  /** Forgets a session whose creation failed; its snapshot is left alone. */
  remove(sessionId: string): void {
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM sessions WHERE id = ?", sessionId);
      leaveGroup(this.sql, sessionId);
    });
  }

  /**
   * A page of a group's session ids, newest first: one range read of the group's index.
   *
   * @example await index.listGroup("bo3-x1", 20) // { ids: ["ses_…", "ses_…", "ses_…"], hasMore: false }
   */
  listGroup(group: string, limit: number, before?: string): SessionIdPage {
    return groupPage(this.sql, group, limit, before);
  }

  /** The group of a session and all its members, oldest first; null when it is in none. */
  groupMembers(sessionId: string): { group: string; ids: string[] } | null {
    const group = groupOf(this.sql, sessionId);
    if (group === null) return null;
    return { group, ids: groupPage(this.sql, group, 100).ids.reverse() };
  }

  /**
   * The arbiter's first step: a session about to record an approval or a teleport claims its
   * group. The first claim wins (session/groups.ts); the alarm checks it later in case the session
   * crashed before confirming.
   */
  async claimGroup(sessionId: string): Promise<GroupClaim> {
    const claim = this.ctx.storage.transactionSync(() =>
      claimChoice(this.sql, sessionId, this.clock()),
    );
    if (claim.kind === "won") await this.scheduleAlarm();
    return claim;
  }

  /** The claimed decision was refused: the group is open again. */
  releaseGroup(sessionId: string): void {
    releaseChoice(this.sql, sessionId);
  }

  /**
   * The chosen session's decision committed: confirm it and archive every sibling
   * (idempotent). What cannot be done now is retried by the alarm.
   */
  async settleGroup(sessionId: string): Promise<void> {
    const group = groupOf(this.sql, sessionId);
    if (group === null) return;
    const chosen = confirmChoice(this.sql, group, sessionId, this.clock());
    if (chosen !== sessionId) {
      console.error(
        `planport: ${sessionId} decided although ${chosen} holds group ${group}; it is left as it is`,
      );
      return;
    }
    await this.finishChoice(group, chosen);
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

  /** Team review (awaiting.ts): another owner's session names this owner as an approver. */
  addAwaiting(sessionId: string, requester: string, createdAtMs: number): void {
    addAwaiting(this.sql, sessionId, requester, createdAtMs);
  }

  /** Team review: sessions that no longer wait for this owner's approval. */
  dropAwaiting(sessionIds: string[]): void {
    dropAwaiting(this.sql, sessionIds);
  }

  /** Team review: a page of the sessions that may wait for this owner's approval. */
  listAwaiting(limit: number, before?: string): SessionIdPage {
    return awaitingPage(this.sql, limit, before);
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
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM sessions WHERE id = ?", sessionId);
      leaveGroup(this.sql, sessionId);
    });
    const snapshotId = row?.snapshot_id ?? null;
    if (snapshotId === null) return;
    const unused = this.ctx.storage.transactionSync(() => {
      const stillUsed =
        this.sql.exec("SELECT 1 FROM sessions WHERE snapshot_id = ? LIMIT 1", snapshotId).toArray()
          .length > 0;
      if (!stillUsed) this.snapshots.markUnused(owner, snapshotId);
      return !stillUsed;
    });
    if (unused) await this.deleteOrphans();
  }

  /**
   * The session ended and needs its snapshot no more (snapshot-release.ts): it stays listed, and
   * its snapshot is unused from now on unless another session uses it — kept for a grace among
   * the owner's most recently used (blob-store.ts `unusedSnapshots`), then purged, instead of
   * being kept until this session's own purge days later. Idempotent.
   */
  async releaseSnapshot(sessionId: string): Promise<void> {
    const released = this.ctx.storage.transactionSync(() => {
      const row = this.sql
        .exec<{ snapshot_id: string | null }>(
          "SELECT snapshot_id FROM sessions WHERE id = ?",
          sessionId,
        )
        .toArray()[0];
      if (row?.snapshot_id == null) return false;
      this.sql.exec("UPDATE sessions SET snapshot_id = NULL WHERE id = ?", sessionId);
      // Its grace counts from now: it was in use until this moment.
      touchSnapshot(this.sql, row.snapshot_id, this.clock());
      return true;
    });
    // The alarm purges what is due now (the count of unused snapshots may be over its bound).
    if (released) await this.setAlarmBy(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.checkChoices();
    await this.deleteOrphans();
    await this.snapshots.collectGarbage();
  }

  /**
   * Unfinished choices whose check is due: an unconfirmed claim is confirmed or dropped after
   * asking its session whether it recorded the decision (it crashed between its claim and its
   * confirmation); a confirmed one has its siblings archived again.
   */
  private async checkChoices(): Promise<void> {
    for (const due of dueChoices(this.sql, this.clock())) {
      try {
        if (due.confirmed_at === null) {
          const decided = await sessionStub(this.env, due.session_id).chosenPlan();
          // Unchanged while we asked? (Another request may have confirmed or released it.)
          const now = choiceOf(this.sql, due.group_name);
          if (now === null || now.session_id !== due.session_id || now.confirmed_at !== null) {
            continue;
          }
          if (!decided) {
            releaseChoice(this.sql, due.session_id);
            continue;
          }
          confirmChoice(this.sql, due.group_name, due.session_id, this.clock());
        }
        await this.finishChoice(due.group_name, due.session_id);
      } catch (err) {
        settled(this.sql, due.group_name, false, this.clock());
        console.error(`planport: checking group ${due.group_name} failed; retrying later`, err);
      }
    }
    await this.scheduleAlarm();
  }

  private async finishChoice(group: string, chosen: string): Promise<void> {
    const done = await supersedeSiblings(this.env, siblingsOf(this.sql, group, chosen), chosen);
    settled(this.sql, group, done, this.clock());
    await this.scheduleAlarm();
  }

  /** Sets the alarm for the earliest unfinished choice, unless an earlier one is set already. */
  private async scheduleAlarm(): Promise<void> {
    const due = nextChoiceCheck(this.sql);
    if (due === null) return;
    await this.setAlarmBy(due);
  }

  private async deleteOrphans(): Promise<void> {
    const orphans = this.sql
      .exec<{ owner: string; snapshot_id: string }>(
        "SELECT owner, snapshot_id FROM orphan_snapshots",
      )
      .toArray();
    let failed = false;
    for (const { owner, snapshot_id } of orphans) {
      try {
        // Revived by a session created meanwhile, it is left alone (snapshot-registry.ts).
        await this.snapshots.purge(owner, snapshot_id);
      } catch (err) {
        failed = true;
        console.error(`planport: deleting snapshot ${snapshot_id} failed; retrying later`, err);
      }
    }
    if (failed) {
      await this.setAlarmBy(Date.now() + ORPHAN_RETRY_MS);
    }
  }

  /**
   * The one alarm serves the orphan snapshots and the group checks: set it to `at` unless it
   * will fire earlier anyway (one that is firing now, or is past due, counts as unset).
   */
  private async setAlarmBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current <= Date.now() || current > at) {
      await this.ctx.storage.setAlarm(at);
    }
  }
}
