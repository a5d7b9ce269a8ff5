import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../../local-client/embedded/worker-process.ts";
import { buildSnapshot } from "../../../local-client/snapshot/build.ts";
import { SnapshotReceiptSchema } from "../../../src/protocol/index.ts";
import { gzipBomb } from "../../support/tarballs.ts";

/**
 * The client's tarball against the real worker: `wrangler dev`, real HTTP, real R2 on disk.
 * What the client packed is exactly what the worker stores.
 */

const TOKEN = "snapshot-upload-token";
const dirs: string[] = [];
let worker: WorkerProcess;

beforeAll(async () => {
  const persistDir = mkdtempSync(join(tmpdir(), "planport-snapshot-upload-"));
  dirs.push(persistDir);
  worker = await startWorkerProcess({ persistDir, vars: { PLANPORT_TOKENS: TOKEN } });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

function repo(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), "planport-snapshot-repo-"));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, stdio: "ignore" });
  git("init", "--quiet");
  git("add", "--all");
  git(
    "-c",
    "user.email=t@planport.invalid",
    "-c",
    "user.name=t",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "-qm",
    "x",
  );
  return root;
}

async function upload(bytes: Uint8Array<ArrayBuffer>): Promise<Response> {
  return fetch(`${worker.url}/v1/snapshots`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/gzip" },
    body: bytes,
  });
}

describe("a snapshot built by the client, uploaded to wrangler dev", () => {
  it("is stored with the client's id, file count and size; HEAD finds it; a re-upload is deduplicated", async () => {
    const files = {
      "src/app.ts": "export const app = 1;\n",
      "src/ünïcödé.ts": "export const name = 'ü';\n",
      [`deep/${"long-segment/".repeat(25)}end.ts`]: "a pax path\n",
      "README.md": "# upload\n",
      "empty.txt": "",
    };
    const root = repo(files);
    writeFileSync(join(root, "untracked.md"), "also packed\n");
    writeFileSync(join(root, "image.bin"), new Uint8Array([0, 1, 2, 3]));
    symlinkSync("README.md", join(root, "link.md"));
    const snapshot = await buildSnapshot(root);

    const head = () =>
      fetch(`${worker.url}/v1/snapshots/${snapshot.id}`, {
        method: "HEAD",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
    expect((await head()).status).toBe(404);

    const res = await upload(snapshot.bytes);
    expect(res.status).toBe(201);
    const receipt = SnapshotReceiptSchema.parse(await res.json());
    const expectedBytes = [...Object.values(files), "also packed\n"].reduce(
      (n, text) => n + Buffer.byteLength(text),
      0,
    );
    // The client already left out the binary and the symlink: the worker skips nothing.
    expect(receipt).toEqual({ id: snapshot.id, files: 6, bytes: expectedBytes, skipped: [] });
    expect(snapshot.files).toBe(6);
    expect(snapshot.skipped.map((s) => s.reason)).toEqual(["binary", "symlink"]);

    expect((await head()).status).toBe(200);
    const again = await upload(snapshot.bytes);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(receipt);
  }, 120_000);

  it("a gzip bomb sent over HTTP is refused with 413 snapshot_too_large", async () => {
    const res = await upload(await gzipBomb(300 * 1024 * 1024));
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("snapshot_too_large");
    expect(body.error.message).toContain("100 MiB");
  }, 120_000);
});
