import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { RATE_LIMITS, type RateLimitName } from "../../src/api/rate-limit.ts";
import type { Session } from "../../src/protocol/index.ts";
import { ApiClient } from "../support/api-client.ts";
import { countOf, testLimit, untilLimited, windowsTouched } from "../support/rate-limits.ts";
import { tarGz } from "../support/tarballs.ts";
import { ALICE, errorCode } from "../support/worker/sessions.ts";

/**
 * Rate limits (issue 10, finding 10; issue 22, findings 1 and 6) and the public URL of links
 * (issue 10, finding 11), with the real Workers rate-limiting bindings of wrangler.toml, which
 * the test runtime provides as `wrangler dev` does, at the test limits of
 * test/support/rate-limits.ts (vitest.config.ts). The suite's other tests run with
 * PLANPORT_RATE_LIMITS=off; these requests turn the limits on, each test with tokens and
 * addresses of its own so their counters start at zero. Only the deployment's failure ceiling
 * is shared by the whole file: the test that reaches it comes last.
 *
 * Each burst stops at its first 429, and what got through is bounded by the windows the burst
 * touched, so neither the machine's speed nor a window boundary decides a verdict.
 */

const app = createApp();
function limitedApi(tokens: string, address = "203.0.113.7") {
  return new ApiClient(async (request) => {
    const withAddress = new Request(request);
    withAddress.headers.set("cf-connecting-ip", address);
    return await app.fetch(withAddress, {
      ...env,
      PLANPORT_TOKENS: tokens,
      PLANPORT_RATE_LIMITS: "on",
    });
  });
}

const limitOf = (name: RateLimitName) => testLimit(RATE_LIMITS[name].binding);
const periodOf = (name: RateLimitName) => RATE_LIMITS[name].periodS;

/** The most a limiter lets through in a burst of `elapsedMs`, wherever its windows fall. */
const atMost = (name: RateLimitName, elapsedMs: number) =>
  limitOf(name) * windowsTouched(elapsedMs, periodOf(name));

async function expectLimited(res: Response | null, retryAfterS: number): Promise<void> {
  expect(res?.status).toBe(429);
  expect(res?.headers.get("retry-after")).toBe(String(retryAfterS));
  expect(res?.headers.get("content-type")).toContain("application/json");
  expect(await errorCode(res as Response)).toBe("rate_limited");
}

function keyOf(url: string): string {
  return new URL(url).searchParams.get("key") ?? "";
}

/** A review key of the right shape that is no session's. */
const WRONG_KEY = "wrong-key-0123456789abcdefghijklmnopqrstuvwx";

describe("rate limits", () => {
  it("the bindings wrangler.toml declares exist in the runtime, with the periods the API tells callers to wait", () => {
    const declared = inject("wranglerRateLimits");
    expect(declared.map((b) => b.name).sort()).toEqual(
      Object.values(RATE_LIMITS)
        .map((l) => l.binding)
        .sort(),
    );
    for (const limit of Object.values(RATE_LIMITS)) {
      expect(typeof env[limit.binding]?.limit, limit.binding).toBe("function");
      expect(declared.find((b) => b.name === limit.binding)?.simple.period).toBe(limit.periodS);
    }
  });

  it("session creation is limited per owner; another owner is not affected", async () => {
    const api = limitedApi("rl-create-a,rl-create-b");
    const create = (token: string) =>
      api.call("POST", "/v1/sessions", { token }, { json: { prompt: "plan it" } });
    const burst = await untilLimited(20 * limitOf("creates"), () => create("rl-create-a"));
    await expectLimited(burst.limited, 60);
    const created = countOf(burst.statuses, 201);
    expect(created).toBeGreaterThanOrEqual(limitOf("creates"));
    expect(created).toBeLessThanOrEqual(atMost("creates", burst.elapsedMs));
    expect(created + 1, burst.statuses.join(",")).toBe(burst.statuses.length);
    expect((await create("rl-create-b")).status).toBe(201);
  });

  it("snapshot uploads are limited per owner", async () => {
    const api = limitedApi("rl-upload");
    const body = await tarGz([{ name: "a.txt", body: "a\n" }]);
    const burst = await untilLimited(20 * limitOf("uploads"), () =>
      api.call(
        "POST",
        "/v1/snapshots",
        { token: "rl-upload" },
        { body, headers: { "content-type": "application/gzip" } },
      ),
    );
    await expectLimited(burst.limited, 60);
    const uploaded = countOf(burst.statuses, 201);
    expect(uploaded).toBeGreaterThanOrEqual(limitOf("uploads"));
    expect(uploaded).toBeLessThanOrEqual(atMost("uploads", burst.elapsedMs));
  });

  it("every authenticated route counts per owner", async () => {
    const api = limitedApi("rl-requests");
    const id = "0".repeat(64);
    const burst = await untilLimited(20 * limitOf("requests"), () =>
      api.call("HEAD", `/v1/snapshots/${id}`, { token: "rl-requests" }),
    );
    expect(burst.limited?.status).toBe(429);
    expect(burst.limited?.headers.get("retry-after")).toBe("10");
    const answered = countOf(burst.statuses, 404);
    expect(answered).toBeGreaterThanOrEqual(limitOf("requests"));
    expect(answered).toBeLessThanOrEqual(atMost("requests", burst.elapsedMs));
  });

  it("failed authentication is limited per client address, and never locks out a valid token", async () => {
    const api = limitedApi("rl-auth-good");
    const list = (token: string) => api.call("GET", "/v1/sessions", { token });
    const burst = await untilLimited(20 * limitOf("authFailures"), () => list("wrong-token"));
    await expectLimited(burst.limited, 60);
    expect(countOf(burst.statuses, 401)).toBeLessThanOrEqual(
      atMost("authFailures", burst.elapsedMs),
    );
    expect(countOf(burst.statuses, 401) + 1).toBe(burst.statuses.length);
    // The same address, with the right token: counted per owner, never against failures.
    for (let i = 0; i < 3; i++) expect((await list("rl-auth-good")).status).toBe(200);
    // Another address still gets a plain 401.
    const other = limitedApi("rl-auth-good", "198.51.100.9");
    expect((await other.call("GET", "/v1/sessions", { token: "wrong" })).status).toBe(401);
  });

  it("a flood of wrong review keys never spends the budget of the session's real keys (issue 22, finding 1)", async () => {
    const owner = limitedApi("rl-review-owner", "192.0.2.10");
    const session = (await (
      await owner.call(
        "POST",
        "/v1/sessions",
        { token: "rl-review-owner" },
        { json: { prompt: "plan it" } },
      )
    ).json()) as Session;
    const decisionKey = keyOf(session.review_url);
    const viewKey = keyOf(session.share_url ?? "");
    expect(viewKey).not.toBe("");
    // The real keys read from the flooder's own address: a failure is never theirs to pay.
    const flooder = limitedApi("rl-review-owner", "192.0.2.44");
    const reader = flooder;
    const read = (reviewKey: string) =>
      reader.call("GET", `/v1/sessions/${session.id}`, { reviewKey });
    // Three times the session's whole request budget in wrong keys; the real keys read between.
    const flood: number[] = [];
    const during: number[] = [];
    for (let i = 0; i < 3 * limitOf("requests"); i++) {
      const res = await flooder.call("GET", `/v1/sessions/${session.id}`, { reviewKey: WRONG_KEY });
      flood.push(res.status);
      await res.body?.cancel();
      if (i % 10 === 9) {
        for (const key of [decisionKey, viewKey]) {
          const ok = await read(key);
          during.push(ok.status);
          await ok.body?.cancel();
        }
      }
    }
    // The wrong keys were refused as before: 404, then 429 once their caller ran out.
    expect(new Set(flood)).toEqual(new Set([404, 429]));
    expect(
      during.every((s) => s === 200),
      during.join(","),
    ).toBe(true);
    for (const key of [decisionKey, viewKey]) {
      const res = await read(key);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(((await res.json()) as Session).id).toBe(session.id);
    }
    // The decision link can still act: archiving is a write only the decision key may make.
    const archived = await reader.call("POST", `/v1/sessions/${session.id}/archive`, {
      reviewKey: decisionKey,
    });
    expect(archived.status).toBe(200);
  });

  it("wrong keys on the review page count as failed authentications; the real link keeps working", async () => {
    const owner = limitedApi("rl-page-owner", "192.0.2.20");
    const session = (await (
      await owner.call(
        "POST",
        "/v1/sessions",
        { token: "rl-page-owner" },
        { json: { prompt: "plan it" } },
      )
    ).json()) as Session;
    const page = async (key: string, address: string) =>
      await app.fetch(
        new Request(`http://planport.test/review/${session.id}?key=${key}`, {
          headers: { "cf-connecting-ip": address },
        }),
        { ...env, PLANPORT_TOKENS: "rl-page-owner", PLANPORT_RATE_LIMITS: "on" },
      );
    const burst = await untilLimited(20 * limitOf("authFailures"), () =>
      page(WRONG_KEY, "192.0.2.66"),
    );
    expect(burst.limited?.status, burst.statuses.join(",")).toBe(429);
    expect(burst.limited?.headers.get("retry-after")).toBe("60");
    expect(burst.limited?.headers.get("content-type")).toContain("text/html");
    expect(burst.limited?.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(countOf(burst.statuses, 404)).toBeLessThanOrEqual(
      atMost("authFailures", burst.elapsedMs),
    );
    // The same address with the real keys: both pages answer.
    expect((await page(keyOf(session.review_url), "192.0.2.66")).status).toBe(200);
    expect((await page(keyOf(session.share_url ?? ""), "192.0.2.66")).status).toBe(200);
  });

  it("bad credentials with a different CF-Connecting-IP each are cut off by the deployment's ceiling (issue 22, finding 6)", async () => {
    // Named by its binding, as wrangler.toml names it: the ceiling is counted over 60 s.
    const ceiling = testLimit("RATE_LIMIT_AUTH_FAILURES_ALL");
    const burst = await untilLimited(20 * ceiling, (i) =>
      limitedApi("rl-ceiling-good", `10.22.${Math.floor(i / 250)}.${i % 250}`).call(
        "GET",
        "/v1/sessions",
        { token: "guessing" },
      ),
    );
    await expectLimited(burst.limited, 60);
    expect(countOf(burst.statuses, 401)).toBeLessThanOrEqual(
      ceiling * windowsTouched(burst.elapsedMs, 60),
    );
    // A valid token is never refused for others' failures, from a new address or an old one.
    const good = (address: string) =>
      limitedApi("rl-ceiling-good", address).call("GET", "/v1/sessions", {
        token: "rl-ceiling-good",
      });
    expect((await good("10.23.0.1")).status).toBe(200);
    expect((await good("10.22.0.0")).status).toBe(200);
  });

  it("PLANPORT_RATE_LIMITS=off turns them off", async () => {
    const api = new ApiClient(
      async (request) =>
        await app.fetch(request, {
          ...env,
          PLANPORT_TOKENS: ALICE.token,
          PLANPORT_RATE_LIMITS: "off",
        }),
    );
    // More than one address may fail in two windows: with the limits on, some would be 429.
    const tries = 2 * limitOf("authFailures") + 1;
    let refused = 0;
    for (let i = 0; i < tries; i++) {
      const res = await api.call("GET", "/v1/sessions", { token: "nope" });
      if (res.status === 401) refused++;
      await res.body?.cancel();
    }
    expect(refused).toBe(tries);
  });
});

describe("links", () => {
  it("review links use PLANPORT_PUBLIC_URL when set, never the request's Host", async () => {
    const at = (publicUrl: string | undefined) =>
      new ApiClient(
        async (request) => await app.fetch(request, { ...env, PLANPORT_PUBLIC_URL: publicUrl }),
        "http://forged.example",
      );
    const forged = await at(undefined).createSession(ALICE, { prompt: "plan it" });
    expect(forged.review_url.startsWith("http://forged.example/review/")).toBe(true);
    const fixed = at("https://planport.example.com/pp/");
    const session = await fixed.createSession(ALICE, { prompt: "plan it" });
    expect(session.review_url).toMatch(/^https:\/\/planport\.example\.com\/pp\/review\/ses_/);
    expect((await fixed.getSession(ALICE, session.id)).review_url).toBe(session.review_url);
    expect((await fixed.listSessions(ALICE, { limit: 1 })).data[0]?.review_url).toBe(
      session.review_url,
    );
    const broken = await at("javascript:alert(1)").call("GET", `/v1/sessions/${session.id}`, ALICE);
    expect(broken.status).toBe(500);
    expect(await errorCode(broken)).toBe("server_misconfigured");
  });
});
