import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { configOf, DEFAULT_RETENTION_DAYS, readConfig } from "../../src/config.ts";
import { UNUSED_SNAPSHOT_GRACE_MS } from "../../src/owner/blob-store.ts";
import type { OwnerIndex } from "../../src/owner/owner-index.ts";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { tarGz } from "../support/tarballs.ts";
import {
  ALICE,
  api,
  createDrivenSession,
  ownerObject,
  sessionObject,
} from "../support/worker/sessions.ts";

const RETENTION_MS = configOf(env).retentionMs;
const DAY_MS = 86_400_000;

/** Moves the session object's clock `ms` ahead and runs its alarm (the purge, when due). */
async function runAlarmAfter(id: string, ms: number): Promise<void> {
  await runInDurableObject(sessionObject(id), (object: SessionObject) => {
    object.clock = () => Date.now() + ms;
  });
  await runDurableObjectAlarm(sessionObject(id));
}

async function uploadSnapshot(files: Record<string, string>): Promise<string> {
  const bytes = await tarGz(Object.entries(files).map(([name, body]) => ({ name, body })));
  const res = await api.uploadSnapshot(ALICE, bytes);
  expect(res.status).toBe(201);
  return ((await res.json()) as SnapshotReceipt).id;
}

/** Moves the owner index's clock `ms` ahead, runs its alarm (the garbage collection), resets it. */
async function runOwnerAlarmAfter(owner: string, ms: number): Promise<void> {
  const index = ownerObject(owner);
  await runInDurableObject(index, (object: OwnerIndex) => {
    object.clock = () => Date.now() + ms;
  });
  await runDurableObjectAlarm(index);
  await runInDurableObject(index, (object: OwnerIndex) => {
    object.clock = () => Date.now();
  });
}

async function snapshotStatus(id: string): Promise<number> {
  return (await api.call("HEAD", `/v1/snapshots/${id}`, ALICE)).status;
}

describe("retention", () => {
  it("reads PLANPORT_RETENTION_DAYS, fractional days included, defaulting to 7; refuses nonsense", () => {
    const retention = (days: string | undefined) => {
      const config = readConfig({ PLANPORT_RETENTION_DAYS: days });
      return config.ok ? config.value.retentionMs : config.error;
    };
    expect(retention(undefined)).toBe(DEFAULT_RETENTION_DAYS * DAY_MS);
    expect(retention("")).toBe(DEFAULT_RETENTION_DAYS * DAY_MS);
    expect(retention("0.5")).toBe(DAY_MS / 2);
    expect(retention("0")).toBe(0);
    for (const bad of ["-1", "soon", "NaN", "Infinity"])
      expect(retention(bad)).toContain(`PLANPORT_RETENTION_DAYS is "${bad}"`);
  });

  it("keeps an archived session until the retention time, then deletes it everywhere", async () => {
    const session = await createDrivenSession();
    await api.archive(ALICE, session.id);
    await runAlarmAfter(session.id, RETENTION_MS - 60_000);
    expect((await api.getSession(ALICE, session.id)).status).toBe("archived");

    await runAlarmAfter(session.id, RETENTION_MS + 1);
    for (const path of ["", "/events", "/plan", "/changes"]) {
      expect((await api.call("GET", `/v1/sessions/${session.id}${path}`, ALICE)).status).toBe(404);
    }
    expect((await api.listSessions(ALICE, { limit: 100 })).data.map((s) => s.id)).not.toContain(
      session.id,
    );
    // Nothing of it is left in the object's storage: not a row, not a table.
    const tables = await runInDurableObject(sessionObject(session.id), (_o: SessionObject, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables.filter((t) => !String(t.name).startsWith("_cf"))).toEqual([]);
  });

  it("never purges a session that has not ended", async () => {
    const session = await createDrivenSession();
    // Past the retention time, short of the idle archive (session-idle.test.ts).
    await runAlarmAfter(session.id, configOf(env).idleMs - 60_000);
    expect((await api.getSession(ALICE, session.id)).status).toBe("idle");
  });

  it("releases a snapshot when the owner's last session using it ends; it goes after the unused grace", async () => {
    const snapshotId = await uploadSnapshot({
      "README.md": "# retention fixture\n",
      "src/a.ts": `export const a = ${Date.now()};\n`,
    });
    const first = await createDrivenSession(ALICE.token, { snapshot_id: snapshotId });
    const second = await createDrivenSession(ALICE.token, { snapshot_id: snapshotId });
    const owner = await ownerIdOf(ALICE.token);
    const index = ownerObject(owner);
    expect(await index.snapshotsInUse()).toContain(snapshotId);

    await api.archive(ALICE, first.id);
    await runAlarmAfter(first.id, RETENTION_MS + 1);
    expect((await api.call("GET", `/v1/sessions/${first.id}`, ALICE)).status).toBe(404);
    await runOwnerAlarmAfter(owner, UNUSED_SNAPSHOT_GRACE_MS + 1);
    expect(await snapshotStatus(snapshotId)).toBe(200);

    // The second session still lists, but its snapshot is no longer in use once it ended.
    await api.archive(ALICE, second.id);
    expect(await index.snapshotsInUse()).not.toContain(snapshotId);
    expect((await api.getSession(ALICE, second.id)).status).toBe("archived");
    await runOwnerAlarmAfter(owner, UNUSED_SNAPSHOT_GRACE_MS - 60_000);
    expect(await snapshotStatus(snapshotId)).toBe(200);
    await runOwnerAlarmAfter(owner, UNUSED_SNAPSHOT_GRACE_MS + 1);
    expect(await snapshotStatus(snapshotId)).toBe(404);
    // Its own purge later finds nothing left to release.
    await runAlarmAfter(second.id, RETENTION_MS + 1);
    expect((await api.call("GET", `/v1/sessions/${second.id}`, ALICE)).status).toBe(404);
  });
});
