import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../../local-client/embedded/worker-process.ts";
import { createApi } from "../../../local-client/http/api.ts";
import { baseCachePath, saveBase } from "../../../local-client/snapshot/base.ts";
import { buildSnapshot, collectTree } from "../../../local-client/snapshot/build.ts";
import { collectRepository, uploadRepository } from "../../../local-client/snapshot/upload.ts";
import { manifestId } from "../../../src/protocol/index.ts";

/**
 * The client's incremental upload against the real worker (`wrangler dev`, real HTTP, R2 on
 * disk): ids from git's index, one request for an unchanged tree, one blob for one edit, the
 * same rules as the tarball, and the fallbacks (base purged, file edited mid-upload).
 */

const TOKENS = ["inc-token-a", "inc-token-b", "inc-token-c", "inc-token-d", "inc-token-e"];
const dirs: string[] = [];
let worker: WorkerProcess;

beforeAll(async () => {
  const persistDir = mkdtempSync(join(tmpdir(), "planport-incremental-"));
  dirs.push(persistDir);
  worker = await startWorkerProcess({ persistDir, vars: { PLANPORT_TOKENS: TOKENS.join(",") } });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function git(root: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: root, encoding: "utf8" });
}

function repo(files: Record<string, string | Uint8Array>): string {
  const root = temp("planport-incremental-repo-");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  git(root, "init", "--quiet");
  git(root, "add", "--all");
  git(
    root,
    "-c",
    "user.email=t@planport.invalid",
    "-c",
    "user.name=t",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "--quiet",
    "-m",
    "fixture",
  );
  return root;
}

function client(token: string) {
  const who = { server: worker.url, token };
  const env = { ...process.env, XDG_DATA_HOME: temp("planport-incremental-state-") };
  return {
    who,
    env,
    async snapshot(root: string) {
      const tree = await collectRepository(root, { env });
      return uploadRepository(createApi(who), who, tree, { env });
    },
  };
}

const sources: Record<string, string> = {};
for (let i = 0; i < 40; i++) sources[`src/m${i}.ts`] = `export const m${i} = ${i};\n`.repeat(20);

describe("incremental snapshots from the client", () => {
  it("takes git's blob ids for unchanged tracked files and reads the rest", async () => {
    const root = repo({ "a.ts": "export const a = 1;\n", "b.ts": "export const b = 2;\n" });
    writeFileSync(join(root, "b.ts"), "export const b = 3;\n"); // dirty
    writeFileSync(join(root, "new.ts"), "export const n = 4;\n"); // untracked
    const tree = await collectTree(root);
    const byPath = new Map(tree.files.map((f) => [f.path, f]));
    expect(byPath.get("a.ts")).toMatchObject({ fromIndex: true });
    expect(byPath.get("b.ts")).toMatchObject({ fromIndex: false });
    expect(byPath.get("new.ts")).toMatchObject({ fromIndex: false });
    for (const file of tree.files) {
      expect(file.blob, file.path).toBe(git(root, "hash-object", file.path).trim());
    }
  });

  it("keeps the tarball's rules: the same files and the same skipped list", async () => {
    const root = repo({
      "src/app.ts": "export const app = 1;\n",
      "logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]),
      "big.txt": "x".repeat(1024 * 1024 + 1),
    });
    symlinkSync("src/app.ts", join(root, "link.ts"));
    const tree = await collectTree(root);
    const tarball = await buildSnapshot(root);
    // The binary tracked file is found binary when it is read for upload, not before.
    expect(tree.files.map((f) => f.path)).toEqual(["logo.png", "src/app.ts"]);
    const sent = await client(TOKENS[0] as string).snapshot(root);
    expect(sent.files).toBe(tarball.files);
    expect(sent.skipped).toEqual(tarball.skipped);
    expect(sent.skipped.map((s) => s.reason).sort()).toEqual(["binary", "symlink", "too_large"]);
  });

  it("sends every blob once, then nothing for an unchanged tree, then one blob for one edit", async () => {
    const root = repo(sources);
    const me = client(TOKENS[1] as string);
    const first = await me.snapshot(root);
    expect(first).toMatchObject({ reused: false, files: 40, blobsSent: 40 });

    const again = await me.snapshot(root);
    expect(again).toMatchObject({ reused: true, id: first.id, sentBytes: 0, blobsSent: 0 });

    appendFileSync(join(root, "src/m7.ts"), "// edited\n");
    rmSync(join(root, "src/m9.ts"));
    const edited = await me.snapshot(root);
    expect(edited).toMatchObject({ reused: false, files: 39, blobsSent: 1 });
    expect(edited.id).not.toBe(first.id);
    // A one-line delta: a tiny fraction of the first upload.
    expect(edited.sentBytes).toBeLessThan(first.sentBytes / 5);
    expect(edited.sentBytes).toBeLessThan(1500);

    // Another machine with the same tree (a clone): found by its id, nothing sent.
    const clone = temp("planport-incremental-clone-");
    git(clone, "clone", "--quiet", root, ".");
    const other = client(TOKENS[1] as string);
    const cloned = await other.snapshot(clone);
    expect(cloned).toMatchObject({ reused: true, id: first.id });
  }, 60_000);

  it("sends a large tree in packs that start at 512 KiB and double up to 8 MiB, every blob stored", async () => {
    // 900 distinct files of 20,000 bytes: 18 MB of text.
    const files: Record<string, string> = {};
    for (let i = 0; i < 900; i++) {
      files[`big/f${i}.txt`] = `${`${i}:`.padEnd(19_999, "abcdefghij"[i % 10])}\n`;
    }
    const root = repo(files);
    const me = client(TOKENS[4] as string);
    const real = createApi(me.who);
    const packFiles: number[] = [];
    const seen = new Set<Uint8Array>();
    const api: typeof real = {
      ...real,
      async uploadBlobs(body, call) {
        // A retried pack (a transient failure on a loaded machine) is the same body: count it once.
        if (!seen.has(body)) {
          seen.add(body);
          // Files in the pack: a 512-byte header and 20,480 padded bytes each, then the end.
          packFiles.push((gunzipSync(body).byteLength - 1024) / (512 + 20_480));
        }
        return real.uploadBlobs(body, call);
      },
    };
    const tree = await collectRepository(root, { env: me.env });
    const sent = await uploadRepository(api, me.who, tree, { env: me.env });
    expect(sent).toMatchObject({ reused: false, files: 900, blobsSent: 900 });
    // A pack takes files while its tar stays within its batch: 512 KiB, then twice the last,
    // up to 8 MiB; the last pack holds the rest.
    const expected: number[] = [];
    for (let batch = 512 * 1024, left = 900; left > 0; batch = Math.min(2 * batch, 8 << 20)) {
      const fits = Math.floor((batch - 20_000) / 20_992) + 1;
      expected.push(Math.min(fits, left));
      left -= fits;
    }
    expect(expected).toEqual([25, 49, 99, 199, 399, 129]);
    // Packs go out as their compression ends, which on a loaded machine need not be in order.
    const ascending = (list: number[]) => [...list].sort((a, b) => a - b);
    expect(ascending(packFiles)).toEqual(ascending(expected));
  });

  it("remembers binary files: the second time they are not read, and the id is stable", async () => {
    const root = repo({ "a.ts": "export const a = 1;\n", "img.bin": new Uint8Array([0, 1, 2, 3]) });
    const me = client(TOKENS[2] as string);
    const first = await me.snapshot(root);
    expect(first.skipped).toEqual([{ path: "img.bin", reason: "binary" }]);
    const again = await me.snapshot(root);
    expect(again).toMatchObject({ reused: true, id: first.id });
  });

  it("sends the whole manifest when the base is gone from the server", async () => {
    const root = repo(sources);
    const me = client(TOKENS[3] as string);
    await me.snapshot(root);
    // This machine remembers a base the server does not have (purged after retention).
    const files = new Map(Object.keys(sources).map((p) => [p, "0".repeat(40)]));
    const bogus = await manifestId(
      [...files].map(([path, blob]) => ({ path, blob })),
      [],
    );
    saveBase(baseCachePath({ ...me.who, root }, me.env), { id: bogus, files });
    appendFileSync(join(root, "src/m1.ts"), "// after the purge\n");
    const sent = await me.snapshot(root);
    expect(sent).toMatchObject({ reused: false, files: 40 });
    expect(sent.blobsSent).toBe(1);
  }, 60_000);

  it("a file edited after it was collected is sent as it is now", async () => {
    const root = repo({ "a.ts": "export const a = 1;\n" });
    const me = client(TOKENS[4] as string);
    const tree = await collectRepository(root, { env: me.env });
    writeFileSync(join(root, "a.ts"), "export const a = 'later';\n");
    const sent = await uploadRepository(createApi(me.who), me.who, tree, { env: me.env });
    const now = await collectTree(root);
    expect(sent.id).toBe(await manifestId(now.files, now.skipped));
    expect(sent.id).not.toBe(await manifestId(tree.files, tree.skipped));
  });

  it("sends a tree whose unstorable names are shown alike: the manifest lists the shown path once", async () => {
    const root = repo({ "ok.ts": "export {};\n" });
    // Two names that are not UTF-8 both read "n\ufffd.txt" once decoded leniently, and a name
    // over 1,024 bytes is shown as its first 300 characters, like a stored file's path.
    for (const bad of [0xff, 0xfe]) {
      writeFileSync(
        Buffer.concat([Buffer.from(`${root}/n`), Buffer.from([bad]), Buffer.from(".txt")]),
        "x\n",
      );
    }
    const folder = "d".repeat(200);
    const deep = join(root, ...Array(6).fill(folder));
    mkdirSync(deep, { recursive: true });
    for (const tail of ["a", "b"]) writeFileSync(join(deep, tail), "y\n");
    const shortened = `${folder}/${"d".repeat(99)}…`;
    writeFileSync(join(root, shortened), "stored under the shown name\n");
    const tree = await collectTree(root);
    expect(tree.skipped).toEqual([{ path: "n\ufffd.txt", reason: "invalid_name" }]);
    expect(tree.files.map((f) => f.path)).toContain(shortened);
    const sent = await client(TOKENS[4] as string).snapshot(root);
    expect(sent).toMatchObject({ reused: false, files: 2 });
    expect(sent.skipped).toEqual(tree.skipped);
    expect(sent.id).toBe(await manifestId(tree.files, tree.skipped));
  });
});
