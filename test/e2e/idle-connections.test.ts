import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { runNodeScript } from "../support/node-script.ts";

/**
 * The client's requests after a busy stretch, against the real runtime (issue 30): workerd
 * closes a keep-alive connection 5 s after its last answer, and says nothing beforehand. A
 * client whose event loop was busy past that used to send its next request on the closed
 * connection: a 5 MB upload failed with EPIPE and a session creation with "other side
 * closed", and the worker never saw either. The client (test/client/http/stale-connection-child.ts)
 * runs in its own process so that it can be busy while the worker keeps time.
 */

const TOKEN = "stale-token";
const CHILD = resolve(import.meta.dirname, "../client/http/stale-connection-child.ts");
/** Longer than workerd keeps an idle keep-alive connection (5 s, KJ's pipelineTimeout). */
const BUSY_MS = 6_500;
const CHILD_KILL_MS = 90_000;

let worker: WorkerProcess;
const persistDir = mkdtempSync(join(tmpdir(), "planport-idle-connections-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" },
  });
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  rmSync(persistDir, { recursive: true, force: true });
});

describe("a request after the client was busy longer than workerd keeps an idle connection", () => {
  it("reaches the worker and gets its answer: the upload's refusal says why, the session is created", async () => {
    const { code, stdout, stderr } = await runNodeScript(
      CHILD,
      [worker.url, String(BUSY_MS)],
      CHILD_KILL_MS,
    );
    expect(code, stderr).toBe(0);
    const lines = JSON.parse(stdout) as { upload: string; create: string };
    // Before: "0 network_error: cannot reach …: write EPIPE" and "…: other side closed".
    // The upload is 5 MiB of zeros, which the worker reads and refuses as not gzip.
    expect(lines.upload).toMatch(/^400 invalid_body: .*gzip/);
    expect(lines.create).toBe("answered");
  }, 120_000);
});
