import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Session } from "../../src/protocol/index.ts";
import { countOf, testLimit, untilLimited, windowsTouched } from "../support/rate-limits.ts";
import { writeTestWranglerConfig } from "../support/wrangler-config.ts";

/**
 * Rate limits under `wrangler dev` (issue 10, finding 10; issue 22, findings 1 and 6): the
 * worker runs from a config derived from wrangler.toml with the test limits
 * (test/support/rate-limits.ts), so each limit is reached in a few requests. A runaway script
 * is stopped with 429 and Retry-After; refused credentials are cut off per address and, when
 * the caller makes up a new address for each, by the deployment's ceiling; and no flood of
 * wrong credentials ever refuses a valid token or review key.
 *
 * Bursts are bounded by the windows they touched (windowsTouched) and sequential ones stop at
 * their first 429, so neither the machine's speed nor a window boundary decides a verdict.
 */

const TOKEN = "e2e-rate-limits";
const CEILING_TOKEN = "e2e-rate-limits-ceiling";
let worker: WorkerProcess;
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-rate-"));
const configDir = mkdtempSync(join(tmpdir(), "planport-e2e-rate-config-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    configPath: writeTestWranglerConfig(configDir),
    vars: { PLANPORT_TOKENS: `${TOKEN},${CEILING_TOKEN}`, PLANPORT_PLANNER: "offline" },
  });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
  rmSync(configDir, { recursive: true, force: true });
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

function call(path: string, headers: Record<string, string>, init: RequestInit = {}) {
  return fetch(`${worker.url}${path}`, { ...init, headers });
}

async function status(res: Response): Promise<number> {
  await res.body?.cancel();
  return res.status;
}

const WRONG_KEY = "wrong-key-0123456789abcdefghijklmnopqrstuvwx";

describe("rate limits under wrangler dev", () => {
  it("session creations at concurrency 4: what gets 201 is bounded by the windows touched, the rest is 429", async () => {
    const limit = testLimit("RATE_LIMIT_CREATES");
    const create = async () => {
      const res = await call(
        "/v1/sessions",
        { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        { method: "POST", body: JSON.stringify({ prompt: "Which database does this use?" }) },
      );
      const body = (await res.json()) as { error?: { code: string } };
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
    };
    const started = Date.now();
    const answers = await concurrently(4 * limit, 4, create);
    const created = answers.filter((a) => a.status === 201).length;
    expect(created).toBeGreaterThanOrEqual(limit);
    expect(created).toBeLessThanOrEqual(limit * windowsTouched(Date.now() - started, 60));
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused).toMatchObject({
        status: 429,
        retryAfter: "60",
        body: { error: { code: "rate_limited" } },
      });
    }
    // Going on one at a time ends in a 429 whatever the windows did.
    const more = await untilLimited(50 * limit, () =>
      call(
        "/v1/sessions",
        { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        { method: "POST", body: JSON.stringify({ prompt: "And the cache?" }) },
      ),
    );
    expect(more.limited?.headers.get("retry-after")).toBe("60");
    expect((await fetch(`${worker.url}/v1/healthz`)).status).toBe(200);
  }, 120_000);

  it("wrong tokens are cut off with 429 after the failed-authentication limit; the right token still works", async () => {
    const limit = testLimit("RATE_LIMIT_AUTH_FAILURES");
    const burst = await untilLimited(50 * limit, () =>
      call("/v1/sessions", { authorization: "Bearer guessing" }),
    );
    expect(burst.limited?.status, burst.statuses.join(",")).toBe(429);
    expect(burst.limited?.headers.get("retry-after")).toBe("60");
    expect(countOf(burst.statuses, 401)).toBeLessThanOrEqual(
      limit * windowsTouched(burst.elapsedMs, 60),
    );
    expect(await status(await call("/v1/sessions", { authorization: `Bearer ${TOKEN}` }))).toBe(
      200,
    );
  }, 120_000);

  it("a valid decision key and view key keep working (200) during and right after a flood of wrong keys (issue 22, finding 1)", async () => {
    const created = await call(
      "/v1/sessions",
      { authorization: `Bearer ${CEILING_TOKEN}`, "content-type": "application/json" },
      { method: "POST", body: JSON.stringify({ prompt: "Where are the sessions stored?" }) },
    );
    expect(created.status).toBe(201);
    const session = (await created.json()) as Session;
    const decisionKey = new URL(session.review_url).searchParams.get("key") ?? "";
    const viewKey = new URL(session.share_url ?? "").searchParams.get("key") ?? "";
    // One address of its own for the flood and the real keys alike (wrangler dev keeps it).
    const read = (key: string) =>
      call(`/v1/sessions/${session.id}`, {
        "x-review-key": key,
        "cf-connecting-ip": "198.51.100.5",
      });

    // Three times a whole window's request budget in wrong keys, ten at a time (five in
    // parallel), the real keys reading from the same address after each ten; they read less
    // than their own budget in all.
    const flood: number[] = [];
    const reads: number[] = [];
    const rounds = (3 * testLimit("RATE_LIMIT_REQUESTS")) / 10;
    for (let round = 0; round < rounds; round++) {
      flood.push(...(await concurrently(10, 5, async () => status(await read(WRONG_KEY)))));
      for (const key of [decisionKey, viewKey]) reads.push(await status(await read(key)));
    }
    // The wrong keys were refused as before (404), then cut off (429).
    expect(new Set(flood), flood.join(",")).toEqual(new Set([404, 429]));
    expect(reads, reads.join(",")).toEqual(reads.map(() => 200));

    // Right after: both keys read, the decision key still acts, the view key is refused only
    // for being a view key.
    for (const key of [decisionKey, viewKey]) expect(await status(await read(key))).toBe(200);
    const archive = (key: string) =>
      call(
        `/v1/sessions/${session.id}/archive`,
        { "x-review-key": key, "cf-connecting-ip": "198.51.100.5" },
        { method: "POST" },
      );
    expect(await status(await archive(viewKey))).toBe(403);
    expect(await status(await archive(decisionKey))).toBe(200);
  }, 120_000);

  it("wrong keys on the review page are failed authentications; the real page still opens", async () => {
    const created = await call(
      "/v1/sessions",
      { authorization: `Bearer ${CEILING_TOKEN}`, "content-type": "application/json" },
      { method: "POST", body: JSON.stringify({ prompt: "What does the CLI do?" }) },
    );
    const session = (await created.json()) as Session;
    const page = (key: string) =>
      call(`/review/${session.id}?key=${key}`, { "cf-connecting-ip": "198.51.100.77" });
    const burst = await untilLimited(50 * testLimit("RATE_LIMIT_AUTH_FAILURES"), () =>
      page(WRONG_KEY),
    );
    expect(burst.limited?.status, burst.statuses.join(",")).toBe(429);
    expect(burst.limited?.headers.get("content-type")).toContain("text/html");
    expect(new Set(burst.statuses.slice(0, -1))).toEqual(
      new Set(burst.statuses.length > 1 ? [404] : []),
    );
    expect(
      await status(await page(new URL(session.review_url).searchParams.get("key") ?? "")),
    ).toBe(200);
  }, 120_000);

  it("bad credentials with a different CF-Connecting-IP each are cut off with 429 (issue 22, finding 6)", async () => {
    const ceiling = testLimit("RATE_LIMIT_AUTH_FAILURES_ALL");
    const burst = await untilLimited(50 * ceiling, (i) =>
      call("/v1/sessions", {
        authorization: "Bearer guessing",
        "cf-connecting-ip": `10.9.${Math.floor(i / 250)}.${i % 250}`,
      }),
    );
    expect(burst.limited?.status, `${burst.statuses.length} tries`).toBe(429);
    expect(burst.limited?.headers.get("retry-after")).toBe("60");
    expect(countOf(burst.statuses, 401)).toBeLessThanOrEqual(
      ceiling * windowsTouched(burst.elapsedMs, 60),
    );
    // Whatever address it claims, a valid token is never refused for others' failures.
    for (const address of ["10.9.0.0", "10.10.0.1"]) {
      const res = await call("/v1/sessions", {
        authorization: `Bearer ${CEILING_TOKEN}`,
        "cf-connecting-ip": address,
      });
      expect(await status(res)).toBe(200);
    }
  }, 120_000);
});
