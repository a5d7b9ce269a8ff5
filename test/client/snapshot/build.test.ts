import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildSnapshot, type SnapshotProgress } from "../../../local-client/snapshot/build.ts";
import { SnapshotError } from "../../../local-client/snapshot/error.ts";
import { readTarGz } from "../../support/tarballs.ts";

const MIB = 1024 * 1024;
const temps: string[] = [];

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "planport-snapshot-"));
  temps.push(dir);
  return dir;
}

function write(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

function git(root: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: root, encoding: "utf8" });
}

/** A repository with `committed` committed and nothing else. */
function repo(committed: Record<string, string | Uint8Array>): string {
  const root = tempDir();
  git(root, "init", "--quiet", "--initial-branch=main");
  git(root, "config", "user.email", "test@planport.invalid");
  git(root, "config", "user.name", "planport test");
  git(root, "config", "commit.gpgsign", "false");
  write(root, committed);
  git(root, "add", "--all");
  git(root, "commit", "--quiet", "-m", "initial");
  return root;
}

/** The files of a snapshot tarball as path → text. */
async function unpackSnapshot(bytes: Uint8Array): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readTarGz(bytes)) {
    files[entry.header.name] = new TextDecoder().decode(entry.data);
  }
  return files;
}

async function contents(root: string): Promise<Record<string, string>> {
  return unpackSnapshot((await buildSnapshot(root)).bytes);
}

describe("buildSnapshot: the git view of the working tree", () => {
  it("includes untracked files, excludes ignored ones, takes uncommitted edits, omits deleted files", async () => {
    const root = repo({
      ".gitignore": "*.log\nbuild/\n",
      "src/app.ts": "export const version = 1;\n",
      "src/old.ts": "export const old = true;\n",
      "README.md": "# demo\n",
    });
    write(root, {
      "src/app.ts": "export const version = 2; // not committed yet\n",
      "src/new.ts": "export const fresh = true;\n",
      "notes/todo.md": "- untracked note\n",
      "debug.log": "ignored\n",
      "build/out.js": "ignored folder\n",
    });
    rmSync(join(root, "src/old.ts"));
    write(root, { "staged.ts": "export {};\n" });
    git(root, "add", "staged.ts");

    const snapshot = await buildSnapshot(root);
    expect(await unpackSnapshot(snapshot.bytes)).toEqual({
      ".gitignore": "*.log\nbuild/\n",
      "README.md": "# demo\n",
      "notes/todo.md": "- untracked note\n",
      "src/app.ts": "export const version = 2; // not committed yet\n",
      "src/new.ts": "export const fresh = true;\n",
      "staged.ts": "export {};\n",
    });
    expect(snapshot.files).toBe(6);
    expect(snapshot.skipped).toEqual([]);
  });

  it("includes a tracked file even when it matches .gitignore (git still tracks it)", async () => {
    const root = repo({ "keep.log": "tracked before the rule\n" });
    write(root, { ".gitignore": "*.log\n", "new.log": "untracked and ignored\n" });
    expect(Object.keys(await contents(root)).sort()).toEqual([".gitignore", "keep.log"]);
  });

  it("skips symlinks, binaries, files over 1 MiB and submodules, and says why", async () => {
    const root = repo({ "a.ts": "export {};\n" });
    write(root, {
      "logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      "latin1.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      "huge.txt": "x".repeat(2 * MIB),
      "exactly-1mib.txt": "y".repeat(MIB),
    });
    symlinkSync("a.ts", join(root, "link-to-a.ts"));
    symlinkSync("/etc", join(root, "link-to-etc"));
    const nested = join(root, "vendor/other");
    mkdirSync(nested, { recursive: true });
    git(nested, "init", "--quiet");
    write(nested, { "inside.ts": "export {};\n" });

    const snapshot = await buildSnapshot(root);
    expect(snapshot.skipped).toEqual([
      { path: "huge.txt", reason: "too_large" },
      { path: "latin1.txt", reason: "binary" },
      { path: "link-to-a.ts", reason: "symlink" },
      { path: "link-to-etc", reason: "symlink" },
      { path: "logo.png", reason: "binary" },
      { path: "vendor/other", reason: "submodule" },
    ]);
    expect(Object.keys(await unpackSnapshot(snapshot.bytes)).sort()).toEqual([
      "a.ts",
      "exactly-1mib.txt",
    ]);
  });

  it("skips names a snapshot cannot store: control characters and bytes that are not UTF-8", async () => {
    const root = repo({ "ok.ts": "export {};\n" });
    write(root, { "bad\u001b[2Jname.txt": "escape sequence in the name\n" });
    writeFileSync(
      Buffer.concat([Buffer.from(`${root}/n`), Buffer.from([0xff, 0xfe]), Buffer.from(".txt")]),
      "x\n",
    );
    const snapshot = await buildSnapshot(root);
    expect(snapshot.skipped).toEqual([
      { path: "bad\\u001b[2Jname.txt", reason: "invalid_name" },
      { path: "n\ufffd\ufffd.txt", reason: "invalid_name" },
    ]);
    expect(snapshot.files).toBe(1);
  });

  it("snapshots a subfolder of a repository with paths relative to that subfolder", async () => {
    const root = repo({
      "packages/api/index.ts": "export {};\n",
      "packages/web/index.ts": "export {};\n",
    });
    expect(await contents(join(root, "packages/api"))).toEqual({ "index.ts": "export {};\n" });
  });

  it("refuses a root that is not a folder", async () => {
    const root = tempDir();
    write(root, { "file.txt": "x\n" });
    const failure = await buildSnapshot(join(root, "file.txt")).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SnapshotError);
    expect((failure as SnapshotError).code).toBe("not_a_directory");
    expect(await buildSnapshot(join(root, "missing")).catch((e: SnapshotError) => e.code)).toBe(
      "not_a_directory",
    );
  });
});

describe("buildSnapshot: the same tree gives the same bytes", () => {
  const files = {
    "src/app.ts": "export const app = 1;\n",
    "src/util/strings.ts": "export const upper = (s: string) => s.toUpperCase();\n",
    [`deep/${"long-folder-name/".repeat(16)}file.ts`]:
      "a path longer than ustar's 255 bytes: a pax record\n",
    "README.md": "# same\n",
    "empty.txt": "",
  };

  it("twice in a row, in another clone, with other mtimes and modes: one sha256", async () => {
    const first = repo(files);
    const a = await buildSnapshot(first);
    const b = await buildSnapshot(first);
    expect(b.id).toBe(a.id);
    expect(Buffer.from(b.bytes).equals(Buffer.from(a.bytes))).toBe(true);

    const second = repo(Object.fromEntries(Object.entries(files).reverse()));
    utimesSync(join(second, "src/app.ts"), new Date("2001-02-03"), new Date("2001-02-03"));
    chmodSync(join(second, "README.md"), 0o755);
    const c = await buildSnapshot(second);
    expect(c.id).toBe(a.id);
  });

  it("one changed byte changes the id", async () => {
    const root = repo(files);
    const before = await buildSnapshot(root);
    write(root, { "README.md": "# same!\n" });
    expect((await buildSnapshot(root)).id).not.toBe(before.id);
  });

  it("the id is the sha256 of the bytes, and the gzip header carries no time or name", async () => {
    const { createHash } = await import("node:crypto");
    const snapshot = await buildSnapshot(repo(files));
    expect(snapshot.id).toBe(createHash("sha256").update(snapshot.bytes).digest("hex"));
    const header = Buffer.from(snapshot.bytes.subarray(0, 10)).toString("hex");
    expect(header).toBe("1f8b08000000000000ff");
  });
});

describe("buildSnapshot outside git: the folder with its .gitignore files", () => {
  it("honours nested .gitignore files with git's precedence and always skips .git and node_modules", async () => {
    const root = tempDir();
    write(root, {
      ".gitignore": "*.log\ndist/\nsecret.txt\n",
      "app.ts": "export {};\n",
      "debug.log": "ignored by the root rule\n",
      "dist/bundle.js": "ignored folder\n",
      "secret.txt": "ignored\n",
      "logs/.gitignore": "!keep.log\n",
      "logs/keep.log": "re-included by the deeper rule\n",
      "logs/drop.log": "still ignored\n",
      "docs/.gitignore": "draft-*\n",
      "docs/draft-1.md": "ignored by docs/.gitignore\n",
      "docs/final.md": "kept\n",
      "other/draft-2.md": "docs' rule does not reach here\n",
      "node_modules/pkg/index.js": "installed code\n",
      "src/node_modules/x.js": "also installed code\n",
      ".git/HEAD": "ref: refs/heads/main\n",
    });
    const snapshot = await buildSnapshot(root);
    expect(await unpackSnapshot(snapshot.bytes)).toEqual({
      ".gitignore": "*.log\ndist/\nsecret.txt\n",
      "app.ts": "export {};\n",
      "docs/.gitignore": "draft-*\n",
      "docs/final.md": "kept\n",
      "logs/.gitignore": "!keep.log\n",
      "logs/keep.log": "re-included by the deeper rule\n",
      "other/draft-2.md": "docs' rule does not reach here\n",
    });
  });

  it("skips symlinks and binaries there too", async () => {
    const root = tempDir();
    write(root, { "a.ts": "export {};\n", "blob.bin": new Uint8Array([1, 0, 2]) });
    symlinkSync(root, join(root, "loop"));
    const snapshot = await buildSnapshot(root);
    expect(snapshot.skipped).toEqual([
      { path: "blob.bin", reason: "binary" },
      { path: "loop", reason: "symlink" },
    ]);
    expect(snapshot.files).toBe(1);
  });

  it("stops when its signal is aborted, with the signal's reason", async () => {
    const root = tempDir();
    write(
      root,
      Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f/${i}.txt`, `${i}\n`])),
    );
    const controller = new AbortController();
    const stopped = buildSnapshot(root, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === "packing" && p.done === 100)
          controller.abort(new Error("user pressed Ctrl-C"));
      },
    });
    await expect(stopped).rejects.toThrow("user pressed Ctrl-C");
  });

  it("reports progress through both phases, ending at done === total", async () => {
    const root = tempDir();
    write(
      root,
      Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`f/${i}.txt`, `${i}\n`])),
    );
    const seen: SnapshotProgress[] = [];
    await buildSnapshot(root, { onProgress: (p) => seen.push(p) });
    const last = (phase: string) => seen.filter((p) => p.phase === phase).at(-1);
    expect(last("scanning")).toEqual({ phase: "scanning", done: 250, total: 250 });
    expect(last("packing")).toEqual({ phase: "packing", done: 250, total: 250 });
    expect(seen.length).toBeLessThanOrEqual(10);
    expect(seen.findIndex((p) => p.phase === "packing")).toBeGreaterThan(
      seen.findLastIndex((p) => p.phase === "scanning"),
    );
  });
});
