import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { configOf } from "../../src/config.ts";
import { UNUSED_BLOB_GRACE_MS, UNUSED_SNAPSHOT_GRACE_MS } from "../../src/owner/blob-store.ts";
import type { OwnerIndex } from "../../src/owner/owner-index.ts";
import type { SnapshotRegistry } from "../../src/owner/snapshot-registry.ts";
import {
  gitBlobId,
  MANIFEST_MAX_BYTES,
  type ManifestFile,
  manifestId,
  type SkippedEntry,
  type SnapshotReceipt,
} from "../../src/protocol/index.ts";
import { OVERSIZED_BODY_DRAIN_BYTES } from "../../src/request-body.ts";
import type { SessionObject } from "../../src/session/session-object.ts";
import { openSnapshot } from "../../src/snapshot/index.ts";
import { gzip, type TarSpec, tarGz } from "../support/tarballs.ts";
import { ownersOf } from "../support/worker/owners.ts";
import {
  api,
  createDrivenSession,
  errorCode,
  ownerObject,
  sessionObject,
} from "../support/worker/sessions.ts";

/**
 * The incremental snapshot protocol over HTTP (docs/PROTOCOL.md "Incremental snapshots"):
 * missing blobs, blob packs, manifests with and without a base, hostile manifests, and
 * retention of blobs shared by several snapshots.
 */

const encoder = new TextEncoder();
const MIB = 1024 * 1024;
const RETENTION_MS = configOf(env).retentionMs;

/** An owner with nothing stored yet, this file's own (test/support/worker/owners.ts). */
const freshOwner = ownersOf("snapshot-incremental");

function blobOf(text: string): string {
  return gitBlobId(encoder.encode(text));
}

function filesOf(tree: Record<string, string>): ManifestFile[] {
  return Object.entries(tree).map(([path, text]) => ({ path, blob: blobOf(text) }));
}

async function missing(who: { token: string }, blobs: string[]): Promise<string[]> {
  const res = await api.call("POST", "/v1/blobs/missing", who, { json: { blobs } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { missing: string[] }).missing;
}

async function uploadBlobs(who: { token: string }, texts: string[]): Promise<Response> {
  const entries: TarSpec[] = texts.map((text) => ({ name: blobOf(text), body: text }));
  return api.call("POST", "/v1/blobs", who, {
    body: await tarGz(entries),
    headers: { "content-type": "application/gzip" },
  });
}

async function commit(
  who: { token: string },
  body: Record<string, unknown>,
  compress = true,
): Promise<Response> {
  const json = encoder.encode(JSON.stringify(body));
  return api.call("POST", "/v1/snapshots/manifest", who, {
    body: compress ? await gzip(json) : json,
    headers: { "content-type": compress ? "application/gzip" : "application/json" },
  });
}

async function fullManifest(
  tree: Record<string, string>,
  skipped: SkippedEntry[] = [],
): Promise<Record<string, unknown>> {
  const files = filesOf(tree);
  return {
    id: await manifestId(files, skipped),
    files: files.map((f) => [f.path, f.blob]),
    skipped,
  };
}

/** Uploads every blob of `tree` and commits it; answers the receipt. */
async function store(
  who: { token: string },
  tree: Record<string, string>,
): Promise<SnapshotReceipt> {
  const res = await uploadBlobs(who, [...new Set(Object.values(tree))]);
  expect(res.status).toBe(201);
  const committed = await commit(who, await fullManifest(tree));
  expect(committed.status).toBe(201);
  return (await committed.json()) as SnapshotReceipt;
}

async function blobStats(who: { token: string }) {
  return ownerObject(await ownerIdOf(who.token)).blobStats();
}

async function keys(prefix: string): Promise<string[]> {
  return (await env.SNAPSHOTS.list({ prefix })).objects.map((o) => o.key);
}

describe("incremental snapshots: blobs and manifests", () => {
  it("answers which blobs are missing, stores the sent ones once, commits the tree", async () => {
    const who = freshOwner();
    const tree = {
      "src/a.ts": "export const a = 1;\n",
      "src/b.ts": "export const b = 2;\n",
      "copy.ts": "export const a = 1;\n",
    };
    const ids = [...new Set(Object.values(tree).map(blobOf))];
    expect(await missing(who, ids)).toEqual(ids);
    const upload = await uploadBlobs(who, [tree["src/a.ts"]]);
    expect(upload.status).toBe(201);
    expect(await upload.json()).toEqual({ received: 1, stored: 1, bytes: 20 });
    expect(await missing(who, ids)).toEqual([blobOf(tree["src/b.ts"])]);
    // Sending it again stores nothing new.
    expect(await (await uploadBlobs(who, [tree["src/a.ts"]])).json()).toMatchObject({ stored: 0 });

    const early = await commit(who, await fullManifest(tree));
    expect(early.status).toBe(409);
    const body = (await early.json()) as { error: { code: string }; missing: string[] };
    expect(body.error.code).toBe("blobs_missing");
    expect(body.missing).toEqual([blobOf(tree["src/b.ts"])]);

    const receipt = await store(who, tree);
    expect(receipt).toMatchObject({ files: 3, skipped: [] });
    expect((await api.call("HEAD", `/v1/snapshots/${receipt.id}`, who)).status).toBe(200);
    const files = openSnapshot(env.SNAPSHOTS, await ownerIdOf(who.token), receipt.id);
    expect((await files.list()).map((f) => f.path)).toEqual(["copy.ts", "src/a.ts", "src/b.ts"]);
    expect(await files.read("copy.ts")).toBe(tree["copy.ts"]);
    expect(await blobStats(who)).toMatchObject({ blobs: 2 });
    // The same tree again: the stored receipt.
    expect(await (await commit(who, await fullManifest(tree), false)).json()).toEqual(receipt);
  });

  it("builds on a base: only the changed path and the removed one are sent", async () => {
    const who = freshOwner();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 50; i++) tree[`src/f${i}.ts`] = `export const f${i} = ${i};\n`;
    const first = await store(who, tree);
    const changed = "export const f3 = 'changed';\n";
    const next: Record<string, string> = { ...tree, "src/f3.ts": changed };
    delete next["src/f7.ts"];
    expect(await missing(who, [blobOf(changed)])).toHaveLength(1);
    expect((await uploadBlobs(who, [changed])).status).toBe(201);
    const res = await commit(who, {
      id: await manifestId(filesOf(next), []),
      base: first.id,
      files: [["src/f3.ts", blobOf(changed)]],
      removed: ["src/f7.ts"],
      skipped: [],
    });
    expect(res.status).toBe(201);
    const second = (await res.json()) as SnapshotReceipt;
    expect(second.files).toBe(49);
    const read = openSnapshot(env.SNAPSHOTS, await ownerIdOf(who.token), second.id);
    expect(await read.read("src/f3.ts")).toBe(changed);
    expect(await read.read("src/f7.ts")).toBeNull();
    expect(await read.read("src/f9.ts")).toBe(tree["src/f9.ts"]);
    expect(await blobStats(who)).toMatchObject({ blobs: 51 });
  });

  it("dedupes across owners never: another owner's blobs are missing for it", async () => {
    const alice = freshOwner();
    const bob = freshOwner();
    const receipt = await store(alice, { "a.ts": "shared text\n" });
    expect(await missing(bob, [blobOf("shared text\n")])).toHaveLength(1);
    expect((await api.call("HEAD", `/v1/snapshots/${receipt.id}`, bob)).status).toBe(404);
    const res = await commit(bob, await fullManifest({ "a.ts": "shared text\n" }));
    expect(res.status).toBe(409);
  });

  it("keeps old clients working: a tar.gz upload shares its blobs with manifests", async () => {
    const who = freshOwner();
    const tarball = await tarGz([
      { name: "src/a.ts", body: "export const a = 1;\n" },
      { name: "logo.png", body: new Uint8Array([0x89, 0x50, 0, 1]) },
    ]);
    const res = await api.call("POST", "/v1/snapshots", who, {
      body: tarball,
      headers: { "content-type": "application/gzip" },
    });
    expect(res.status).toBe(201);
    const receipt = (await res.json()) as SnapshotReceipt;
    expect(receipt).toMatchObject({ files: 1, skipped: [{ path: "logo.png", reason: "binary" }] });
    expect((await api.call("HEAD", `/v1/snapshots/${receipt.id}`, who)).status).toBe(200);
    expect(await missing(who, [blobOf("export const a = 1;\n")])).toEqual([]);
    const session = await createDrivenSession(who.token, { snapshot_id: receipt.id });
    expect(session.snapshot_id).toBe(receipt.id);
  });
});

describe("incremental snapshots: hostile input gets a clear 4xx", () => {
  const who = freshOwner();

  it("refuses a blob whose content does not hash to its name, or that is binary", async () => {
    const wrong = await api.call("POST", "/v1/blobs", who, {
      body: await tarGz([{ name: blobOf("one\n"), body: "two\n" }]),
      headers: { "content-type": "application/gzip" },
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain("does not match its content");
    const binary = new Uint8Array([0, 1, 2, 3]);
    const bin = await api.call("POST", "/v1/blobs", who, {
      body: await tarGz([{ name: gitBlobId(binary), body: binary }]),
      headers: { "content-type": "application/gzip" },
    });
    expect(bin.status).toBe(400);
    const named = await api.call("POST", "/v1/blobs", who, {
      body: await tarGz([{ name: "../../etc/passwd", body: "x\n" }]),
      headers: { "content-type": "application/gzip" },
    });
    expect(named.status).toBe(400);
    expect(await named.text()).toContain("not named by a blob id");
    expect((await blobStats(who)).blobs).toBe(0);
    expect(await keys(`blobs/${await ownerIdOf(who.token)}/`)).toEqual([]);
  });

  it("refuses paths an archive would skip, duplicates and conflicts by name", async () => {
    await uploadBlobs(who, ["x\n"]);
    const blob = blobOf("x\n");
    for (const [path, problem] of [
      ["../etc/passwd", "parent segment"],
      ["/etc/passwd", "absolute path"],
      ["./a.ts", "normal form"],
      ["a//b.ts", "normal form"],
      ["evil\u001b[2J.ts", "invalid name"],
    ] as const) {
      const files = [{ path, blob }];
      const res = await commit(who, {
        id: await manifestId(files, []),
        files: [[path, blob]],
        skipped: [],
      });
      expect(res.status, path).toBe(400);
      const text = await res.text();
      expect(text).toContain("invalid_manifest");
      expect(text, path).toContain(problem);
    }
    const dup = await commit(who, {
      id: "0".repeat(64),
      files: [
        ["a.ts", blob],
        ["a.ts", blob],
      ],
      skipped: [],
    });
    expect(await dup.text()).toContain("listed twice");
    const conflict = [
      { path: "a", blob },
      { path: "a/b", blob },
    ];
    const res = await commit(who, {
      id: await manifestId(conflict, []),
      files: conflict.map((f) => [f.path, f.blob]),
      skipped: [],
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("both a file and a folder");
  });

  it("refuses a wrong id, an unknown blob, an unknown base and 100,000 entries", async () => {
    await uploadBlobs(who, ["y\n"]);
    const wrongId = await commit(who, {
      id: "f".repeat(64),
      files: [["y.ts", blobOf("y\n")]],
      skipped: [],
    });
    expect(wrongId.status).toBe(400);
    expect(await wrongId.text()).toContain("hashes to");

    const unknownBlob = "1".repeat(40);
    const unknown = await commit(who, {
      id: await manifestId([{ path: "z.ts", blob: unknownBlob }], []),
      files: [["z.ts", unknownBlob]],
      skipped: [],
    });
    expect(unknown.status).toBe(409);
    expect(await errorCode(unknown)).toBe("blobs_missing");

    const base = await commit(who, {
      id: "a".repeat(64),
      base: "b".repeat(64),
      files: [],
      removed: [],
      skipped: [],
    });
    expect(base.status).toBe(400);
    expect(await errorCode(base)).toBe("unknown_snapshot");

    const flood = Array.from({ length: 100_000 }, (_, i) => [`f/${i}`, blobOf("y\n")]);
    const big = await commit(who, { id: "c".repeat(64), files: flood, skipped: [] });
    expect(big.status).toBe(413);
    expect(await errorCode(big)).toBe("snapshot_too_many_files");

    const notJson = await api.call("POST", "/v1/snapshots/manifest", who, {
      body: "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.status).toBe(400);
    expect(await errorCode(notJson)).toBe("invalid_manifest");
    const badIds = await api.call("POST", "/v1/blobs/missing", who, { json: { blobs: ["../x"] } });
    expect(badIds.status).toBe(400);
  }, 60_000);
});

describe("incremental snapshots: a manifest is read within its limits (issue 22)", () => {
  const who = freshOwner();

  /** A manifest's JSON text of `entries` files, made as a stream of ~1 MiB pieces. */
  function manifestStream(entries: number): {
    body: ReadableStream<Uint8Array>;
    sent: () => number;
  } {
    let sent = 0;
    let next = 0;
    const blob = blobOf("y\n");
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          let piece = next === 0 ? `{"id":"${"c".repeat(64)}","files":[` : "";
          for (; next < entries && piece.length < 1024 * 1024; next++) {
            piece += `${next === 0 ? "" : ","}["${next.toString(36)}","${blob}"]`;
          }
          if (next >= entries) piece += '],"skipped":[]}';
          const bytes = encoder.encode(piece);
          sent += bytes.byteLength;
          controller.enqueue(bytes);
          if (next >= entries) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return { body, sent: () => sent };
  }

  it("refuses 600,000 entries (28 MiB of JSON) at the 20,001st with 413 snapshot_too_many_files, reading little more", async () => {
    const { body, sent } = manifestStream(600_000);
    const res = await api.fetcher(
      new Request("http://planport.test/v1/snapshots/manifest", {
        method: "POST",
        headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
        body,
        // @ts-expect-error: workerd needs the half-duplex hint for a streamed request body
        duplex: "half",
      }),
    );
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("snapshot_too_many_files");
    // 20,001 entries are ~1.1 MiB; past the refusal only the stretch drained on purpose.
    expect(sent()).toBeLessThan(1.2 * MIB + OVERSIZED_BODY_DRAIN_BYTES + 2 * MIB);
  }, 60_000);

  it("refuses a gzip bomb of 600,000 entries the same way, and a manifest over 8 MiB of JSON", async () => {
    const blob = blobOf("y\n");
    const entries = Array.from({ length: 600_000 }, (_, i) => `["${i.toString(36)}","${blob}"]`);
    const bomb = await gzip(
      encoder.encode(`{"id":"${"c".repeat(64)}","files":[${entries.join(",")}],"skipped":[]}`),
    );
    const res = await api.call("POST", "/v1/snapshots/manifest", who, {
      body: bomb,
      headers: { "content-type": "application/gzip" },
    });
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("snapshot_too_many_files");
    const padded = encoder.encode(
      `{"id":"${"c".repeat(64)}","files":[],"skipped":[]}${" ".repeat(MANIFEST_MAX_BYTES)}`,
    );
    const big = await api.call("POST", "/v1/snapshots/manifest", who, {
      body: await gzip(padded),
      headers: { "content-type": "application/gzip" },
    });
    expect(big.status).toBe(413);
    expect(await big.text()).toContain("larger than 8 MiB of JSON");
  }, 60_000);
});

describe("incremental snapshots: a manifest must be a tree a file system can hold (issue 22)", () => {
  const who = freshOwner();

  /** Commits a manifest whose id is the tree's own id (as a client would compute it). */
  async function commitTree(
    files: ManifestFile[],
    skipped: SkippedEntry[],
  ): Promise<{ status: number; code: string; message: string }> {
    const res = await commit(who, {
      id: await manifestId(files, skipped),
      files: files.map((f) => [f.path, f.blob]),
      skipped,
    });
    if (res.status === 201) return { status: 201, code: "created", message: "" };
    const body = (await res.json()) as { error: { code: string; message: string } };
    return { status: res.status, ...body.error };
  }

  it("refuses a lone UTF-16 surrogate in a path, naming the entry: it would hash like U+FFFD", async () => {
    await uploadBlobs(who, ["s\n"]);
    const blob = blobOf("s\n");
    // Both ids are the same text once encoded: the lone surrogate becomes U+FFFD.
    expect(await manifestId([], [{ path: "a\ud800", reason: "binary" }])).toBe(
      await manifestId([], [{ path: "a\ufffd", reason: "binary" }]),
    );
    const lone = await commitTree(
      [{ path: "ok.ts", blob }],
      [{ path: "a\ud800", reason: "binary" }],
    );
    expect(lone).toMatchObject({ status: 400, code: "invalid_manifest" });
    expect(lone.message).toMatch(/^skipped\[0\]: "a\\\\ud800" holds a lone UTF-16 surrogate/);
    const file = await commitTree(
      [
        { path: "ok.ts", blob },
        { path: "b\udc00.ts", blob },
      ],
      [],
    );
    expect(file).toMatchObject({ status: 400, code: "invalid_manifest" });
    expect(file.message).toMatch(/^files\[1\]: .* cannot be stored \(invalid name\)/);
    // A surrogate pair is a character like any other.
    expect(await commitTree([{ path: "emoji-\ud83d\ude00.ts", blob }], [])).toMatchObject({
      status: 201,
    });
  });

  it("refuses a path both stored and skipped, and a skipped path listed twice, naming the entry", async () => {
    await uploadBlobs(who, ["t\n"]);
    const blob = blobOf("t\n");
    const both = await commitTree(
      [{ path: "a.ts", blob }],
      [
        { path: "a.bin", reason: "binary" },
        { path: "a.ts", reason: "too_large" },
      ],
    );
    expect(both).toMatchObject({ status: 400, code: "invalid_manifest" });
    expect(both.message).toBe('skipped[1]: "a.ts" is also a stored file of the tree.');
    const twice = await commitTree(
      [{ path: "a.ts", blob }],
      [
        { path: "big.log", reason: "too_large" },
        { path: "big.log", reason: "binary" },
      ],
    );
    expect(twice).toMatchObject({ status: 400, code: "invalid_manifest" });
    expect(twice.message).toBe('skipped[1]: "big.log" is listed twice.');
    expect(
      await commitTree([{ path: "a.ts", blob }], [{ path: "big.log", reason: "too_large" }]),
    ).toMatchObject({ status: 201 });
  });

  it("refuses a skipped path of the base's tree that the delta stores, naming the entry", async () => {
    await uploadBlobs(who, ["u\n"]);
    const blob = blobOf("u\n");
    const base = await commitTree([{ path: "keep.ts", blob }], []);
    expect(base.status).toBe(201);
    const baseId = await manifestId([{ path: "keep.ts", blob }], []);
    const skipped: SkippedEntry[] = [{ path: "keep.ts", reason: "binary" }];
    const res = await commit(who, {
      id: await manifestId([{ path: "keep.ts", blob }], skipped),
      base: baseId,
      files: [],
      removed: [],
      skipped,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('skipped[0]: \\"keep.ts\\" is also a stored file');
  });
});

describe("incremental snapshots: retention with shared blobs", () => {
  /** Archives a session, moves its clock past retention and runs its alarm (the purge). */
  async function purgeSession(who: { token: string }, id: string): Promise<void> {
    await api.archive(who, id);
    await runInDurableObject(sessionObject(id), (object: SessionObject) => {
      object.clock = () => Date.now() + RETENTION_MS + 1;
    });
    await runDurableObjectAlarm(sessionObject(id));
  }

  /**
   * Runs the owner index's garbage collection as if the grace of the unused snapshots (those
   * whose sessions all ended), and then that of the blobs they released, had passed.
   */
  async function collectAfterGrace(who: { token: string }): Promise<void> {
    const index = ownerObject(await ownerIdOf(who.token));
    for (const offsetMs of [
      UNUSED_SNAPSHOT_GRACE_MS + 1,
      UNUSED_SNAPSHOT_GRACE_MS + UNUSED_BLOB_GRACE_MS + 2,
    ]) {
      await runInDurableObject(index, (object: OwnerIndex) => {
        object.clock = () => Date.now() + offsetMs;
      });
      await runDurableObjectAlarm(index);
    }
    await runInDurableObject(index, (object: OwnerIndex) => {
      object.clock = () => Date.now();
    });
  }

  it("deletes a blob only when no snapshot uses it, and a pack only when it holds none", async () => {
    const who = freshOwner();
    const owner = await ownerIdOf(who.token);
    const shared = "export const shared = true;\n";
    const first = await store(who, { "shared.ts": shared, "old.ts": "export const old = 1;\n" });
    const second = await store(who, { "shared.ts": shared, "new.ts": "export const fresh = 2;\n" });
    const one = await createDrivenSession(who.token, { snapshot_id: first.id });
    const two = await createDrivenSession(who.token, { snapshot_id: second.id });

    await purgeSession(who, one.id);
    await collectAfterGrace(who);
    expect((await api.call("HEAD", `/v1/snapshots/${first.id}`, who)).status).toBe(404);
    expect(await blobStats(who)).toMatchObject({ blobs: 2 });
    // The second snapshot still reads its shared file from the first upload's pack.
    const files = openSnapshot(env.SNAPSHOTS, owner, second.id);
    expect(await files.read("shared.ts")).toBe(shared);
    expect(await missing(who, [blobOf("export const old = 1;\n")])).toHaveLength(1);

    await purgeSession(who, two.id);
    await collectAfterGrace(who);
    expect(await blobStats(who)).toMatchObject({ blobs: 0 });
    expect(await keys(`blobs/${owner}/`)).toEqual([]);
    expect(await keys(`snapshots/${owner}/`)).toEqual([]);
  }, 60_000);

  it("a snapshot no session ever uses is purged after its grace, with its blobs", async () => {
    const who = freshOwner();
    const owner = await ownerIdOf(who.token);
    const unused = await store(who, { "lonely.ts": "export const lonely = 1;\n" });
    const used = await store(who, { "used.ts": "export const used = 2;\n" });
    await createDrivenSession(who.token, { snapshot_id: used.id });
    const index = ownerObject(owner);
    const runAlarmAt = async (offsetMs: number) => {
      await runInDurableObject(index, (object: OwnerIndex) => {
        object.clock = () => Date.now() + offsetMs;
      });
      await runDurableObjectAlarm(index);
    };
    // Within the grace both stay (checked in R2: a HEAD would restart the grace).
    await runAlarmAt(UNUSED_SNAPSHOT_GRACE_MS - 60_000);
    expect(await keys(`snapshots/${owner}/${unused.id}/`)).toHaveLength(1);
    // After it (and the blobs' own grace), the unused one is gone with its blob; the used one stays.
    await runAlarmAt(UNUSED_SNAPSHOT_GRACE_MS + 1);
    await runAlarmAt(UNUSED_SNAPSHOT_GRACE_MS + UNUSED_BLOB_GRACE_MS + 60_000);
    await runInDurableObject(index, (object: OwnerIndex) => {
      object.clock = () => Date.now();
    });
    expect((await api.call("HEAD", `/v1/snapshots/${unused.id}`, who)).status).toBe(404);
    expect((await api.call("HEAD", `/v1/snapshots/${used.id}`, who)).status).toBe(200);
    expect(await missing(who, [blobOf("export const lonely = 1;\n")])).toHaveLength(1);
    expect(await missing(who, [blobOf("export const used = 2;\n")])).toEqual([]);
    expect(await keys(`snapshots/${owner}/${unused.id}/`)).toEqual([]);
  }, 60_000);

  it("a session started on a snapshot waiting for its purge revives it; after the purge it is refused", async () => {
    const who = freshOwner();
    const owner = await ownerIdOf(who.token);
    const receipt = await store(who, { "a.ts": "export const a = 1;\n" });
    const index = ownerObject(owner);
    const registry = (object: OwnerIndex) =>
      (object as unknown as { snapshots: SnapshotRegistry }).snapshots;
    // The last session using it was purged: the snapshot waits for its own purge…
    await runInDurableObject(index, (object: OwnerIndex, state) =>
      state.storage.transactionSync(() => registry(object).markUnused(owner, receipt.id)),
    );
    // …when a new session on it arrives: it is registered and revives the snapshot.
    const session = await createDrivenSession(who.token, { snapshot_id: receipt.id });
    await runInDurableObject(index, (object: OwnerIndex) =>
      registry(object).purge(owner, receipt.id),
    );
    const files = openSnapshot(env.SNAPSHOTS, owner, receipt.id);
    expect(await files.read("a.ts")).toBe("export const a = 1;\n");
    expect(await index.snapshotsInUse()).toContain(receipt.id);

    // Once purged for real (its session ended, its grace passed), a new session on it is
    // refused, and nothing is registered.
    await purgeSession(who, session.id);
    await collectAfterGrace(who);
    expect((await api.call("HEAD", `/v1/snapshots/${receipt.id}`, who)).status).toBe(404);
    const refused = await api.call("POST", "/v1/sessions", who, {
      json: { prompt: "plan it", snapshot_id: receipt.id },
    });
    expect(refused.status).toBe(400);
    expect(await errorCode(refused)).toBe("unknown_snapshot");
    expect(await index.snapshotsInUse()).not.toContain(receipt.id);
  }, 60_000);
});
