import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { openParallelGzip } from "../../../local-client/snapshot/gzip.ts";

const MIB = 1024 * 1024;

async function gzipInChunks(input: Uint8Array, chunkBytes: number): Promise<Uint8Array> {
  const gzip = openParallelGzip(6);
  for (let start = 0; start < input.byteLength; start += chunkBytes) {
    await gzip.write(input.subarray(start, start + chunkBytes));
  }
  return gzip.end();
}

/** Text-like input: random words, so it compresses like source code does. */
function textLike(bytes: number): Uint8Array {
  const words = randomBytes(bytes).map((b) => (b % 5 === 0 ? 10 : 97 + (b % 26)));
  return new Uint8Array(words);
}

describe("parallel gzip (pigz-style blocks)", () => {
  const inputs: Array<[string, Uint8Array]> = [
    ["empty", new Uint8Array()],
    ["one byte", Uint8Array.of(42)],
    ["exactly one block", textLike(MIB)],
    ["three and a half blocks of text", textLike(3.5 * MIB)],
    ["incompressible noise", new Uint8Array(randomBytes(2 * MIB + 7))],
  ];

  for (const [label, input] of inputs) {
    it(`${label}: gunzips to the input, and any write chunking gives the same bytes`, async () => {
      const whole = await gzipInChunks(input, Math.max(1, input.byteLength));
      expect(gunzipSync(whole).equals(input)).toBe(true);
      for (const chunk of [1000, 64 * 1024, MIB + 1]) {
        expect(Buffer.from(await gzipInChunks(input, chunk)).equals(Buffer.from(whole))).toBe(true);
      }
      expect(Buffer.from(whole.subarray(0, 10)).toString("hex")).toBe("1f8b08000000000000ff");
    }, 60_000);
  }

  it("compresses text about as well as one zlib stream (the dictionary carries across blocks)", async () => {
    const { gzipSync } = await import("node:zlib");
    const input = textLike(4 * MIB);
    const parallel = await gzipInChunks(input, 256 * 1024);
    const single = gzipSync(input, { level: 6 });
    expect(parallel.byteLength).toBeLessThan(single.byteLength * 1.01);
  }, 60_000);

  it("reports the compressed size as it grows, so a caller can stop at a limit", async () => {
    const sizes: number[] = [];
    const gzip = openParallelGzip(6, (total) => sizes.push(total));
    await gzip.write(new Uint8Array(randomBytes(5 * MIB)));
    const out = await gzip.end();
    expect(sizes.length).toBeGreaterThanOrEqual(5);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(sizes.at(-1)).toBe(out.byteLength - 10 - 8);
  }, 60_000);
});
