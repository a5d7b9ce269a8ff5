import { describe, expect, it } from "vitest";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import { tarGz } from "../support/tarballs.ts";
import {
  ALICE,
  api,
  BOB,
  createDrivenSession,
  errorCode,
  withPort,
} from "../support/worker/sessions.ts";

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A small repository, unique per call so each test uploads its own snapshot. */
function repository(): Promise<Uint8Array> {
  return tarGz([
    { name: "README.md", body: "# Fixture\n" },
    {
      name: "src/app.ts",
      body: `export const started = ${Date.now()};\nexport const port = 8080;\n`,
    },
  ]);
}

describe("snapshot routes", () => {
  it("stores an upload under the sha256 of its body and answers 201 with the receipt", async () => {
    const bytes = await repository();
    const res = await api.uploadSnapshot(ALICE, bytes);
    expect(res.status).toBe(201);
    const receipt = (await res.json()) as SnapshotReceipt;
    expect(receipt.id).toBe(await sha256Hex(bytes));
    expect(receipt.files).toBe(2);
  });

  it("HEAD answers 200 for the owner's upload and 404 before it and for another owner", async () => {
    const bytes = await repository();
    const id = await sha256Hex(bytes);
    expect((await api.call("HEAD", `/v1/snapshots/${id}`, ALICE)).status).toBe(404);
    expect((await api.uploadSnapshot(ALICE, bytes)).status).toBe(201);
    const head = await api.call("HEAD", `/v1/snapshots/${id}`, ALICE);
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect((await api.call("HEAD", `/v1/snapshots/${id}`, BOB)).status).toBe(404);
    expect((await api.call("HEAD", "/v1/snapshots/not-a-sha", ALICE)).status).toBe(404);
  });

  it("refuses uploads without a token (401), with the wrong content type or an empty body (400)", async () => {
    const bytes = await repository();
    expect((await api.uploadSnapshot({}, bytes)).status).toBe(401);
    expect((await api.uploadSnapshot({ token: "nope" }, bytes)).status).toBe(401);
    const wrongType = await api.call("POST", "/v1/snapshots", ALICE, {
      body: bytes,
      headers: { "content-type": "application/json" },
    });
    expect(wrongType.status).toBe(400);
    expect(await errorCode(wrongType)).toBe("invalid_body");
    const empty = await api.call("POST", "/v1/snapshots", ALICE, {
      headers: { "content-type": "application/gzip" },
    });
    expect(empty.status).toBe(400);
    expect(await errorCode(empty)).toBe("invalid_body");
    const notGzip = await api.call("POST", "/v1/snapshots", ALICE, {
      body: "plain text",
      headers: { "content-type": "application/gzip" },
    });
    expect(notGzip.status).toBe(400);
    expect(await errorCode(notGzip)).toBe("invalid_body");
  });

  it("a session can only use a snapshot its owner uploaded", async () => {
    const bytes = await repository();
    const id = ((await (await api.uploadSnapshot(ALICE, bytes)).json()) as SnapshotReceipt).id;
    const theirs = await api.call("POST", "/v1/sessions", BOB, {
      json: { prompt: "x", snapshot_id: id },
    });
    expect(theirs.status).toBe(400);
    expect(await errorCode(theirs)).toBe("unknown_snapshot");
    const mine = await createDrivenSession(ALICE.token, { snapshot_id: id });
    expect(mine.snapshot_id).toBe(id);
  });

  it("the session reads the snapshot's files, and /changes diffs the overlay against them", async () => {
    const bytes = await repository();
    const id = ((await (await api.uploadSnapshot(ALICE, bytes)).json()) as SnapshotReceipt).id;
    const session = await createDrivenSession(ALICE.token, { snapshot_id: id });
    const app = await withPort(session.id, async (port) => {
      const files = await port.snapshot.list();
      expect(files.map((f) => f.path)).toEqual(["README.md", "src/app.ts"]);
      return port.snapshot.read("src/app.ts");
    });
    expect(app).toContain("export const port = 8080;");
    await withPort(session.id, (port) => {
      port.writeOverlay("src/app.ts", (app ?? "").replace("8080", "9090"));
      port.writeOverlay("README.md", null);
    });
    const diff = await api.changes(ALICE, session.id);
    expect(diff).toContain(
      "diff --git a/README.md b/README.md\ndeleted file mode 100644\nindex ca69e6d08b5b8bb4f11a74f9695e329c203cbfd8..0000000000000000000000000000000000000000\n--- a/README.md\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-# Fixture\n",
    );
    expect(diff).toContain("--- a/src/app.ts\n+++ b/src/app.ts\n");
    expect(diff).toContain("-export const port = 8080;\n+export const port = 9090;\n");
  });
});
