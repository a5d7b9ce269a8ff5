import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { snapshotRegistry } from "../../src/owner/stub.ts";
import { comparePaths } from "../../src/protocol/index.ts";
import { ingestSnapshot, openSnapshot } from "../../src/snapshot/index.ts";
import type { StoredFile } from "../../src/snapshot/layout.ts";
import { PackSegments, SEGMENTS_MAX_BYTES } from "../../src/snapshot/pack-segments.ts";
import { bodyOf, tarGz } from "../support/tarballs.ts";

/**
 * A snapshot's files are read in path order however its blobs are spread over packs (the
 * SnapshotFiles contract: Grep's "first N by path" and its time limit depend on it). Blobs are
 * shared across uploads, so a later snapshot's blobs lie in the first tree's packs and in a
 * small pack per upload that changed something.
 */

function newOwner(): string {
  return `owner-${crypto.randomUUID().slice(0, 8)}`;
}

async function ingestOk(owner: string, files: Record<string, string>): Promise<string> {
  const body = await tarGz(Object.entries(files).map(([name, text]) => ({ name, body: text })));
  const result = await ingestSnapshot(
    env.SNAPSHOTS,
    snapshotRegistry(env, owner),
    owner,
    bodyOf(body),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value.id;
}

describe("scan order across the packs of several uploads", () => {
  it("yields path order when a changed file's blob lies in a later upload's pack", async () => {
    const owner = newOwner();
    const tree: Record<string, string> = {};
    for (const name of ["a", "b", "c", "d", "e", "f", "g", "h"]) {
      tree[`src/${name}.py`] = `def ${name}():\n    return "${name}"\n`;
    }
    await ingestOk(owner, tree);
    tree["src/c.py"] = 'def c():\n    return "changed"\n';
    tree["src/f.py"] = 'def f():\n    return "changed too"\n';
    const second = await ingestOk(owner, tree);
    const files = openSnapshot(env.SNAPSHOTS, owner, second);
    const scanned: [string, string][] = [];
    for await (const { path, text } of files.scan()) scanned.push([path, text]);
    const expected = Object.keys(tree).sort(comparePaths);
    expect(scanned.map(([path]) => path)).toEqual(expected);
    expect(Object.fromEntries(scanned)).toEqual(tree);
    const filtered: string[] = [];
    for await (const { path } of files.scan((p) => p !== "src/a.py")) filtered.push(path);
    expect(filtered).toEqual(expected.slice(1));
  }, 60_000);
});

/** Packs laid out in memory; every fetch is recorded. */
function packsOf(layout: Record<string, { path: string; size: number }[]>) {
  const files: StoredFile[] = [];
  const contents = new Map<string, Uint8Array>();
  for (const [pack, entries] of Object.entries(layout)) {
    let offset = 0;
    const parts: Uint8Array[] = [];
    for (const { path, size } of entries) {
      const bytes = new Uint8Array(size).fill(path.charCodeAt(path.length - 1));
      parts.push(bytes);
      files.push({ path, size, blob: "", key: pack, offset });
      offset += size;
    }
    const whole = new Uint8Array(offset);
    let at = 0;
    for (const part of parts) {
      whole.set(part, at);
      at += part.byteLength;
    }
    contents.set(pack, whole);
  }
  const fetches: { pack: string; bytes: number }[] = [];
  const fetchRange = async (pack: string, start: number, end: number) => {
    fetches.push({ pack, bytes: end - start });
    return (contents.get(pack) as Uint8Array).slice(start, end);
  };
  files.sort((a, b) => comparePaths(a.path, b.path));
  return { files, fetchRange, fetches };
}

async function readAll(segments: PackSegments, files: StoredFile[]) {
  let peak = 0;
  for (const file of files) {
    const bytes = await segments.bytesOf(file);
    expect(bytes.byteLength).toBe(file.size);
    expect(bytes.every((b) => b === file.path.charCodeAt(file.path.length - 1))).toBe(true);
    peak = Math.max(peak, segments.heldBytes);
    segments.done(file);
  }
  return peak;
}

describe("the ranges a path-order scan holds", () => {
  it("fetches each pack once when its files come in path order, however packs interleave", async () => {
    const MiB = 1024 * 1024;
    const base = Array.from({ length: 40 }, (_, i) => ({
      path: `src/m${String(i).padStart(2, "0")}a`,
      size: 150_000,
    }));
    // Later uploads: a few changed files each, at paths all over the tree.
    const later: Record<string, { path: string; size: number }[]> = {};
    for (let u = 0; u < 10; u++) {
      later[`upload-${u}`] = [
        { path: `src/m${String(u * 3).padStart(2, "0")}b`, size: 2_000 },
        { path: `src/m${String(u * 3 + 20).padStart(2, "0")}b`, size: 2_000 },
      ];
    }
    const { files, fetchRange, fetches } = packsOf({ base, ...later });
    const segments = new PackSegments(files, fetchRange);
    const peak = await readAll(segments, files);
    expect(fetches).toHaveLength(11);
    expect(peak).toBeLessThan(7 * MiB);
    expect(segments.heldBytes).toBe(0);
  }, 60_000);

  it("never holds more than its bound, whatever the order of the archive", async () => {
    // Three packs whose files are in reverse path order: the worst case for a path-order scan.
    const layout: Record<string, { path: string; size: number }[]> = {};
    for (let p = 0; p < 3; p++) {
      layout[`pack-${p}`] = Array.from({ length: 8 }, (_, i) => ({
        path: `f/${String(i * 3 + p).padStart(2, "0")}x`,
        size: 1_000_000,
      })).reverse();
    }
    const { files, fetchRange, fetches } = packsOf(layout);
    const segments = new PackSegments(files, fetchRange);
    const peak = await readAll(segments, files);
    expect(peak).toBeLessThanOrEqual(SEGMENTS_MAX_BYTES);
    // Every file read, some more than once, none in a fetch of more than a pack.
    expect(fetches.length).toBeGreaterThanOrEqual(3);
    for (const f of fetches) expect(f.bytes).toBeLessThanOrEqual(8 * 1_000_000);
  }, 60_000);
});
