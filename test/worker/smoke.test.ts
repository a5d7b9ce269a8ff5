import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

describe("worker runtime", () => {
  it("answers the health check without a token", async () => {
    const res = await exports.default.fetch("http://planport.test/v1/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });
  it("runs SQL inside a session Durable Object", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName("x"));
    expect(await stub.ping()).toBe(42);
  });
});
