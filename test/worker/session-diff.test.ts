import { applyPatch, parsePatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FileChange, gitBlobId, unifiedDiff } from "../../src/session/files/unified-diff.ts";
import { ALICE, api, createDrivenSession, withPort } from "../support/worker/sessions.ts";

describe("the unified diff of the overlay", () => {
  it("is empty when nothing changed", () => {
    expect(unifiedDiff([])).toBe("");
    expect(unifiedDiff([{ path: "a.txt", before: "same\n", after: "same\n" }])).toBe("");
    expect(unifiedDiff([{ path: "gone.txt", before: null, after: null }])).toBe("");
  });

  it("changes a file with a/ b/ prefixes and three lines of context", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n";
    const after = "1\n2\n3\n4\nfive\n6\n7\n8\n";
    expect(unifiedDiff([{ path: "src/n.txt", before, after }])).toBe(
      [
        "diff --git a/src/n.txt b/src/n.txt",
        "--- a/src/n.txt",
        "+++ b/src/n.txt",
        "@@ -2,7 +2,7 @@",
        " 2",
        " 3",
        " 4",
        "-5",
        "+five",
        " 6",
        " 7",
        " 8",
        "",
      ].join("\n"),
    );
  });

  it("creates a file from /dev/null and deletes one to /dev/null, with git's mode lines", () => {
    expect(unifiedDiff([{ path: "new.ts", before: null, after: "export {};\n" }])).toBe(
      "diff --git a/new.ts b/new.ts\nnew file mode 100644\n--- /dev/null\n+++ b/new.ts\n@@ -0,0 +1,1 @@\n+export {};\n",
    );
    expect(unifiedDiff([{ path: "old.ts", before: "x\ny\n", after: null }])).toBe(
      "diff --git a/old.ts b/old.ts\ndeleted file mode 100644\n--- a/old.ts\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n",
    );
  });

  it("marks a side without a final newline", () => {
    const patch = unifiedDiff([{ path: "a.txt", before: "x\n", after: "x\ny" }]);
    expect(patch).toContain("+y\n\\ No newline at end of file\n");
    const removed = unifiedDiff([{ path: "b.txt", before: "x", after: "x\n" }]);
    expect(removed).toContain("-x\n\\ No newline at end of file\n+x\n");
  });

  it("quotes unusual path characters the way git does", () => {
    const patch = unifiedDiff([{ path: 'q"uote.txt', before: "a\n", after: "b\n" }]);
    expect(patch.split("\n")[0]).toBe('diff --git "a/q\\"uote.txt" "b/q\\"uote.txt"');
  });

  it("orders files by path and applies back to exactly the new contents (property)", () => {
    const line = fc.constantFrom("a", "b", "c", "", "  indented", "tab\there", "é", "x\r");
    const text = fc
      .tuple(fc.array(line, { maxLength: 15 }), fc.boolean())
      .map(([lines, newline]) =>
        lines.length === 0 ? "" : lines.join("\n") + (newline ? "\n" : ""),
      );
    const change = fc.record({
      path: fc.constantFrom("a.txt", "dir/b.ts", "x y.md", "deep/er/c"),
      before: fc.option(text, { nil: null }),
      after: fc.option(text, { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(change, { selector: (c) => c.path, maxLength: 4 }),
        (changes: FileChange[]) => {
          const patch = unifiedDiff(changes);
          const files = patch === "" ? [] : parsePatch(patch);
          const changed = changes.filter(
            (c) => c.before !== c.after && !(c.before === null && c.after === null),
          );
          const pathOf = (name: string | undefined, other: string | undefined) =>
            (name === "/dev/null" || name === undefined ? other : name)?.slice(2) ?? "";
          const paths = files.map((f) => pathOf(f.newFileName, f.oldFileName));
          expect(paths).toEqual(changed.map((c) => c.path).sort());
          for (const [i, file] of files.entries()) {
            const c = changed.find((x) => x.path === paths[i]);
            expect(applyPatch(c?.before ?? "", file)).toBe(c?.after ?? "");
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("GET /changes", () => {
  it("answers text/x-diff of the overlay against the snapshot, empty when nothing changed", async () => {
    const session = await createDrivenSession();
    const empty = await api.call("GET", `/v1/sessions/${session.id}/changes`, ALICE);
    expect(empty.status).toBe(200);
    expect(empty.headers.get("content-type")).toContain("text/x-diff");
    expect(await empty.text()).toBe("");
    await withPort(session.id, (port) => {
      port.writeOverlay("src/new.ts", "export const x = 1;\n");
      port.writeOverlay("README.md", null);
    });
    const diff = await api.changes(ALICE, session.id);
    // No snapshot: the new file is a creation, and deleting a file that never existed is no change.
    // The index line carries git's blob ids, so `git apply --3way` can merge.
    expect(diff).toBe(
      "diff --git a/src/new.ts b/src/new.ts\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..ad1d380d6cc4dfe69119852d461b7ccd89a19228\n--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1,1 @@\n+export const x = 1;\n",
    );
  });
});

describe("git blob ids for three-way merges", () => {
  it("computes the same id as git hash-object", async () => {
    expect(await gitBlobId("hello\n")).toBe("ce013625030ba8dba906f756967f9e9ca394464a");
    expect(await gitBlobId("")).toBe("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    expect(await gitBlobId("é\n")).toBe("c6003325155f475bd7c87731607525dce73be9cf");
  });

  it("puts git's index line after the extended headers, with the mode only for modifications", () => {
    const modified = unifiedDiff([
      {
        path: "a.txt",
        before: "x\n",
        after: "y\n",
        blobs: { before: "1".repeat(40), after: "2".repeat(40) },
      },
    ]);
    expect(modified.split("\n").slice(0, 2)).toEqual([
      "diff --git a/a.txt b/a.txt",
      `index ${"1".repeat(40)}..${"2".repeat(40)} 100644`,
    ]);
    const created = unifiedDiff([
      { path: "n.txt", before: null, after: "y\n", blobs: { before: null, after: "2".repeat(40) } },
    ]);
    expect(created.split("\n").slice(0, 3)).toEqual([
      "diff --git a/n.txt b/n.txt",
      "new file mode 100644",
      `index ${"0".repeat(40)}..${"2".repeat(40)}`,
    ]);
  });
});
