import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { manifestDelta, type SnapshotBase } from "../../../local-client/snapshot/base.ts";
import type { CollectedTree } from "../../../local-client/snapshot/build.ts";
import { comparePaths, gitBlobId, manifestId, manifestText } from "../../../src/protocol/index.ts";

/** The pure parts of incremental snapshots: blob ids, the canonical manifest, the delta. */

const blob = (n: number) => n.toString(16).padStart(40, "0");

function treeOf(files: Record<string, string>): CollectedTree {
  return {
    root: "/r",
    files: Object.entries(files)
      .map(([path, b]) => ({ path, blob: b, fromIndex: true }))
      .sort((a, b) => comparePaths(a.path, b.path)),
    skipped: [],
    binary: new Set(),
  };
}

describe("blob ids", () => {
  it("are git's", () => {
    expect(gitBlobId(new Uint8Array())).toBe("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    expect(gitBlobId(new TextEncoder().encode("hello\n"))).toBe(
      "ce013625030ba8dba906f756967f9e9ca394464a",
    );
  });
});

describe("the canonical manifest", () => {
  it("sorts files and skips by code point, one line each", () => {
    const text = manifestText(
      [
        { path: "b.ts", blob: blob(2) },
        { path: "a/z.ts", blob: blob(1) },
      ],
      [{ path: "img.png", reason: "binary" }],
    );
    expect(text).toBe(
      `planport-manifest 1\n${blob(1)} a/z.ts\n${blob(2)} b.ts\nskip binary img.png\n`,
    );
  });

  it("has one id per tree, whatever the order it is given in", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 12 }),
        async (paths) => {
          const files = paths.map((path, i) => ({ path, blob: blob(i) }));
          const shuffled = [...files].reverse();
          expect(await manifestId(files, [])).toBe(await manifestId(shuffled, []));
        },
      ),
      { numRuns: 50 },
    );
  });

  it("tells a file from a skipped entry of the same path", async () => {
    const asFile = await manifestId([{ path: "x", blob: blob(1) }], []);
    const asSkip = await manifestId([], [{ path: "x", reason: "binary" }]);
    expect(asFile).not.toBe(asSkip);
  });
});

describe("the delta against a base", () => {
  const base: SnapshotBase = {
    id: "a".repeat(64),
    files: new Map([
      ["a.ts", blob(1)],
      ["b.ts", blob(2)],
      ["c.ts", blob(3)],
    ]),
  };

  it("lists changed and new paths, removed paths, and only the blobs the base lacks", () => {
    const delta = manifestDelta(
      base,
      treeOf({ "a.ts": blob(1), "b.ts": blob(9), "d.ts": blob(3) }),
    );
    expect(delta.changed).toEqual([
      ["b.ts", blob(9)],
      ["d.ts", blob(3)],
    ]);
    expect(delta.removed).toEqual(["c.ts"]);
    // d.ts has c.ts's content: the server has it already.
    expect(delta.candidates).toEqual([blob(9)]);
  });

  it("without a base, everything is changed and each distinct blob asked once", () => {
    const delta = manifestDelta(null, treeOf({ "a.ts": blob(1), "b.ts": blob(1) }));
    expect(delta.changed).toHaveLength(2);
    expect(delta.removed).toEqual([]);
    expect(delta.candidates).toEqual([blob(1)]);
  });

  it("base + delta is the tree (property)", () => {
    const entries = fc.dictionary(
      fc.constantFrom("a", "b", "c", "d", "e", "f"),
      fc.integer({ min: 0, max: 5 }).map(blob),
    );
    fc.assert(
      fc.property(entries, entries, (before, after) => {
        const old: SnapshotBase = { id: "b".repeat(64), files: new Map(Object.entries(before)) };
        const delta = manifestDelta(old, treeOf(after));
        const rebuilt = new Map(old.files);
        for (const path of delta.removed) rebuilt.delete(path);
        for (const [path, b] of delta.changed) rebuilt.set(path, b);
        expect(Object.fromEntries(rebuilt)).toEqual(after);
        for (const c of delta.candidates) expect([...old.files.values()]).not.toContain(c);
      }),
    );
  });
});
