import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNUSED_BLOB_GRACE_MS } from "../../src/owner/blob-store.ts";
import type { OwnerIndex } from "../../src/owner/owner-index.ts";
import type { SnapshotRegistry } from "../../src/owner/snapshot-registry.ts";
import { snapshotRegistry } from "../../src/owner/stub.ts";
import { comparePaths, SNAPSHOT_MAX_FILE_BYTES } from "../../src/protocol/index.ts";
import { ingestSnapshot, openSnapshot } from "../../src/snapshot/index.ts";
import { bodyOf, type TarSpec, tarGz } from "../support/tarballs.ts";
import { ownerObject } from "../support/worker/sessions.ts";

const bucket = env.SNAPSHOTS;
const encoder = new TextEncoder();

function newOwner(): string {
  return `owner-${crypto.randomUUID().slice(0, 8)}`;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function ingestOk(owner: string, body: Uint8Array) {
  const result = await ingestSnapshot(bucket, snapshotRegistry(env, owner), owner, bodyOf(body));
  if (!result.ok) throw new Error(`ingest refused: ${JSON.stringify(result.error)}`);
  return result.value;
}

function snapshotExists(owner: string, id: string): Promise<boolean> {
  return snapshotRegistry(env, owner).hasSnapshot(id);
}

async function keysUnder(prefix: string): Promise<string[]> {
  return (await bucket.list({ prefix })).objects.map((o) => o.key);
}

describe("snapshot ingest: what is stored and what is skipped", () => {
  const texts: Record<string, string> = {
    "src/app.ts": "export const app = 1;\n",
    "README.md": "# demo\n\nUnicode: ü ✓ 🚀\n",
    "docs/über.md": "umlaut name\n",
    "empty.txt": "",
    "bom.txt": "\ufeffstarts with a byte order mark\n",
    [`deep/${"d".repeat(150)}/file.ts`]: "long path via a GNU long-name entry\n",
    "exactly-1mib.txt": "x".repeat(SNAPSHOT_MAX_FILE_BYTES),
  };
  const entries: TarSpec[] = [
    { name: "./", type: "directory" },
    { name: "./src/", type: "directory" },
    { name: "./src/app.ts", body: texts["src/app.ts"] },
    { name: "README.md", body: texts["README.md"] },
    { name: "docs/über.md", body: texts["docs/über.md"] },
    { name: "empty.txt", body: "" },
    { name: "bom.txt", body: texts["bom.txt"] },
    { name: `deep/${"d".repeat(150)}/file.ts`, body: texts[`deep/${"d".repeat(150)}/file.ts`] },
    { name: "exactly-1mib.txt", body: texts["exactly-1mib.txt"] },
    { name: "/etc/passwd", body: "root:x:0:0\n" },
    { name: "../escape.txt", body: "out\n" },
    { name: "src/../../climb.txt", body: "out\n" },
    { name: "link-to-secret", type: "symlink", linkname: "/etc/shadow" },
    { name: "hard-link", type: "link", linkname: "src/app.ts" },
    { name: "dev/tty0", type: "character-device" },
    { name: "dev/sda", type: "block-device" },
    { name: "queue", type: "fifo" },
    { name: new Uint8Array([0x6e, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]), body: "latin-1 name\n" },
    { name: "bad\u001b[2Jname.txt", body: "escape sequence in the name\n" },
    {
      name: "logo.png",
      body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]),
    },
    { name: "latin1.txt", body: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
    { name: "too-big.txt", body: "y".repeat(SNAPSHOT_MAX_FILE_BYTES + 1) },
    { name: "src/app.ts", body: "a second copy must not replace the first\n" },
    { name: "src/app.ts/inner.ts", body: "a file below a file\n" },
  ];
  const expectedSkipped = [
    { path: "/etc/passwd", reason: "absolute_path" },
    { path: "../escape.txt", reason: "parent_segment" },
    { path: "src/../../climb.txt", reason: "parent_segment" },
    { path: "link-to-secret", reason: "symlink" },
    { path: "hard-link", reason: "hard_link" },
    { path: "dev/tty0", reason: "special_file" },
    { path: "dev/sda", reason: "special_file" },
    { path: "queue", reason: "special_file" },
    { path: "n\ufffd\ufffd.txt", reason: "invalid_name" },
    { path: "bad\\u001b[2Jname.txt", reason: "invalid_name" },
    { path: "logo.png", reason: "binary" },
    { path: "latin1.txt", reason: "binary" },
    { path: "too-big.txt", reason: "too_large" },
    { path: "src/app.ts", reason: "duplicate" },
    { path: "src/app.ts/inner.ts", reason: "path_conflict" },
  ];

  it("stores text files, lists every unsafe or unreadable entry with its reason", async () => {
    const owner = newOwner();
    const body = await tarGz(entries);
    const receipt = await ingestOk(owner, body);
    expect(receipt.id).toBe(await sha256Hex(body));
    expect(receipt.files).toBe(Object.keys(texts).length);
    expect(receipt.bytes).toBe(
      Object.values(texts).reduce((n, t) => n + encoder.encode(t).byteLength, 0),
    );
    expect(receipt.skipped).toEqual(expectedSkipped);
    expect(await snapshotExists(owner, receipt.id)).toBe(true);
  }, 60_000);

  it("reads back exactly what was uploaded: list sorted, read, scan", async () => {
    const owner = newOwner();
    const receipt = await ingestOk(owner, await tarGz(entries));
    const files = openSnapshot(bucket, owner, receipt.id);

    const expectedPaths = Object.keys(texts).sort(comparePaths);
    const listed = await files.list();
    expect(listed.map((f) => f.path)).toEqual(expectedPaths);
    for (const entry of listed) {
      expect(entry.size).toBe(encoder.encode(texts[entry.path] ?? "").byteLength);
    }
    for (const [path, text] of Object.entries(texts)) {
      expect(await files.read(path)).toBe(text);
    }
    expect(await files.read("missing.ts")).toBeNull();
    expect(await files.read("too-big.txt")).toBeNull();

    const scanned = new Map<string, string>();
    for await (const { path, text } of files.scan()) scanned.set(path, text);
    expect(Object.fromEntries(scanned)).toEqual(texts);

    const onlyMarkdown: string[] = [];
    for await (const { path } of files.scan((p) => p.endsWith(".md"))) onlyMarkdown.push(path);
    expect(onlyMarkdown.sort()).toEqual(["README.md", "docs/über.md"]);
  }, 60_000);

  it("splits more than 8 MiB of text into packs of at most 8 MiB and reads across them", async () => {
    const owner = newOwner();
    const mib = SNAPSHOT_MAX_FILE_BYTES;
    const bigFiles: TarSpec[] = Array.from({ length: 20 }, (_, i) => ({
      name: `data/${String(i).padStart(2, "0")}.txt`,
      body: String.fromCharCode(97 + i).repeat(i % 2 === 0 ? mib : mib - 1000),
    }));
    const receipt = await ingestOk(owner, await tarGz(bigFiles));
    expect(receipt.files).toBe(20);
    const packs = (await bucket.list({ prefix: `blobs/${owner}/` })).objects;
    expect(packs.length).toBeGreaterThanOrEqual(3);
    for (const pack of packs) expect(pack.size).toBeLessThanOrEqual(8 * mib);
    expect(packs.reduce((n, p) => n + p.size, 0)).toBe(receipt.bytes);

    const files = openSnapshot(bucket, owner, receipt.id);
    for (const spec of bigFiles) {
      expect(await files.read(String(spec.name))).toBe(spec.body);
    }
    let count = 0;
    for await (const { path, text } of files.scan()) {
      expect(text).toBe(bigFiles.find((s) => s.name === path)?.body);
      count += 1;
    }
    expect(count).toBe(20);
  }, 60_000);

  it("scans pack by pack: a later pack is fetched only when the scan reaches it", async () => {
    const owner = newOwner();
    const mib = SNAPSHOT_MAX_FILE_BYTES;
    const specs: TarSpec[] = Array.from({ length: 12 }, (_, i) => ({
      name: `p/${String(i).padStart(2, "0")}.txt`,
      body: String.fromCharCode(97 + i).repeat(mib),
    }));
    const receipt = await ingestOk(owner, await tarGz(specs));
    const files = openSnapshot(bucket, owner, receipt.id);
    const secondPack = (await keysUnder(`blobs/${owner}/`)).find((k) => k.endsWith("pack-0001"));
    const seen: string[] = [];
    const scanning = (async () => {
      for await (const { path } of files.scan()) {
        seen.push(path);
        // Pulled the first file: the next pack must not have been read yet.
        if (seen.length === 1) await bucket.delete(String(secondPack));
      }
    })();
    await expect(scanning).rejects.toThrow(/incomplete: .*pack-0001 is missing/);
    expect(seen).toEqual(specs.slice(0, 8).map((s) => s.name));
  }, 60_000);

  it("accepts an archive with no files at all", async () => {
    const owner = newOwner();
    const receipt = await ingestOk(
      owner,
      await tarGz([{ name: "only-a-folder/", type: "directory" }]),
    );
    expect(receipt).toMatchObject({ files: 0, bytes: 0, skipped: [] });
    expect(await openSnapshot(bucket, owner, receipt.id).list()).toEqual([]);
  });
});

describe("snapshot dedupe, ownership and deletion", () => {
  it("a second upload of the same body returns the stored receipt without rewriting", async () => {
    const owner = newOwner();
    const body = await tarGz([
      { name: "a.ts", body: "export const a = 1;\n" },
      { name: "b.bin", body: new Uint8Array([0, 1, 2]) },
    ]);
    const first = await ingestOk(owner, body);
    const prefix = `snapshots/${owner}/${first.id}/`;
    const before = await bucket.head(`${prefix}index.json`);
    const packsBefore = await keysUnder(`blobs/${owner}/`);
    const second = await ingestOk(owner, body);
    expect(second).toEqual(first);
    const after = await bucket.head(`${prefix}index.json`);
    expect(after?.version).toBe(before?.version);
    expect(await keysUnder(`blobs/${owner}/`)).toEqual(packsBefore);
  });

  it("another tarball of files the owner has stored adds no blob and keeps no new pack", async () => {
    const owner = newOwner();
    await ingestOk(owner, await tarGz([{ name: "a.ts", body: "export const a = 1;\n" }]));
    const packs = await keysUnder(`blobs/${owner}/`);
    const other = await ingestOk(
      owner,
      await tarGz([
        { name: "copy/a.ts", body: "export const a = 1;\n" },
        { name: "a.ts", body: "export const a = 1;\n" },
      ]),
    );
    expect(other.files).toBe(2);
    expect(await keysUnder(`blobs/${owner}/`)).toEqual(packs);
    const stats = await ownerObject(owner).blobStats();
    expect(stats.blobs).toBe(1);
    expect(await openSnapshot(bucket, owner, other.id).read("copy/a.ts")).toBe(
      "export const a = 1;\n",
    );
  });

  it("another owner does not see the upload until it uploads the same body itself", async () => {
    const alice = newOwner();
    const bob = newOwner();
    const body = await tarGz([{ name: "shared.ts", body: "export {};\n" }]);
    const receipt = await ingestOk(alice, body);
    expect(await snapshotExists(bob, receipt.id)).toBe(false);
    await expect(openSnapshot(bucket, bob, receipt.id).list()).rejects.toThrow(/not stored/);
    const bobs = await ingestOk(bob, body);
    expect(bobs.id).toBe(receipt.id);
    expect(await snapshotExists(bob, receipt.id)).toBe(true);
  });

  it("an id of the wrong form is never found", async () => {
    expect(await snapshotExists(newOwner(), "../../etc")).toBe(false);
    expect(await snapshotExists(newOwner(), "A".repeat(64))).toBe(false);
  });

  it("a purge removes the index and, past their grace, every blob and pack; twice is harmless", async () => {
    const owner = newOwner();
    const receipt = await ingestOk(
      owner,
      await tarGz([
        { name: "a.txt", body: "a".repeat(SNAPSHOT_MAX_FILE_BYTES) },
        ...Array.from({ length: 9 }, (_, i) => ({
          name: `f${i}.txt`,
          body: `${i}`.repeat(SNAPSHOT_MAX_FILE_BYTES),
        })),
      ]),
    );
    const prefix = `snapshots/${owner}/${receipt.id}/`;
    expect(await keysUnder(prefix)).toEqual([`${prefix}index.json`]);
    expect((await keysUnder(`blobs/${owner}/`)).length).toBeGreaterThan(1);
    const files = openSnapshot(bucket, owner, receipt.id);
    const index = ownerObject(owner);
    // Released blobs get a fresh grace (a client may be about to use them); the purge runs
    // now, the garbage collection once that grace is over.
    const purge = (first: boolean) =>
      runInDurableObject(index, async (object: OwnerIndex, state) => {
        const registry = (object as unknown as { snapshots: SnapshotRegistry }).snapshots;
        state.storage.transactionSync(() => registry.markUnused(owner, receipt.id));
        await registry.purge(owner, receipt.id);
        if (first) expect(await keysUnder(`blobs/${owner}/`)).not.toEqual([]);
        object.clock = () => Date.now() + UNUSED_BLOB_GRACE_MS + 1;
        await registry.collectGarbage();
        object.clock = () => Date.now();
      });
    await purge(true);
    expect(await keysUnder(prefix)).toEqual([]);
    expect(await keysUnder(`blobs/${owner}/`)).toEqual([]);
    expect(await snapshotExists(owner, receipt.id)).toBe(false);
    await expect(files.list()).rejects.toThrow(/not stored/);
    await purge(false);
  }, 60_000);
});
