import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import {
  pathNameProblem,
  SNAPSHOT_MAX_FILES,
  type SnapshotReceipt,
} from "../../src/protocol/index.ts";
import { openSnapshot } from "../../src/snapshot/index.ts";
import { floodTarGz, hostileTarGz, paxNameBomb, rawHeader } from "../support/faults.ts";
import { gzip, noise, tarGz } from "../support/tarballs.ts";
import { ALICE, api, BOB, errorCode } from "../support/worker/sessions.ts";

/**
 * Hostile snapshot uploads through the HTTP route, as an attacker holding a token would send
 * them (issue 6). The ingest rules themselves are covered entry by entry in
 * snapshot-ingest.test.ts and snapshot-limits.test.ts; here: names smuggled in through PAX
 * and GNU long-name metadata, links that try to alias files, archives whose headers are
 * fuzzed byte by byte, a flood of tiny files — and that what is stored is only ever safe.
 */

/** The longest a skipped path is shown (printablePath's cut plus its ellipsis). */
const SHOWN_PATH_MAX_CHARS = 301;

async function upload(body: Uint8Array, auth: { token: string } = ALICE): Promise<Response> {
  return api.uploadSnapshot(auth, body);
}

async function receiptOf(res: Response): Promise<SnapshotReceipt> {
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as SnapshotReceipt;
}

/** Every R2 key stored for an owner. */
async function storedKeys(owner: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.SNAPSHOTS.list({ prefix: `snapshots/${owner}/`, cursor });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return keys;
}

/** What a stored path may look like: relative, no `.`/`..`/empty segments, a storable name. */
function isSafeStoredPath(path: string): boolean {
  const segments = path.split("/");
  return (
    !path.startsWith("/") &&
    segments.every((s) => s !== "" && s !== "." && s !== "..") &&
    pathNameProblem(path) === null
  );
}

describe("hostile names and links in an upload", () => {
  it("skips traversal, absolute and link entries smuggled through PAX and long names, and stores only safe paths", async () => {
    const longTraversal = `${"../".repeat(40)}etc/cron.d/evil`;
    const paxEntries = await hostileTarGz([
      { paxPath: "../../etc/cron.d/evil", body: "* * * * * root sh\n" },
      { paxPath: "/etc/passwd", body: "root:x:0:0\n" },
      { paxPath: "C:\\Windows\\evil.bat", body: "echo\n" },
      { paxPath: "ok/../../../up.txt", body: "up\n" },
      { paxPath: "src/via-pax.ts", body: "export const viaPax = true;\n" },
      { paxPath: "alias", typeflag: "2", linkname: "/etc" },
      { paxPath: "hard", typeflag: "1", linkname: "src/via-pax.ts" },
      { paxPath: "dev/null", typeflag: "3" },
      { paxPath: "dev/disk", typeflag: "4" },
      { paxPath: "pipe", typeflag: "6" },
    ]);
    const res = await upload(paxEntries);
    const receipt = await receiptOf(res);
    expect(receipt.files).toBe(1);
    expect(receipt.skipped).toEqual([
      { path: "../../etc/cron.d/evil", reason: "parent_segment" },
      { path: "/etc/passwd", reason: "absolute_path" },
      { path: "C:\\Windows\\evil.bat", reason: "absolute_path" },
      { path: "ok/../../../up.txt", reason: "parent_segment" },
      { path: "alias", reason: "symlink" },
      { path: "hard", reason: "hard_link" },
      { path: "dev/null", reason: "special_file" },
      { path: "dev/disk", reason: "special_file" },
      { path: "pipe", reason: "special_file" },
    ]);

    // A GNU long-name traversal, a file "inside" a symlink, and a name that is not UTF-8.
    const mixed = await tarGz([
      { name: longTraversal, body: "long\n" },
      { name: "alias", type: "symlink", linkname: "/etc" },
      { name: "alias/passwd", body: "not the host's passwd\n" },
      { name: new Uint8Array([0x73, 0x72, 0x63, 0x2f, 0xc0, 0xaf, 0x2e, 0x74, 0x73]), body: "x\n" },
    ]);
    const second = await receiptOf(await upload(mixed));
    expect(second.skipped).toEqual([
      { path: longTraversal, reason: "parent_segment" },
      { path: "alias", reason: "symlink" },
      { path: "src/\ufffd\ufffd.ts", reason: "invalid_name" },
    ]);
    // The link was not followed: the file under its name holds the archive's own bytes.
    const files = openSnapshot(env.SNAPSHOTS, await ownerIdOf(ALICE.token), second.id);
    expect((await files.list()).map((f) => f.path)).toEqual(["alias/passwd"]);
    expect(await files.read("alias/passwd")).toBe("not the host's passwd\n");
    expect(await files.read("../../etc/passwd")).toBeNull();
  });

  it("keeps every skipped name short: 12 symlinks named by 8 MiB PAX paths make a 4 KB receipt, not 100 MB", async () => {
    const body = await paxNameBomb(12);
    expect(body.byteLength).toBeLessThan(200_000);
    const res = await upload(body, BOB);
    const text = await res.clone().text();
    const receipt = await receiptOf(res);
    expect(receipt.files).toBe(0);
    expect(receipt.skipped).toHaveLength(12);
    for (const entry of receipt.skipped) {
      expect(entry.reason).toBe("name_too_long");
      expect(entry.path.length).toBeLessThanOrEqual(SHOWN_PATH_MAX_CHARS);
    }
    expect(text.length).toBeLessThan(10_000);
    // The stored index is as small as the receipt.
    const keys = await storedKeys(await ownerIdOf(BOB.token));
    const index = keys.find(
      (k) => k.startsWith(`snapshots/`) && k.endsWith(`${receipt.id}/index.json`),
    );
    expect(index).toBeDefined();
    expect((await env.SNAPSHOTS.head(index ?? ""))?.size).toBeLessThan(10_000);
    // Inflating ~100 MiB of names takes ~5 s on a loaded machine: the default timeout is too short.
  }, 60_000);
});

describe("a flood of tiny files", () => {
  it("refuses 100,000 files with 413 snapshot_too_many_files and stores nothing", async () => {
    const body = await floodTarGz(100_000);
    const res = await upload(body);
    expect(res.status).toBe(413);
    const json = (await res.clone().json()) as { error: { message: string } };
    expect(await errorCode(res)).toBe("snapshot_too_many_files");
    expect(json.error.message).toContain(`${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} files`);
    const id = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", body)), (b) =>
      b.toString(16).padStart(2, "0"),
    ).join("");
    expect((await storedKeys(await ownerIdOf(ALICE.token))).filter((k) => k.includes(id))).toEqual(
      [],
    );
  }, 60_000);
});

describe("oversized bodies", () => {
  it("refuses a body declared over 25 MiB before reading any of it", async () => {
    const chunkBytes = 64 * 1024;
    const declaredBytes = 26 * 1024 * 1024;
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(noise(chunkBytes));
        if (pulled * chunkBytes >= declaredBytes) controller.close();
      },
    });
    const res = await api.fetcher(
      new Request("http://planport.test/v1/snapshots", {
        method: "POST",
        headers: {
          authorization: `Bearer ${ALICE.token}`,
          "content-type": "application/gzip",
          "content-length": String(declaredBytes),
        },
        body: endless,
        // @ts-expect-error: workerd needs the half-duplex hint for a streamed request body
        duplex: "half",
      }),
    );
    expect(res.status).toBe(413);
    expect(await errorCode(res)).toBe("payload_too_large");
    // The stream's own read-ahead at most; the route never asked for the body.
    expect(pulled).toBeLessThanOrEqual(2);
  });
});

describe("fuzzed tar headers", () => {
  const encoder = new TextEncoder();
  const octal = (n: number) => encoder.encode(`${n.toString(8).padStart(11, "0")}\0`);
  /** The entry's real size most of the time (so parsing goes on), else a lie or junk. */
  const sizeKind = fc.oneof(
    { weight: 6, arbitrary: fc.constant<"exact">("exact") },
    { weight: 1, arbitrary: fc.nat({ max: 4 * 1024 * 1024 }).map(octal) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(0x80, 0xff), fc.uint8Array({ minLength: 11, maxLength: 11 }))
        .map(([sign, b]) => Uint8Array.of(sign, ...b)),
    },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 12, maxLength: 12 }) },
  );
  const name = fc.oneof(
    fc
      .string({ unit: fc.constantFrom(..."ab./\\:~ -_é".split("")), minLength: 1, maxLength: 60 })
      .map((s) => encoder.encode(s)),
    fc
      .constantFrom("../x", "/abs", "a/./b", "./", "a//b", "..", "x/..", "src/a.ts")
      .map((s) => encoder.encode(s)),
    fc.uint8Array({ minLength: 1, maxLength: 100 }),
  );
  const entry = fc.record({
    name,
    typeflag: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom(..."00001234567xgLKSVMD".split("").map((c) => c.charCodeAt(0))),
      },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) },
    ),
    size: sizeKind,
    badChecksum: fc.oneof(
      { weight: 9, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    body: fc.oneof(
      fc.string({ maxLength: 600 }).map((s) => encoder.encode(s)),
      fc.uint8Array({ maxLength: 2048 }),
    ),
  });
  const statuses = new Map<number, number>();

  it("answers 201 or a 4xx with the CONTRACT body for any header, and stores only safe paths", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 4 }), async (entries) => {
        const parts: Uint8Array[] = [];
        for (const e of entries) {
          const sizeField = e.size === "exact" ? octal(e.body.byteLength) : e.size;
          parts.push(rawHeader({ ...e, sizeField }));
          parts.push(e.body, new Uint8Array(-e.body.byteLength & 511));
        }
        parts.push(new Uint8Array(1024));
        const tar = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
        let at = 0;
        for (const p of parts) {
          tar.set(p, at);
          at += p.byteLength;
        }
        const res = await upload(await gzip(tar));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status).toBeLessThan(500);
        if (res.status !== 201) {
          expect([400, 413]).toContain(res.status);
          await errorCode(res);
          return;
        }
        const receipt = (await res.json()) as SnapshotReceipt;
        for (const s of receipt.skipped)
          expect(s.path.length).toBeLessThanOrEqual(SHOWN_PATH_MAX_CHARS);
        const files = openSnapshot(env.SNAPSHOTS, await ownerIdOf(ALICE.token), receipt.id);
        for (const f of await files.list()) expect(isSafeStoredPath(f.path), f.path).toBe(true);
      }),
      { numRuns: 150 },
    );
    // The generator reaches both sides: archives that are stored and archives that are refused.
    expect(statuses.get(201) ?? 0).toBeGreaterThan(10);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(10);
  }, 120_000);

  it("answers 400 invalid_body to noise, a plain tar, and a gzip that ends early", async () => {
    const tar = await tarGz([{ name: "a.txt", body: "a\n" }]);
    for (const body of [
      noise(4096),
      tar.subarray(0, tar.byteLength - 20),
      await gzip(noise(10_000)),
    ]) {
      const res = await upload(body);
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("invalid_body");
    }
  });
});
