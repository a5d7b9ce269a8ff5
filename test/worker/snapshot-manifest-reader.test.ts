import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ManifestRequest,
  ManifestRequestSchema,
  SNAPSHOT_MAX_FILES,
} from "../../src/protocol/index.ts";
import { IngestFailure } from "../../src/snapshot/errors.ts";
import { MANIFEST_ENTRY_MAX_CHARS, ManifestReader } from "../../src/snapshot/manifest-reader.ts";

/**
 * The manifest reader on its own (issue 22, finding 2): it must read exactly what
 * `JSON.parse` + `ManifestRequestSchema` accept, however the text is cut into pieces, and
 * refuse an oversized list while reading it — the 20,001st entry before a character of it.
 */

const BLOB = "e69de29bb2d1d6434b8dc53c34e5e2d3d8f8fd22";
const ID = "a".repeat(64);

/** Reads `text` cut at `cuts`; the manifest, or the refusal's code and message. */
function read(text: string, cuts: readonly number[] = []): ManifestRequest | IngestFailure {
  const reader = new ManifestReader();
  try {
    let from = 0;
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      reader.push(text.slice(from, cut));
      from = Math.max(from, cut);
    }
    reader.push(text.slice(from));
    return reader.end();
  } catch (error) {
    if (error instanceof IngestFailure) return error;
    throw error;
  }
}

/** What the whole-document parse makes of `text`: the manifest, or null when it refuses. */
function wholeParse(text: string): ManifestRequest | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = ManifestRequestSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

function refusal(outcome: ManifestRequest | IngestFailure): { code: string; message: string } {
  if (!(outcome instanceof IngestFailure)) throw new Error("the reader accepted the text");
  return { code: outcome.error.code, message: outcome.error.message };
}

const path = fc.string({
  unit: fc.constantFrom(...'ab/.é😀"\\\n\u0000 '.split(""), "\ud800"),
  minLength: 1,
  maxLength: 12,
});
const manifest = fc.record(
  {
    id: fc.constant(ID),
    base: fc.constant("b".repeat(64)),
    files: fc.array(fc.tuple(path, fc.constant(BLOB)), { maxLength: 6 }),
    removed: fc.array(path, { maxLength: 3 }),
    skipped: fc.array(
      fc.record({ path, reason: fc.constantFrom("binary", "symlink", "too_large") }),
      { maxLength: 3 },
    ),
  },
  { requiredKeys: ["id", "files", "skipped"] },
);
/** JSON.stringify with random whitespace between tokens (outside strings). */
const spaced = (value: unknown, gaps: readonly string[]): string => {
  let n = 0;
  return JSON.stringify(value, null, 1).replace(
    /("(?:[^"\\]|\\.)*")|\s+/g,
    (_match, string: string | undefined) =>
      string !== undefined ? string : (gaps[n++ % gaps.length] ?? ""),
  );
};

describe("the manifest reader reads what JSON.parse and the schema read", () => {
  it("gives the same manifest for any manifest, spacing and cut into pieces anywhere", () => {
    fc.assert(
      fc.property(
        manifest,
        fc.array(fc.constantFrom("", " ", "\n\t", "\r\n  ")),
        fc.array(fc.nat(2_000), { maxLength: 8 }),
        (value, gaps, cuts) => {
          const text = spaced(value, gaps.length > 0 ? gaps : [""]);
          expect(read(text, cuts)).toEqual(wholeParse(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("accepts only what the whole-document parse accepts, for text damaged anywhere", () => {
    const damage = fc.record({
      at: fc.nat(),
      cut: fc.nat(3),
      insert: fc.constantFrom("", ",", "]", "[", "}", "{", '"', ":", "1", "x", " ", "\\", "null"),
    });
    fc.assert(
      fc.property(
        manifest,
        fc.array(damage, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(600), { maxLength: 4 }),
        (value, damages, cuts) => {
          let text = JSON.stringify(value);
          for (const { at, cut, insert } of damages) {
            const i = at % (text.length + 1);
            text = text.slice(0, i) + insert + text.slice(i + cut);
          }
          const outcome = read(text, cuts);
          const whole = wholeParse(text);
          if (outcome instanceof IngestFailure) {
            expect(outcome.error.code).toBe("invalid_manifest");
            // Stricter than JSON.parse only where a manifest names a member twice.
            if (whole !== null) expect(outcome.error.message).toContain("appears twice");
          } else expect(outcome).toEqual(whole);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe("the manifest reader refuses while reading", () => {
  /** A 600,000-entry manifest's text, made and pushed piece by piece (as the inflater does). */
  function* bombPieces(entries: number, pieceChars = 64 * 1024): Generator<string> {
    let piece = `{"id":"${ID}","files":[`;
    for (let i = 0; i < entries; i++) {
      piece += `${i === 0 ? "" : ","}["${i.toString(36)}","${BLOB}"]`;
      if (piece.length >= pieceChars) {
        yield piece;
        piece = "";
      }
    }
    yield `${piece}],"skipped":[]}`;
  }

  it(`refuses the ${(SNAPSHOT_MAX_FILES + 1).toLocaleString("en-US")}st entry of 600,000 before reading it, having read one piece past the limit at most`, () => {
    const reader = new ManifestReader();
    let pushed = 0;
    let refused: IngestFailure | null = null;
    for (const piece of bombPieces(600_000)) {
      try {
        reader.push(piece);
        pushed += piece.length;
      } catch (error) {
        refused = error as IngestFailure;
        break;
      }
    }
    expect(refused?.error).toMatchObject({ status: 413, code: "snapshot_too_many_files" });
    const justOver = [...bombPieces(SNAPSHOT_MAX_FILES + 1)].join("").length;
    // Refusing 28 MiB cost what refusing a manifest one entry over the limit costs.
    expect(pushed).toBeLessThan(justOver);
    expect(pushed).toBeGreaterThan(justOver - 2 * 64 * 1024);
  });

  it("counts files and skipped entries together, and reads 20,000 of them", () => {
    const entries = (n: number, make: (i: number) => string) =>
      Array.from({ length: n }, (_, i) => make(i)).join(",");
    const file = (i: number) => `["f${i}","${BLOB}"]`;
    const skip = (i: number) => `{"path":"s${i}","reason":"binary"}`;
    const half = SNAPSHOT_MAX_FILES / 2;
    const full = `{"id":"${ID}","skipped":[${entries(half, skip)}],"files":[${entries(half, file)}]}`;
    const ok = read(full) as ManifestRequest;
    expect(ok.files).toHaveLength(half);
    expect(ok.skipped).toHaveLength(half);
    const over = `{"id":"${ID}","skipped":[${entries(half, skip)}],"files":[${entries(half + 1, file)}]}`;
    expect(refusal(read(over)).code).toBe("snapshot_too_many_files");
    const removed = `{"id":"${ID}","files":[],"skipped":[],"removed":[${entries(SNAPSHOT_MAX_FILES + 1, (i) => `"r${i}"`)}]}`;
    expect(refusal(read(removed)).message).toContain("removed: more than 20,000 paths");
  });

  it("refuses an entry longer than any path needs, naming it, without waiting for its end", () => {
    const long = `{"id":"${ID}","files":[["a","${BLOB}"],["${"x".repeat(MANIFEST_ENTRY_MAX_CHARS)}`;
    const reader = new ManifestReader();
    expect(() => reader.push(long)).toThrow(/files\[1\]: longer than 8192 characters/);
    // A path of 1,024 three-byte characters, each escaped as \uXXXX, still fits.
    const widest = `["${"\\u00e9".repeat(1_024)}","${BLOB}"]`;
    expect(widest.length).toBeLessThan(MANIFEST_ENTRY_MAX_CHARS);
    const value = read(`{"id":"${ID}","files":[${widest}],"skipped":[]}`) as ManifestRequest;
    expect(value.files[0]?.[0]).toBe("é".repeat(1_024));
  });

  it("names the entry, the member or the place that is wrong", () => {
    const cases: [string, RegExp][] = [
      [`{"id":"${ID}","files":[["a","nothex"]],"skipped":[]}`, /files\[0\]\.1: a blob id/],
      [`{"id":"${ID}","files":[],"skipped":[{"path":"a","reason":"x"}]}`, /skipped\[0\]\.reason/],
      [`{"id":"${ID}","files":[],"skipped":[],"files":[]}`, /files appears twice/],
      [`{"id":"${ID}","files":[],"skipped":[],"extra":[]}`, /unrecognized member "extra"/],
      [`{"id":"x","files":[],"skipped":[]}`, /id: a snapshot id/],
      [`{"id":"${ID}","files":{},"skipped":[]}`, /files: expected a list/],
      [`{"id":"${ID}","skipped":[]}`, /files: missing/],
      [`{"id":"${ID}","files":[],"skipped":[]} x`, /text after the manifest/],
      [`{"id":"${ID}","files":[],"skipped":[]`, /ends before its closing brace/],
      [`[]`, /a manifest is a JSON object/],
      [``, /The manifest is empty/],
    ];
    for (const [text, message] of cases) {
      const refused = refusal(read(text));
      expect(refused.code, text).toBe("invalid_manifest");
      expect(refused.message, text).toMatch(message);
    }
  });
});
