import { env } from "cloudflare:workers";
import { unpackTar } from "modern-tar";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { gitBlobId } from "../../src/protocol/index.ts";
import { readCompressed } from "../../src/snapshot/archive.ts";
import { NotFixedForm, readFixedFormPack } from "../../src/snapshot/blob-pack-reader.ts";
import {
  concat,
  gzip,
  header,
  padded,
  type TarSpec,
  tarBytes,
  writeChecksum,
} from "../support/tarballs.ts";
import { ownersOf } from "../support/worker/owners.ts";
import { api, ownerObject } from "../support/worker/sessions.ts";

/**
 * The fast reader of blob packs (src/snapshot/blob-pack-reader.ts) reads what it accepts
 * exactly as modern-tar's strict decoder does, and leaves every other form to it: checked on
 * planport's own form, on the forms other tar writers use, and on thousands of seeded
 * corruptions of a pack. Then over HTTP: packs outside the fixed form are still stored, and
 * nothing of the abandoned fast reading stays in R2. Last, the body is read in 1 MiB chunks
 * where the stream allows it, and refused past its limit either way.
 */

const encoder = new TextEncoder();
const freshOwner = ownersOf("blob-pack-reader");

type Read = { entries: Array<{ name: string; content: Uint8Array }> } | "not fixed form";

/** What the fast reader makes of `tar`, fed in chunks of `chunkBytes`. */
async function fast(tar: Uint8Array, chunkBytes = 4096): Promise<Read> {
  async function* chunks() {
    for (let at = 0; at < tar.byteLength; at += chunkBytes) yield tar.subarray(at, at + chunkBytes);
  }
  const entries: Array<{ name: string; content: Uint8Array }> = [];
  const sizes: number[] = [];
  try {
    await readFixedFormPack(chunks(), {
      onFile: (_name, size) => {
        sizes.push(size);
      },
      onContent: (name, content) => {
        expect(content.byteLength).toBe(sizes[entries.length]);
        entries.push({ name, content });
      },
    });
  } catch (error) {
    if (error instanceof NotFixedForm) return "not fixed form";
    throw error;
  }
  return { entries };
}

/** What modern-tar's strict decoder makes of it: its files, or null when it refuses it. */
async function general(tar: Uint8Array) {
  try {
    return await unpackTar(tar, { strict: true });
  } catch {
    return null;
  }
}

/** Every file the fast reader read, the strict decoder read alike; nothing it refuses. */
async function expectSameAsGeneral(tar: Uint8Array, label: string): Promise<Read> {
  const read = await fast(tar, 1 + (tar.byteLength % 5000));
  if (read === "not fixed form") return read;
  const theirs = await general(tar);
  expect(theirs, `${label}: the fast reader accepted what modern-tar refuses`).not.toBeNull();
  expect(
    (theirs ?? []).map((e) => ({ name: e.header.name, type: e.header.type ?? "file" })),
    label,
  ).toEqual(read.entries.map((e) => ({ name: e.name, type: "file" })));
  (theirs ?? []).forEach((entry, i) => {
    expect(entry.data, label).toEqual(read.entries[i]?.content);
  });
  return read;
}

function blobEntry(text: string | Uint8Array): TarSpec {
  const bytes = typeof text === "string" ? encoder.encode(text) : text;
  return { name: gitBlobId(bytes), body: bytes };
}

/** A header block with `edit` applied and its checksum written again. */
function editedHeader(name: string, size: number, edit: (block: Uint8Array) => void) {
  const block = header(encoder.encode(name), "0", size);
  edit(block);
  writeChecksum(block);
  return block;
}

const END = new Uint8Array(1024);

describe("the fixed-form blob pack reader", () => {
  it("reads planport's form (empty, small, block-sized and 1 MiB files) whatever the chunking", async () => {
    const texts = [
      "",
      "a\n",
      "x".repeat(511),
      "y".repeat(512),
      "z".repeat(513),
      "w".repeat(1 << 20),
    ];
    const tar = tarBytes(texts.map(blobEntry));
    for (const chunk of [1, 7, 511, 512, 513, 65536, tar.byteLength]) {
      const read = await fast(tar, chunk);
      expect(read, `chunks of ${chunk}`).not.toBe("not fixed form");
      if (read === "not fixed form") continue;
      expect(read.entries.map((e) => e.content.byteLength)).toEqual(texts.map((t) => t.length));
      expect(read.entries.map((e) => e.name)).toEqual(texts.map((t) => blobEntry(t).name));
    }
    await expectSameAsGeneral(tar, "planport's form");
  });

  it("leaves every other form to the general decoder", async () => {
    const one = blobEntry("one\n");
    const body = encoder.encode("one\n");
    const cases: Record<string, Uint8Array> = {
      "a directory": tarBytes([{ name: "dir/", type: "directory" }, one]),
      "a symlink": tarBytes([{ name: "l", type: "symlink", linkname: one.name as string }]),
      "a GNU long name": tarBytes([{ name: "n".repeat(120), body: "x\n" }]),
      "a PAX header": concat([
        editedHeader("PaxHeaders/x", 16, (b) => b.set(encoder.encode("x"), 156)),
        ...padded(encoder.encode("16 path=abcdef\n")),
        ...tarBytesWithoutEnd([one]),
        END,
      ]),
      "a name with a prefix": concat([
        editedHeader(one.name as string, body.byteLength, (b) => b.set(encoder.encode("p"), 345)),
        ...padded(body),
        END,
      ]),
      "the GNU magic": concat([
        editedHeader(one.name as string, body.byteLength, (b) =>
          b.set(encoder.encode("ustar  \0"), 257),
        ),
        ...padded(body),
        END,
      ]),
      "a base-256 size": concat([
        editedHeader(one.name as string, 0, (b) => {
          b.fill(0, 124, 136);
          b[124] = 0x80;
          b[135] = body.byteLength;
        }),
        ...padded(body),
        END,
      ]),
      "a file named like a folder": tarBytes([{ name: "a/", body: "" }]),
      "a bad checksum": (() => {
        const tar = tarBytes([one]);
        tar[0] = 0x41;
        return tar;
      })(),
      "one zero block at the end": tarBytes([one]).subarray(0, 512 + 512 + 512),
      "no end": tarBytes([one]).subarray(0, 1024),
      "a cut body": tarBytes([blobEntry("z".repeat(2000))]).subarray(0, 1000),
      "data after the end": concat([tarBytes([one]), Uint8Array.of(1)]),
    };
    for (const [label, tar] of Object.entries(cases)) {
      expect(await expectSameAsGeneral(tar, label), label).toBe("not fixed form");
    }
  });

  it("never accepts what modern-tar refuses, nor reads anything differently: 3,000 seeded corruptions", async () => {
    const tar = tarBytes([blobEntry("first\n"), blobEntry(""), blobEntry("x".repeat(700))]);
    let seed = 0x9e3779b9;
    const next = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let accepted = 0;
    for (let run = 0; run < 3000; run++) {
      const bad = tar.slice();
      // Mostly header bytes (the three headers and the end), sometimes a whole field.
      const blocks = [0, 1024, 1536, 3072, 3584];
      for (let edits = 1 + next(3); edits > 0; edits--) {
        const at = (blocks[next(blocks.length)] as number) + next(512);
        bad[at] = [0, 0x20, 0x30, 0x37, 0x38, 0x80, 0x2f, next(256)][next(8)] as number;
      }
      if (next(4) === 0) {
        // Rewrite the checksum of the first header, so the edit is not refused for it alone.
        writeChecksum(bad.subarray(0, 512));
      }
      const length = next(10) === 0 ? next(bad.byteLength) : bad.byteLength;
      const read = await expectSameAsGeneral(bad.subarray(0, length), `corruption ${run}`);
      if (read !== "not fixed form") accepted += 1;
    }
    // Some corruptions land in bytes neither reader looks at (uname, padding): both accept.
    expect(accepted).toBeGreaterThan(0);
  });
});

function tarBytesWithoutEnd(entries: TarSpec[]): Uint8Array[] {
  const tar = tarBytes(entries);
  return [tar.subarray(0, tar.byteLength - 1024)];
}

describe("POST /v1/blobs outside the fixed form", () => {
  it("stores the blobs of a pack with folders, PAX headers and GNU names, and leaves no pack of the fast reading", async () => {
    const who = freshOwner();
    // Nine 1,000,000-byte texts first: the fast reader fills and stores an 8 MiB pack before
    // it meets the folder, and must delete it.
    const large = Array.from(
      { length: 9 },
      (_, i) => `${String.fromCharCode(97 + i).repeat(999_999)}\n`,
    );
    const texts = [...large, "alpha\n", "beta\n"];
    const entries = texts.map(blobEntry);
    const tar = concat([
      ...tarBytesWithoutEnd(entries.slice(0, 10)),
      ...tarBytesWithoutEnd([{ name: "folder/", type: "directory" }]),
      editedHeader("PaxHeaders/b", 12, (block) => block.set(encoder.encode("x"), 156)),
      ...padded(encoder.encode("12 uid=1000\n")),
      ...tarBytesWithoutEnd(entries.slice(10)),
      END,
    ]);
    const res = await api.call("POST", "/v1/blobs", who, {
      body: await gzip(tar),
      headers: { "content-type": "application/gzip" },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      received: 11,
      stored: 11,
      bytes: texts.reduce((n, t) => n + t.length, 0),
    });
    const owner = await ownerIdOf(who.token);
    expect((await ownerObject(owner).blobStats()).blobs).toBe(11);
    // Only the general reading's packs (8 MiB, then the rest): the fast reading's is gone.
    const packs = (await env.SNAPSHOTS.list({ prefix: `blobs/${owner}/` })).objects;
    expect(packs.map((p) => p.size).sort((x, y) => y - x)).toEqual([
      8 * 1_000_000,
      1_000_000 + "alpha\n".length + "beta\n".length,
    ]);
  });
});

describe("reading an upload's body", () => {
  /** `total` bytes (byte i is i % 251) in pieces of `piece`, as a byte stream or a plain one. */
  function body(total: number, piece: number, bytes: boolean): ReadableStream<Uint8Array> {
    let sent = 0;
    const next = () => {
      const chunk = new Uint8Array(Math.min(piece, total - sent));
      for (let i = 0; i < chunk.byteLength; i++) chunk[i] = (sent + i) % 251;
      sent += chunk.byteLength;
      return chunk;
    };
    return bytes
      ? new ReadableStream({
          type: "bytes",
          pull(controller) {
            if (sent >= total) controller.close();
            else controller.enqueue(next());
          },
        })
      : new ReadableStream({
          pull(controller) {
            if (sent >= total) controller.close();
            else controller.enqueue(next());
          },
        });
  }

  it("hands over 1 MiB chunks of a byte stream, and any stream's bytes unchanged", async () => {
    const total = 2.5 * 1024 * 1024 + 3;
    for (const bytes of [true, false]) {
      const chunks = await readCompressed(body(total, 4096, bytes));
      if (bytes) {
        expect(chunks.map((c) => c.byteLength)).toEqual([1 << 20, 1 << 20, total - (2 << 20)]);
      }
      const joined = concat(chunks);
      expect(joined.byteLength).toBe(total);
      expect(joined.every((b, i) => b === i % 251)).toBe(true);
    }
  });

  it("refuses a body past 25 MiB whichever way it is read", async () => {
    for (const bytes of [true, false]) {
      await expect(readCompressed(body(40 * 1024 * 1024, 65536, bytes))).rejects.toMatchObject({
        error: { code: "payload_too_large" },
      });
    }
  });
});
