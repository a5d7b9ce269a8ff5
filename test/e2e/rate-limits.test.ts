import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess, type WorkerProcess } from "../../local-client/worker-process.ts";

/**
 * Rate limits under `wrangler dev` with the defaults of wrangler.toml (issue 10, finding 10):
 * a runaway script creating sessions 20 at a time is stopped with 429 and Retry-After, and the
 * worker stays healthy.
 */

const TOKEN = "e2e-rate-limits";
let worker: WorkerProcess;
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-rate-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" },
  });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
});

async function concurrently<T>(n: number, width: number, job: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (started < n) {
        started++;
        results.push(await job());
      }
    }),
  );
  return results;
}

describe("rate limits under wrangler dev", () => {
  it("120 session creations at concurrency 20: at most two windows' worth get 201, the rest 429", async () => {
    const create = async () => {
      const res = await fetch(`${worker.url}/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "Which database does this use?" }),
      });
      const body = (await res.json()) as { error?: { code: string } };
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
    };
    const answers = await concurrently(120, 20, create);
    const created = answers.filter((a) => a.status === 201).length;
    const limited = answers.filter((a) => a.status === 429);
    expect(created).toBeGreaterThanOrEqual(30);
    expect(created).toBeLessThanOrEqual(60);
    expect(created + limited.length).toBe(120);
    expect(limited[0]).toMatchObject({
      retryAfter: "60",
      body: { error: { code: "rate_limited" } },
    });
    const health = await fetch(`${worker.url}/v1/healthz`);
    expect(health.status).toBe(200);
  }, 120_000);

  it("wrong tokens are cut off with 429 after the failed-authentication limit", async () => {
    const statuses = await concurrently(80, 10, async () => {
      const res = await fetch(`${worker.url}/v1/sessions`, {
        headers: { authorization: "Bearer guessing" },
      });
      await res.body?.cancel();
      return res.status;
    });
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(60);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
    const ok = await fetch(`${worker.url}/v1/sessions`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.status).toBe(200);
  }, 60_000);
});
