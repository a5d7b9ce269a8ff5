import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("worker runtime", () => {
  // The file's first request loads (and vite transforms) the worker's whole module graph in
  // the pool: about 4.5 s on a loaded 2-core machine, over vitest's 5 s default.
  it("answers the health check without a token", async () => {
    const res = await exports.default.fetch("http://planport.test/v1/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  }, 60_000);
  it("runs SQL inside a session Durable Object", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName("x"));
    expect(await stub.ping()).toBe(42);
  });
  it("answers 2,500 requests in a row (the test harness no longer slows down per request)", async () => {
    // @cloudflare/vitest-pool-workers 0.15 wrapped the entrypoint's prototype in one more Proxy
    // per request: each call got slower and the 1,778th overflowed the stack, failing whichever
    // worker test came last. patches/ fixes it (applied by `npm ci`); this guards the patch.
    for (let i = 0; i < 2_500; i++) {
      const res = await exports.default.fetch("http://planport.test/v1/healthz");
      expect(res.status, `request ${i + 1}`).toBe(200);
      await res.body?.cancel();
    }
  }, 120_000);
});
