import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ApiError,
  createApi,
  isTransient,
  MAX_CHANGES_RESPONSE_BYTES,
  withRetry,
} from "../../../local-client/http/api.ts";
import { FAKE_SESSION_ID, FAKE_TOKEN, type FakeFeed, startFakeFeed } from "../fake-feed.ts";
import {
  errorAnswer,
  type HostileServer,
  hugeBody,
  startHostileServer,
  trickle,
} from "../hostile-server.ts";
import { isolatedHome, ndjson, runCli } from "../run-cli.ts";

/**
 * What the HTTP client reads and how long it waits (issue 10, findings 4, 8 and 10): answers are
 * capped in bytes, every call ends within its time limit body included, and a Retry-After is
 * honoured by the retries of idempotent calls.
 */

let feed: FakeFeed;
let hostile: HostileServer;
beforeEach(async () => {
  feed = await startFakeFeed();
  hostile = await startHostileServer(feed.url);
});
afterEach(async () => {
  await hostile.close();
  await feed.close();
});

const MIB = 1024 * 1024;
const api = () => createApi({ server: hostile.url, token: FAKE_TOKEN });

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

/** The process's peak resident memory so far (Linux), in bytes. */
function peakRssBytes(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
  return Number(kb) * 1024;
}

describe("answers are read up to a cap", () => {
  it("a 200 MB events answer stops at 32 MiB with response_too_large (not transient), and memory stays bounded", async () => {
    hostile.misbehave = (_req, res, path) => path.endsWith("/events") && hugeBody(res, 200 * MIB);
    const before = peakRssBytes();
    const err = await apiError(api().events(FAKE_SESSION_ID, {}));
    const grew = peakRssBytes() - before;
    expect(err.code).toBe("response_too_large");
    expect(err.message).toMatch(/more than 32 MiB.*stopped reading/);
    expect(isTransient(err)).toBe(false);
    // Buffering it whole took more than 400 MB (body + string); the cap holds it near 32 MiB.
    expect(grew).toBeLessThan(160 * MIB);
  });

  it("a declared Content-Length over the cap is refused before reading", async () => {
    hostile.misbehave = (_req, res) => hugeBody(res, 64 * MIB, true);
    const err = await apiError(api().getSession(FAKE_SESSION_ID));
    expect(err.code).toBe("response_too_large");
  });

  it("the changes diff may be larger than a JSON answer, up to its own cap", async () => {
    hostile.misbehave = (_req, res, path) => path.endsWith("/changes") && hugeBody(res, 40 * MIB);
    await expect(api().changes(FAKE_SESSION_ID)).resolves.toHaveLength(40 * MIB);
    hostile.misbehave = (_req, res, path) =>
      path.endsWith("/changes") && hugeBody(res, MAX_CHANGES_RESPONSE_BYTES + 1, true);
    expect((await apiError(api().changes(FAKE_SESSION_ID))).code).toBe("response_too_large");
  });

  it("an oversized error body is described by its status, and a 503 stays transient", async () => {
    hostile.misbehave = (_req, res) => {
      res.writeHead(503, { "content-type": "text/html" });
      res.end("x".repeat(2 * MIB));
      return true;
    };
    const err = await apiError(api().getSession(FAKE_SESSION_ID));
    expect(err).toMatchObject({ status: 503, code: "http_503" });
    expect(isTransient(err)).toBe(true);
  });

  it("the real CLI: attach against an oversized events answer exits 6 at once, naming the cause", {
    timeout: 30_000,
  }, async () => {
    const home = isolatedHome();
    hostile.misbehave = (_req, res, path) =>
      path.endsWith("/events") && hugeBody(res, 100 * MIB, true);
    const { code, stdout } = await runCli(
      ["attach", FAKE_SESSION_ID, "--server", hostile.url, "--token", FAKE_TOKEN, "--json"],
      { env: home.env },
    );
    expect(code).toBe(6);
    const last = ndjson(stdout).at(-1);
    expect(last).toMatchObject({ event: "error", reason: "network_or_unknown" });
    expect(String(last?.message)).toMatch(/response_too_large.*stopped reading/);
  });
});

describe("every call ends within its time limit", () => {
  it("a body that trickles after the headers is cut at the call's timeout: request_timeout, transient", async () => {
    // The trickle never ends: the call can only end because its timeout cut it.
    hostile.misbehave = (_req, res) => trickle(res);
    const err = await apiError(api().getSession(FAKE_SESSION_ID, { timeoutMs: 500 }));
    expect(err).toMatchObject({ status: 0, code: "request_timeout" });
    expect(err.message).toContain("within 500ms");
    expect(isTransient(err)).toBe(true);
  });

  it("a caller's signal still wins over the timeout (Ctrl-C is not a timeout)", async () => {
    hostile.misbehave = (_req, res) => trickle(res);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await api()
      .getSession(FAKE_SESSION_ID, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ApiError);
    expect(controller.signal.aborted).toBe(true);
  });
});

describe("withRetry honours Retry-After", () => {
  it("retries a 429 no sooner than its Retry-After, then succeeds", async () => {
    let limited = 1;
    hostile.misbehave = (_req, res) =>
      limited-- > 0 && errorAnswer(res, 429, "rate_limited", "slow down", { "retry-after": "1" });
    const session = await withRetry(() => api().getSession(FAKE_SESSION_ID));
    expect(session.id).toBe(FAKE_SESSION_ID);
    const [first, second] = hostile.requests;
    // p-retry's own first backoff is 500 ms; the server asked for 1 s. A lower bound only.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("carries Retry-After in the error as data, both forms; garbage is no value", async () => {
    const answers = ["7", new Date(Date.now() + 30_000).toUTCString(), "later"];
    hostile.misbehave = (_req, res) =>
      errorAnswer(res, 429, "rate_limited", "slow down", { "retry-after": answers.shift() ?? "" });
    const delta = await apiError(api().getSession(FAKE_SESSION_ID));
    const date = await apiError(api().getSession(FAKE_SESSION_ID));
    const garbage = await apiError(api().getSession(FAKE_SESSION_ID));
    expect(delta).toMatchObject({ status: 429, code: "rate_limited", retryAfterMs: 7_000 });
    expect(date.retryAfterMs).toBeGreaterThan(25_000);
    expect(date.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(garbage.retryAfterMs).toBeUndefined();
  });
});
