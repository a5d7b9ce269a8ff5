import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { snapshotRegistry } from "../../src/owner/stub.ts";
import {
  SNAPSHOT_MAX_COMPRESSED_BYTES,
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../../src/protocol/index.ts";
import { OVERSIZED_BODY_DRAIN_BYTES } from "../../src/request-body.ts";
import { IngestFailure } from "../../src/snapshot/errors.ts";
import { gunzipWithLimit } from "../../src/snapshot/gunzip.ts";
import { ingestSnapshot } from "../../src/snapshot/index.ts";
import {
  bodyOf,
  gzip,
  gzipBomb,
  manyFilesTarGz,
  noise,
  type TarSpec,
  tarBytes,
  tarGz,
} from "../support/tarballs.ts";

const bucket = env.SNAPSHOTS;
const MIB = 1024 * 1024;

function newOwner(): string {
  return `owner-${crypto.randomUUID().slice(0, 8)}`;
}

async function refusal(owner: string, body: ReadableStream<Uint8Array>) {
  const result = await ingestSnapshot(bucket, snapshotRegistry(env, owner), owner, body);
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** Everything stored for the owner: snapshot indexes and blob packs. */
async function storedKeys(owner: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of [`snapshots/${owner}/`, `blobs/${owner}/`]) {
    keys.push(...(await bucket.list({ prefix })).objects.map((o) => o.key));
  }
  return keys;
}

/** A byte stream that counts what was pulled from it, in chunks of `chunkBytes`. */
function countingStream(bytes: Uint8Array, chunkBytes: number) {
  const meter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (meter.pulled >= bytes.byteLength) {
          controller.close();
          return;
        }
        const chunk = bytes.slice(meter.pulled, meter.pulled + chunkBytes);
        meter.pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, meter };
}

describe("snapshot limits: each answers 413 naming the limit", () => {
  it("refuses a body over 25 MiB compressed without reading all of it", async () => {
    const owner = newOwner();
    const chunk = noise(MIB);
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.byteLength;
        controller.enqueue(chunk.slice());
      },
    });
    const error = await refusal(owner, endless);
    expect(error).toMatchObject({ status: 413, code: "payload_too_large" });
    expect(error.message).toContain("25 MiB compressed");
    // Past the limit only the short stretch read on purpose (so the connection stays usable).
    expect(sent).toBeLessThan(SNAPSHOT_MAX_COMPRESSED_BYTES + OVERSIZED_BODY_DRAIN_BYTES + 4 * MIB);
    expect(await storedKeys(owner)).toEqual([]);
  }, 60_000);

  it("cuts off a gzip bomb (300 MiB of one byte) at 100 MiB uncompressed", async () => {
    const owner = newOwner();
    const bomb = await gzipBomb(300 * MIB);
    expect(bomb.byteLength).toBeLessThan(MIB);
    const error = await refusal(owner, bodyOf(bomb));
    expect(error).toMatchObject({ status: 413, code: "snapshot_too_large" });
    expect(error.message).toContain("100 MiB uncompressed");
    expect(await storedKeys(owner)).toEqual([]);
  }, 60_000);

  it("stops inflating at the limit: the rest of the bomb is never even read", async () => {
    const bomb = await gzipBomb(300 * MIB);
    const { stream, meter } = countingStream(bomb, 4096);
    const reader = gunzipWithLimit(stream, SNAPSHOT_MAX_UNCOMPRESSED_BYTES).getReader();
    let inflated = 0;
    let largestChunk = 0;
    const failure = await (async () => {
      for (;;) {
        const next = await reader.read();
        if (next.done) return null;
        inflated += next.value.byteLength;
        largestChunk = Math.max(largestChunk, next.value.byteLength);
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IngestFailure);
    expect((failure as IngestFailure).error.code).toBe("snapshot_too_large");
    expect(inflated).toBeLessThanOrEqual(SNAPSHOT_MAX_UNCOMPRESSED_BYTES);
    // 100 of 300 MiB inflated: about a third of the input consumed, plus read-ahead.
    expect(meter.pulled).toBeLessThan(bomb.byteLength * 0.5);
    expect(largestChunk).toBeLessThanOrEqual(MIB);
  }, 60_000);

  it("deletes the packs it already wrote when a later entry crosses 100 MiB", async () => {
    const owner = newOwner();
    const body = "z".repeat(SNAPSHOT_MAX_FILE_BYTES);
    const entries: TarSpec[] = Array.from({ length: 110 }, (_, i) => ({
      name: `big/${String(i).padStart(3, "0")}.txt`,
      body,
    }));
    const error = await refusal(owner, bodyOf(await tarGz(entries)));
    expect(error).toMatchObject({ status: 413, code: "snapshot_too_large" });
    expect(await storedKeys(owner)).toEqual([]);
  }, 60_000);

  it(`accepts ${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} files and refuses one more`, async () => {
    const owner = newOwner();
    const atLimit = await ingestSnapshot(
      bucket,
      snapshotRegistry(env, owner),
      owner,
      bodyOf(await manyFilesTarGz(SNAPSHOT_MAX_FILES)),
    );
    expect(atLimit.ok && atLimit.value.files).toBe(SNAPSHOT_MAX_FILES);

    const overOwner = newOwner();
    const error = await refusal(overOwner, bodyOf(await manyFilesTarGz(SNAPSHOT_MAX_FILES + 1)));
    expect(error).toMatchObject({ status: 413, code: "snapshot_too_many_files" });
    expect(error.message).toContain("20,000 files");
    expect(await storedKeys(overOwner)).toEqual([]);
  }, 60_000);

  it("counts skipped entries too, so a flood of symlinks cannot grow the skipped list", async () => {
    const links: TarSpec[] = Array.from({ length: SNAPSHOT_MAX_FILES + 1 }, (_, i) => ({
      name: `l/${i}`,
      type: "symlink",
      linkname: "/etc/passwd",
    }));
    const error = await refusal(newOwner(), bodyOf(await tarGz(links)));
    expect(error.code).toBe("snapshot_too_many_files");
  }, 60_000);

  it("does not count folders as files", async () => {
    const folders: TarSpec[] = Array.from({ length: SNAPSHOT_MAX_FILES + 5 }, (_, i) => ({
      name: `dir${i}/`,
      type: "directory",
    }));
    const folderOwner = newOwner();
    const result = await ingestSnapshot(
      bucket,
      snapshotRegistry(env, folderOwner),
      folderOwner,
      bodyOf(await tarGz([...folders, { name: "a.ts", body: "1\n" }])),
    );
    expect(result.ok && result.value.files).toBe(1);
  }, 60_000);
});

describe("snapshot bodies that are not a tar.gz answer 400 invalid_body", () => {
  const cases: Array<[string, () => Promise<Uint8Array>, RegExp]> = [
    ["an empty body", async () => new Uint8Array(), /empty/],
    ["random bytes", async () => noise(10_000), /not valid gzip/],
    [
      "a plain tar without gzip",
      async () => tarBytes([{ name: "a.ts", body: "1\n" }]),
      /uncompressed tar archive; gzip it/,
    ],
    [
      "gzip magic followed by garbage",
      async () => new Uint8Array([0x1f, 0x8b, ...noise(500)]),
      /not valid gzip/,
    ],
    ["gzip of random bytes", async () => gzip(noise(10_000)), /not hold a valid tar/],
    [
      "gzip of a short text",
      async () => gzip(new TextEncoder().encode("hello\n")),
      /not hold a valid tar/,
    ],
    [
      "a truncated gzip stream",
      async () => {
        const whole = await tarGz([{ name: "a.ts", body: "x".repeat(100_000) }]);
        return whole.slice(0, whole.byteLength - 12);
      },
      /not valid gzip/,
    ],
    [
      "gzip of a tar cut in the middle of a file",
      async () => gzip(tarBytes([{ name: "a.ts", body: "x".repeat(5000) }]).slice(0, 2048)),
      /not hold a valid tar/,
    ],
    [
      "gzip of a tar with a corrupted header checksum",
      async () => {
        const tar = tarBytes([{ name: "a.ts", body: "1\n" }]);
        tar[0] = "b".charCodeAt(0);
        return gzip(tar);
      },
      /not hold a valid tar/,
    ],
    [
      "gzip of a tar followed by garbage",
      async () => {
        const tar = tarBytes([{ name: "a.ts", body: "1\n" }]);
        const withTail = new Uint8Array(tar.byteLength + 512);
        withTail.set(tar);
        withTail.set(noise(512), tar.byteLength);
        return gzip(withTail);
      },
      /not hold a valid tar/,
    ],
  ];

  for (const [label, make, message] of cases) {
    it(`refuses ${label}`, async () => {
      const owner = newOwner();
      const error = await refusal(owner, bodyOf(await make()));
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_body");
      expect(error.message).toMatch(message);
      expect(error.message).toContain("tar.gz");
      expect(await storedKeys(owner)).toEqual([]);
    });
  }
});
