import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import {
  RECENTLY_USED_SNAPSHOT_MS,
  UNUSED_BLOB_GRACE_MS,
  UNUSED_SNAPSHOTS_KEPT,
} from "../../src/owner/blob-store.ts";
import type { OwnerIndex } from "../../src/owner/owner-index.ts";
import { MAX_SCATTERED_PACKS } from "../../src/owner/pack-store.ts";
import { snapshotRegistry } from "../../src/owner/stub.ts";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import { ingestSnapshot, openSnapshot, readSnapshotIndex } from "../../src/snapshot/index.ts";
import { bodyOf, tarGz } from "../support/tarballs.ts";
import { ownersOf } from "../support/worker/owners.ts";
import { api, createDrivenSession, ownerObject, withPort } from "../support/worker/sessions.ts";

/**
 * A long-lived worker fed whole trees (issue 22: `POST /v1/snapshots` from scripts and older
 * clients, a session per upload, each archived after its plan). What it keeps must be bounded by
 * what the trees hold, not by how many times they were sent: blobs the owner has are not written
 * again, and the snapshots of sessions that ended are let go (docs/DESIGN.md "Retention").
 * test/bench/long-run.ts measures the same on real repositories, with plan times.
 */

/** An owner with nothing stored yet, this file's own (test/support/worker/owners.ts). */
const WHO = ownersOf("snapshot-long-run")();
const FILES = 300;
const UPLOADS = 40;

/** A file of about 16 KiB whose text is its own (300 of them: one 4.8 MB pack). */
function fileText(i: number): string {
  return `// module ${i}\n${`export const value${i} = "${"v".repeat(60)}";\n`.repeat(190)}`;
}

/** Sums the sizes of the R2 objects under `prefix`. */
async function storedBytes(prefix: string): Promise<{ bytes: number; objects: number }> {
  let bytes = 0;
  let objects = 0;
  let cursor: string | undefined;
  do {
    const page = await env.SNAPSHOTS.list({ prefix, cursor });
    for (const object of page.objects) {
      bytes += object.size;
      objects += 1;
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return { bytes, objects };
}

/** The real bucket, counting the bytes of every ranged read made through it. */
function countingReads(bucket: R2Bucket): { bucket: R2Bucket; bytes: () => number } {
  let read = 0;
  const counting = {
    get: async (key: string, options?: R2GetOptions) => {
      const object = await bucket.get(key, options);
      const range = options?.range;
      if (object !== null && range !== undefined && "length" in range && range.length) {
        read += range.length;
      } else if (object !== null) {
        read += object.size;
      }
      return object;
    },
  };
  return { bucket: counting as unknown as R2Bucket, bytes: () => read };
}

interface Uploaded {
  owner: string;
  /** The first tree's size. */
  treeBytes: number;
  /** The last tree's size. */
  lastBytes: number;
  last: SnapshotReceipt;
}

/**
 * 40 uploads of nearly the same 300-file tree (~4.8 MB), each followed by a session that is
 * archived, as a script that plans commit after commit leaves them; then the owner index's
 * garbage collection a minute later, and an hour later. Run once for the tests below.
 */
async function uploadNearlyIdenticalTrees(): Promise<Uploaded> {
  const owner = await ownerIdOf(WHO.token);
  const tree = Array.from({ length: FILES }, (_, i) => fileText(i));
  const treeBytes = tree.reduce((sum, text) => sum + text.length, 0);
  let last: SnapshotReceipt | null = null;
  for (let n = 1; n <= UPLOADS; n++) {
    // Two files change per upload, far apart in the archive (as a commit touches a module and
    // its test), so the new blobs of one upload are never next to each other.
    for (const at of [(n * 7) % FILES, (n * 7 + FILES / 2) % FILES]) {
      tree[at] = `${fileText(at)}// change ${n}\n`;
    }
    const body = await tarGz(tree.map((text, i) => ({ name: `src/m${i}.ts`, body: text })));
    const res = await api.uploadSnapshot(WHO, body);
    expect(res.status).toBe(201);
    last = (await res.json()) as SnapshotReceipt;
    const session = await createDrivenSession(WHO.token, { snapshot_id: last.id });
    await api.archive(WHO, session.id);
  }
  if (last === null) throw new Error("no upload");
  const lastBytes = tree.reduce((sum, text) => sum + text.length, 0);
  // The sessions ended, so their snapshots are unused: past the moment a client could still be
  // starting a session on one, the collector keeps the owner's most recently used few.
  // An hour later the blobs only the purged snapshots used are gone too, with the packs that
  // held nothing else.
  const index = ownerObject(owner);
  for (const later of [
    RECENTLY_USED_SNAPSHOT_MS + 1,
    RECENTLY_USED_SNAPSHOT_MS + UNUSED_BLOB_GRACE_MS + 2,
  ]) {
    await runInDurableObject(index, (object: OwnerIndex) => {
      object.clock = () => Date.now() + later;
    });
    await runDurableObjectAlarm(index);
  }
  await runInDurableObject(index, (object: OwnerIndex) => {
    object.clock = () => Date.now();
  });
  return { owner, treeBytes, lastBytes, last };
}

let uploading: Promise<Uploaded> | null = null;
function uploaded(): Promise<Uploaded> {
  uploading ??= uploadNearlyIdenticalTrees();
  return uploading;
}

describe("a long-lived worker fed 40 nearly identical tarballs, each session archived", () => {
  it("keeps about one tree's worth of packs in R2, not one per upload", async () => {
    const { owner, treeBytes } = await uploaded();
    // The first tree, and what the snapshots the owner keeps read beside it: the changed files
    // (2 of ~16 KiB per upload) and their gathered copies (pack-store.ts).
    const packs = await storedBytes(`blobs/${owner}/`);
    expect(packs.bytes).toBeLessThan(treeBytes * 2.5);
  }, 180_000);

  it("reads the last snapshot from a few packs, about one tree's bytes, not a pack per upload", async () => {
    const { owner, treeBytes, lastBytes, last } = await uploaded();
    const stored = await readSnapshotIndex(env.SNAPSHOTS, owner, last.id);
    const packs = new Set(stored?.files.map((f) => f.key));
    // The first tree's pack, a gathered one, and at most the scattered ones a commit allows.
    expect(packs.size).toBeLessThanOrEqual(MAX_SCATTERED_PACKS + 2);
    const reads = countingReads(env.SNAPSHOTS);
    let scanned = 0;
    for await (const file of openSnapshot(reads.bucket, owner, last.id).scan()) {
      scanned += file.text.length;
    }
    expect(scanned).toBe(lastBytes);
    expect(reads.bytes()).toBeLessThan(treeBytes * 1.5);
  }, 180_000);

  it("keeps the indexes of the most recently used snapshots only, the newest among them", async () => {
    const { owner, last } = await uploaded();
    const indexes = await storedBytes(`snapshots/${owner}/`);
    expect(indexes.objects).toBe(UNUSED_SNAPSHOTS_KEPT);
    // The next upload of the newest tree (or a delta against it) still finds it.
    expect((await api.call("HEAD", `/v1/snapshots/${last.id}`, WHO)).status).toBe(200);
  }, 180_000);
});

describe("what a long-lived worker must still keep", () => {
  it("a session that ended with remote changes keeps its snapshot (its diff needs it)", async () => {
    const body = await tarGz([{ name: "src/a.ts", body: "export const a = 1;\n" }]);
    const res = await api.uploadSnapshot({ token: "token-bob" }, body);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as SnapshotReceipt;
    const session = await createDrivenSession("token-bob", { snapshot_id: id });
    await withPort(session.id, (port) => port.writeOverlay("src/a.ts", "export const a = 2;\n"));
    await api.archive({ token: "token-bob" }, session.id);
    const index = ownerObject(await ownerIdOf("token-bob"));
    expect(await index.snapshotsInUse()).toContain(id);
    expect(await api.changes({ token: "token-bob" }, session.id)).toContain("+export const a = 2;");
  }, 60_000);

  it("a snapshot committed before a gather reads every file after its blobs moved; old packs go with it", async () => {
    const owner = `owner-${crypto.randomUUID().slice(0, 8)}`;
    const registry = snapshotRegistry(env, owner);
    const tree: Record<string, string> = {};
    for (let i = 0; i < 8; i++) tree[`src/f${i}.ts`] = `export const f${i} = 0;\n`;
    const ids: string[] = [];
    const trees: Record<string, string>[] = [];
    for (let n = 0; n <= MAX_SCATTERED_PACKS; n++) {
      if (n > 0) tree[`src/f${n}.ts`] = `export const f${n} = ${n};\n`;
      const body = await tarGz(Object.entries(tree).map(([name, text]) => ({ name, body: text })));
      const stored = await ingestSnapshot(env.SNAPSHOTS, registry, owner, bodyOf(body));
      if (!stored.ok) throw new Error(JSON.stringify(stored.error));
      ids.push(stored.value.id);
      trees.push({ ...tree });
    }
    const packsRead = async (id: string) =>
      new Set((await readSnapshotIndex(env.SNAPSHOTS, owner, id))?.files.map((f) => f.key));
    // The last commit would have read the first pack and one small pack per later upload, more
    // than a commit allows: it gathered them into one.
    expect((await packsRead(ids.at(-1) as string)).size).toBe(1);
    const readAll = async (id: string) => {
      const files: Record<string, string> = {};
      for await (const { path, text } of openSnapshot(env.SNAPSHOTS, owner, id).scan()) {
        files[path] = text;
      }
      return files;
    };
    for (const [i, id] of ids.entries()) expect(await readAll(id)).toEqual(trees[i]);

    // The older snapshots go: the packs only they read go with them, the last still reads.
    const oldPacks = new Set<string>();
    for (const id of ids.slice(0, -1)) for (const p of await packsRead(id)) oldPacks.add(p);
    const index = ownerObject(owner);
    await runInDurableObject(index, async (object: OwnerIndex, state) => {
      const snapshots = (
        object as unknown as {
          snapshots: {
            markUnused(o: string, id: string): void;
            purge(o: string, id: string): Promise<void>;
            collectGarbage(): Promise<void>;
          };
        }
      ).snapshots;
      for (const id of ids.slice(0, -1)) {
        state.storage.transactionSync(() => snapshots.markUnused(owner, id));
        await snapshots.purge(owner, id);
      }
      object.clock = () => Date.now() + UNUSED_BLOB_GRACE_MS + 1;
      await snapshots.collectGarbage();
      object.clock = () => Date.now();
    });
    const left = new Set(
      (await env.SNAPSHOTS.list({ prefix: `blobs/${owner}/` })).objects.map((o) => o.key),
    );
    expect([...oldPacks].filter((p) => left.has(p))).toEqual([]);
    expect(left).toEqual(await packsRead(ids.at(-1) as string));
    expect(await readAll(ids.at(-1) as string)).toEqual(trees.at(-1));
  }, 60_000);

  it("a blob dropped by the collector while a tarball is stored is written after all", async () => {
    const owner = `owner-${crypto.randomUUID().slice(0, 8)}`;
    const registry = snapshotRegistry(env, owner);
    const text = "export const kept = 1;\n";
    // The owner has the blob, unused (its snapshot went): it is in its grace.
    const first = await ingestSnapshot(
      env.SNAPSHOTS,
      registry,
      owner,
      bodyOf(await tarGz([{ name: "a.ts", body: text }])),
    );
    if (!first.ok) throw new Error(JSON.stringify(first.error));
    const index = ownerObject(owner);
    await runInDurableObject(index, async (object: OwnerIndex, state) => {
      const snapshots = (
        object as unknown as {
          snapshots: {
            markUnused(o: string, id: string): void;
            purge(o: string, id: string): Promise<void>;
          };
        }
      ).snapshots;
      state.storage.transactionSync(() => snapshots.markUnused(owner, first.value.id));
      await snapshots.purge(owner, first.value.id);
    });
    // A tarball holding it: the owner says it has it, and then — before the commit — the grace
    // ends and the collector drops it.
    let asked = 0;
    const racing = {
      ...registry,
      missingBlobs: async (ids: string[]) => {
        const missing = await registry.missingBlobs(ids);
        if (asked++ === 0) {
          await runInDurableObject(index, async (object: OwnerIndex) => {
            object.clock = () => Date.now() + UNUSED_BLOB_GRACE_MS + 1;
            await object.alarm();
            object.clock = () => Date.now();
          });
        }
        return missing;
      },
    };
    const second = await ingestSnapshot(
      env.SNAPSHOTS,
      racing,
      owner,
      bodyOf(await tarGz([{ name: "b.ts", body: text }])),
    );
    expect(second.ok ? "stored" : second.error.code).toBe("stored");
    if (!second.ok) return;
    expect(await openSnapshot(env.SNAPSHOTS, owner, second.value.id).read("b.ts")).toBe(text);
  }, 60_000);
});
