import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { SnapshotReceipt } from "../../src/protocol/index.ts";
import { ApiClient } from "../support/api-client.ts";
import { tarGz } from "../support/tarballs.ts";

const TOKEN = "e2e-restart-token";
const VARS = { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" };
const auth = { token: TOKEN };
const SETTLE_DEADLINE_MS = 60_000;
const SETTLE_PROBE_MS = 200;

/** Waits until the session's loop has stopped (waiting for the user, idle, or ended). */
async function settled(api: ApiClient, id: string): Promise<void> {
  const deadline = Date.now() + SETTLE_DEADLINE_MS;
  while ((await api.getSession(auth, id)).status === "running") {
    if (Date.now() > deadline)
      throw new Error(`session ${id} was still running after ${SETTLE_DEADLINE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PROBE_MS));
  }
}

describe("a restart of the runtime", () => {
  const dir = mkdtempSync(join(tmpdir(), "planport-restart-"));
  const running: WorkerProcess[] = [];
  afterAll(async () => {
    for (const worker of running) await worker.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loses nothing: after SIGKILL and a restart on the same directory, the session and every event are intact", async () => {
    const first = await startWorkerProcess({ persistDir: dir, vars: VARS });
    running.push(first);
    const api = new ApiClient((request) => fetch(request), first.url);

    const upload = await api.uploadSnapshot(
      auth,
      await tarGz([
        { name: "README.md", body: "# Restart fixture\n\nA tiny service.\n" },
        {
          name: "src/server.ts",
          body: "export function listen(port: number) {\n  return port;\n}\n",
        },
        {
          name: "package.json",
          body: '{ "name": "fixture", "scripts": { "test": "node --test" } }\n',
        },
      ]),
    );
    expect(upload.status).toBe(201);
    const snapshot = (await upload.json()) as SnapshotReceipt;
    const session = await api.createSession(auth, {
      prompt: "Add a health endpoint to the server",
      snapshot_id: snapshot.id,
    });
    // Let the first planning steps land, so there is more than system/init to lose.
    await settled(api, session.id);
    const before = await api.allEvents(auth, session.id);
    expect(before[0]).toMatchObject({ type: "system", subtype: "init" });
    expect(before.length).toBeGreaterThan(1);

    await first.kill();
    await expect(fetch(`${first.url}/v1/healthz`)).rejects.toThrow();

    const second = await startWorkerProcess({ persistDir: dir, port: first.port, vars: VARS });
    running.push(second);
    const after = await api.allEvents(auth, session.id);
    // Every event read before the crash is there, same ids, same order, same content; the loop
    // may have appended more since.
    expect(after.slice(0, before.length)).toEqual(before);
    const ids = after.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);

    const reread = await api.getSession(auth, session.id);
    expect(reread).toMatchObject({
      id: session.id,
      title: session.title,
      created_at: session.created_at,
      review_url: session.review_url,
    });
    expect((await api.listSessions(auth)).data.map((s) => s.id)).toContain(session.id);
    expect((await api.call("HEAD", `/v1/snapshots/${snapshot.id}`, auth)).status).toBe(200);
    await second.stop();
  }, 180_000);
});
