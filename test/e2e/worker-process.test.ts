import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startWorkerProcess } from "../../local-client/worker-process.ts";

describe("wrangler dev harness", () => {
  const dir = mkdtempSync(join(tmpdir(), "planport-harness-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts, is killed with its whole process group, and restarts on the same port", async () => {
    const first = await startWorkerProcess({ persistDir: dir, vars: { PLANPORT_TOKENS: "t" } });
    expect((await fetch(`${first.url}/v1/healthz`)).status).toBe(200);
    await first.kill();
    await expect(fetch(`${first.url}/v1/healthz`)).rejects.toThrow();
    const second = await startWorkerProcess({ persistDir: dir, port: first.port });
    expect((await fetch(`${second.url}/v1/healthz`)).status).toBe(200);
    await second.stop();
  }, 120_000);
});
