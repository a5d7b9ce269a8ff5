import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app.ts";
import { RATE_LIMITS } from "../../src/api/rate-limit.ts";
import { ApiClient } from "../support/api-client.ts";
import { tarGz } from "../support/tarballs.ts";
import { ALICE, errorCode } from "../support/worker/sessions.ts";

/**
 * Rate limits (issue 10, finding 10) and the public URL of links (finding 11), with the real Workers rate-limiting bindings from
 * wrangler.toml, which the test runtime provides as `wrangler dev` does. The suite's other
 * tests run with PLANPORT_RATE_LIMITS=off; these requests turn the limits on, each test with
 * tokens of its own so their counters start at zero.
 *
 * The runtime counts in fixed windows of the limiter's period, so a burst can straddle two
 * windows: a limit of L lets through between L and 2L of a burst, never more.
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

async function burst(n: number, call: () => Promise<Response>): Promise<Response[]> {
  const answers: Response[] = [];
  for (let i = 0; i < n; i++) answers.push(await call());
  return answers;
}

async function expectLimited(res: Response, retryAfterS: number): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe(String(retryAfterS));
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(await errorCode(res)).toBe("rate_limited");
}

const statuses = (answers: readonly Response[]) => answers.map((r) => r.status);
const count = (answers: readonly Response[], status: number) =>
  answers.filter((r) => r.status === status).length;

describe("rate limits", () => {
  it("the bindings wrangler.toml declares exist in the runtime", () => {
    for (const limit of Object.values(RATE_LIMITS)) {
      expect(typeof env[limit.binding]?.limit, limit.binding).toBe("function");
    }
  });

  it("session creation is limited per owner; another owner is not affected", async () => {
    const api = limitedApi("rl-create-a,rl-create-b");
    const create = (token: string) =>
      api.call("POST", "/v1/sessions", { token }, { json: { prompt: "plan it" } });
    const answers = await burst(70, () => create("rl-create-a"));
    expect(count(answers, 201)).toBeGreaterThanOrEqual(30);
    expect(count(answers, 201)).toBeLessThanOrEqual(60);
    expect(count(answers, 201) + count(answers, 429), statuses(answers).join(",")).toBe(70);
    await expectLimited(answers.find((r) => r.status === 429)!, 60);
    expect((await create("rl-create-b")).status).toBe(201);
  });

  it("snapshot uploads are limited per owner", async () => {
    const api = limitedApi("rl-upload");
    const body = await tarGz([{ name: "a.txt", body: "a\n" }]);
    const answers = await burst(130, () =>
      api.call(
        "POST",
        "/v1/snapshots",
        { token: "rl-upload" },
        { body, headers: { "content-type": "application/gzip" } },
      ),
    );
    expect(count(answers, 201)).toBeGreaterThanOrEqual(60);
    expect(count(answers, 201)).toBeLessThanOrEqual(120);
    await expectLimited(answers.find((r) => r.status === 429)!, 60);
  });

  it("every authenticated route counts per owner (generous: 1,000 in 10 s)", async () => {
    const api = limitedApi("rl-requests");
    const id = "0".repeat(64);
    const answers = await burst(2_100, () =>
      api.call("HEAD", `/v1/snapshots/${id}`, { token: "rl-requests" }),
    );
    expect(count(answers, 404)).toBeGreaterThanOrEqual(1_000);
    expect(count(answers, 404)).toBeLessThanOrEqual(2_000);
    const limited = answers.find((r) => r.status === 429)!;
    expect(limited.headers.get("retry-after")).toBe("10");
  });

  it("failed authentication is limited per client address, and never locks out a valid token", async () => {
    const api = limitedApi("rl-auth-good");
    const list = (token: string) => api.call("GET", "/v1/sessions", { token });
    const answers = await burst(70, () => list("wrong-token"));
    expect(count(answers, 401)).toBeGreaterThanOrEqual(30);
    expect(count(answers, 401)).toBeLessThanOrEqual(60);
    await expectLimited(answers.find((r) => r.status === 429)!, 60);
    expect((await list("rl-auth-good")).status).toBe(200);
    // Another address still gets a plain 401.
    const other = limitedApi("rl-auth-good", "198.51.100.9");
    expect((await other.call("GET", "/v1/sessions", { token: "wrong" })).status).toBe(401);
    // Wrong review keys count as failed tries too (they answer 404, like unknown sessions).
    const keys = limitedApi("rl-auth-good", "192.0.2.44");
    const sessionId = `ses_${"0".repeat(26)}`;
    const tries = await burst(70, () =>
      keys.call("GET", `/v1/sessions/${sessionId}`, { reviewKey: "guess" }),
    );
    expect(count(tries, 404)).toBeGreaterThanOrEqual(30);
    await expectLimited(tries.find((r) => r.status === 429)!, 60);
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
    const answers = await burst(80, () => api.call("GET", "/v1/sessions", { token: "nope" }));
    expect(count(answers, 401)).toBe(80);
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
