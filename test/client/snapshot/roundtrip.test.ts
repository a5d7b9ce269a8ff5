import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../../local-client/snapshot/build.ts";
import { SnapshotError } from "../../../local-client/snapshot/error.ts";
import {
  comparePaths,
  isTextContent,
  SNAPSHOT_MAX_FILE_BYTES,
  SNAPSHOT_MAX_FILES,
} from "../../../src/protocol/index.ts";
import { classifyEntry } from "../../../src/snapshot/entry-rules.ts";
import { FileSet } from "../../../src/snapshot/file-set.ts";
import { readTarGz } from "../../support/tarballs.ts";

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A plain folder (no git) holding `files`. */
function folder(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), "planport-snapshot-rt-"));
  temps.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe("the client's tarball passes the worker's rules unchanged", () => {
  it("every entry is a safe regular text file in sorted order with fixed metadata", async () => {
    const files: Record<string, string> = {
      "README.md": "# round trip\n",
      "src/app.ts": "export const app = 1;\n",
      "src/ünïcödé/名前.ts": "export const name = '名前';\n",
      "src/Z-upper.ts": "export {};\n",
      "src/a-lower.ts": "export {};\n",
      [`long/${"segment-of-a-long-path/".repeat(20)}end.ts`]: "pax path\n",
      "empty.txt": "",
      "bom.txt": "\ufeffkept byte for byte\n",
      "crlf.txt": "line one\r\nline two\r\n",
      "max.txt": "m".repeat(SNAPSHOT_MAX_FILE_BYTES),
    };
    const snapshot = await buildSnapshot(folder(files));
    const entries = await readTarGz(snapshot.bytes);

    const seen = new FileSet();
    const parsed: Record<string, string> = {};
    for (const { header, data } of entries) {
      // The worker's verdict for this header: a plain file stored under the same path.
      expect(classifyEntry(header)).toEqual({ kind: "file", path: header.name });
      expect(seen.admit(header.name)).toBeNull();
      expect(header.size).toBeLessThanOrEqual(SNAPSHOT_MAX_FILE_BYTES);
      expect(isTextContent(data ?? new Uint8Array())).toBe(true);
      expect(header).toMatchObject({
        type: "file",
        mode: 0o644,
        uid: 0,
        gid: 0,
        uname: "",
        gname: "",
      });
      expect(header.mtime?.getTime()).toBe(0);
      parsed[header.name] = new TextDecoder("utf-8", { ignoreBOM: true }).decode(data);
    }
    expect(parsed).toEqual(files);
    const names = entries.map((e) => e.header.name);
    expect(names).toEqual([...names].sort(comparePaths));
    expect(snapshot.files).toBe(entries.length);
  });
});

describe("the client refuses, before uploading, what the server would refuse", () => {
  it(`more than ${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} files → snapshot_too_many_files`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i <= SNAPSHOT_MAX_FILES; i++)
      files[`f/${String(i).padStart(5, "0")}.txt`] = "x\n";
    const failure = await buildSnapshot(folder(files)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SnapshotError);
    expect((failure as SnapshotError).code).toBe("snapshot_too_many_files");
    expect((failure as SnapshotError).message).toContain("20,000");
  }, 60_000);

  it("exactly the limit is fine", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < SNAPSHOT_MAX_FILES; i++)
      files[`f/${String(i).padStart(5, "0")}.txt`] = "x\n";
    const snapshot = await buildSnapshot(folder(files));
    expect(snapshot.files).toBe(SNAPSHOT_MAX_FILES);
  }, 60_000);

  it("more than 100 MiB of text → snapshot_too_large", async () => {
    const oneMib = "t".repeat(SNAPSHOT_MAX_FILE_BYTES);
    const files: Record<string, string> = {};
    for (let i = 0; i < 101; i++) files[`big/${i}.txt`] = oneMib;
    const failure = await buildSnapshot(folder(files)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SnapshotError);
    expect((failure as SnapshotError).code).toBe("snapshot_too_large");
    expect((failure as SnapshotError).message).toContain("100 MiB");
  }, 60_000);

  it("more than 25 MiB compressed → payload_too_large", async () => {
    // Text that does not compress: random printable characters, 60 MiB of it.
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 60; i++) {
      files[`noise/${i}.txt`] = randomBytes(SNAPSHOT_MAX_FILE_BYTES).map((b) => 33 + (b % 94));
    }
    const failure = await buildSnapshot(folder(files)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SnapshotError);
    expect((failure as SnapshotError).code).toBe("payload_too_large");
    expect((failure as SnapshotError).message).toContain("25 MiB");
  }, 60_000);
});
