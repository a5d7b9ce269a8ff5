import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { packTar, unpackTar } from "modern-tar";
import { afterAll, describe, expect, it } from "vitest";
import { BlobPack, ustarFileHeader } from "../../../local-client/snapshot/blob-pack.ts";
import { readTreeFile } from "../../../local-client/snapshot/build.ts";
import { gitBlobId, SNAPSHOT_MAX_FILE_BYTES } from "../../../src/protocol/index.ts";
import { readFixedFormPack } from "../../../src/snapshot/blob-pack-reader.ts";

const MIB = 1024 * 1024;
const encoder = new TextEncoder();

/** Blobs of the sizes a tar treats differently: empty, one block exactly, a block and a byte, 1 MiB. */
function sampleBlobs(): Array<{ id: string; content: Uint8Array }> {
  const contents = [
    new Uint8Array(0),
    encoder.encode("export const answer = 42;\n"),
    new Uint8Array(512).fill(0x61),
    new Uint8Array(513).fill(0x62),
    new Uint8Array(SNAPSHOT_MAX_FILE_BYTES).fill(0x0a),
  ];
  return contents.map((content) => ({ id: gitBlobId(content), content }));
}

/**
 * Every entry of a blob pack as the worker reads it: gunzip, then its fixed-form reader
 * (src/snapshot/blob-pack-reader.ts, which imports nothing of the worker's), which throws if
 * the pack is not in the form it reads fast; and modern-tar's strict decoder, the worker's
 * reader for any other tar, must read the same.
 */
async function readAsTheWorkerDoes(body: Uint8Array): Promise<Map<string, Uint8Array>> {
  const tar = gunzipSync(body);
  const found = new Map<string, Uint8Array>();
  async function* chunks() {
    for (let at = 0; at < tar.byteLength; at += 65_536) yield tar.subarray(at, at + 65_536);
  }
  await readFixedFormPack(chunks(), {
    onFile: () => {},
    onContent: (name, content) => {
      found.set(name, content);
    },
  });
  const strict = await unpackTar(tar, { strict: true });
  expect(strict.map((entry) => entry.header.name)).toEqual([...found.keys()]);
  return found;
}

describe("blob packs (the client's tar writer for POST /v1/blobs)", () => {
  it("are byte for byte the tar modern-tar writes for the same entries", async () => {
    const blobs = sampleBlobs();
    const pack = new BlobPack(new Uint8Array(3 * MIB));
    for (const { id, content } of blobs) pack.add(id, content);
    const ours = gunzipSync(await pack.finish(6));
    const theirs = await packTar(
      blobs.map(({ id, content }) => ({
        header: {
          name: id,
          size: content.byteLength,
          type: "file" as const,
          mode: 0o644,
          mtime: new Date(0),
          uid: 0,
          gid: 0,
          uname: "",
          gname: "",
        },
        body: content,
      })),
    );
    expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
  });

  it("are read back whole by the worker's fixed-form reader (and its general one)", async () => {
    const blobs = sampleBlobs();
    const pack = new BlobPack(new Uint8Array(3 * MIB));
    for (const { id, content } of blobs) pack.add(id, content);
    expect(pack.files).toBe(blobs.length);
    const found = await readAsTheWorkerDoes(await pack.finish(1));
    expect([...found.keys()]).toEqual(blobs.map((b) => b.id));
    for (const { id, content } of blobs) {
      expect(Buffer.from(found.get(id) ?? []).equals(Buffer.from(content)), id).toBe(true);
    }
  });

  it("take a file read straight into their free room without a copy, and the next one after it", async () => {
    const pack = new BlobPack(new Uint8Array(2 * MIB + 4096));
    const first = encoder.encode("first file\n");
    const room = pack.room();
    room.set(first);
    pack.add(gitBlobId(first), room.subarray(0, first.byteLength));
    const second = encoder.encode("second file, longer\n");
    const next = pack.room();
    expect(next.byteOffset).toBeGreaterThan(room.byteOffset);
    next.set(second);
    pack.add(gitBlobId(second), next.subarray(0, second.byteLength));
    const found = await readAsTheWorkerDoes(await pack.finish(1));
    expect(new TextDecoder().decode(found.get(gitBlobId(first)))).toBe("first file\n");
    expect(new TextDecoder().decode(found.get(gitBlobId(second)))).toBe("second file, longer\n");
  });

  it("refuse a blob that does not fit, and anything but a blob id as a name", () => {
    const pack = new BlobPack(new Uint8Array(4096));
    const big = new Uint8Array(4096);
    expect(() => pack.add(gitBlobId(big), big)).toThrow(/does not fit/);
    expect(pack.fits(2048)).toBe(true);
    expect(() => pack.add("../../etc/passwd", new Uint8Array(1))).toThrow(/not a blob id/);
    expect(pack.files).toBe(0);
  });

  it("write ustar headers only for names and sizes a ustar header can hold", () => {
    expect(ustarFileHeader("a".repeat(100), 0).byteLength).toBe(512);
    expect(() => ustarFileHeader("a".repeat(101), 0)).toThrow(/1 to 100 ASCII/);
    expect(() => ustarFileHeader("café", 0)).toThrow(/1 to 100 ASCII/);
    expect(() => ustarFileHeader("", 0)).toThrow(/1 to 100 ASCII/);
    expect(() => ustarFileHeader("a", -1)).toThrow(/size/);
    expect(() => ustarFileHeader("a", 8 ** 11)).toThrow(/size/);
  });
});

describe("reading a tree's file into a pack's room", () => {
  const root = mkdtempSync(join(tmpdir(), "planport-blob-room-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const room = () => new Uint8Array(SNAPSHOT_MAX_FILE_BYTES + 4096).fill(0xff);

  it("gives a view of the room holding exactly the file's bytes", () => {
    writeFileSync(join(root, "a.ts"), "export {};\n");
    const into = room();
    const outcome = readTreeFile(root, "a.ts", into);
    expect(outcome.kind).toBe("text");
    if (outcome.kind !== "text") return;
    expect(outcome.content.buffer).toBe(into.buffer);
    expect(new TextDecoder().decode(outcome.content)).toBe("export {};\n");
  });

  it("says what the plain read says for a file that grew past 1 MiB, became binary or is gone", () => {
    writeFileSync(join(root, "big.txt"), new Uint8Array(SNAPSHOT_MAX_FILE_BYTES + 1).fill(0x61));
    writeFileSync(join(root, "exactly.txt"), new Uint8Array(SNAPSHOT_MAX_FILE_BYTES).fill(0x61));
    writeFileSync(join(root, "bin.dat"), Uint8Array.of(0x61, 0, 0x62));
    for (const path of ["big.txt", "exactly.txt", "bin.dat", "gone.txt"]) {
      const plain = readTreeFile(root, path);
      const intoRoom = readTreeFile(root, path, room());
      expect(intoRoom.kind, path).toBe(plain.kind);
      if (plain.kind === "skip" && intoRoom.kind === "skip")
        expect(intoRoom.reason).toBe(plain.reason);
      if (plain.kind === "text" && intoRoom.kind === "text") {
        expect(Buffer.from(intoRoom.content).equals(Buffer.from(plain.content)), path).toBe(true);
      }
    }
    expect(readTreeFile(root, "big.txt", room())).toEqual({ kind: "skip", reason: "too_large" });
  });
});
