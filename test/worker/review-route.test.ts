import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { type ReviewLoader, type ReviewLoadResult, reviewRoutes } from "../../src/review/route.ts";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  hostilePlan,
  REVIEW_KEY,
  SESSION_ID,
} from "./review-fixtures.ts";
import { expectInert, parseElements } from "./review-inspect.ts";

/**
 * A test double of the session Durable Object's review loader: one session, one key. The real
 * loader (the DO's RPC) is wired by the worker entry and exercised end to end in test/browser.
 */
class FixtureReviewLoader implements ReviewLoader {
  calls = 0;
  constructor(private readonly answer?: ReviewLoadResult) {}
  async loadReview(sessionId: string, key: string): Promise<ReviewLoadResult> {
    this.calls += 1;
    if (this.answer) return this.answer;
    if (sessionId !== SESSION_ID || key !== REVIEW_KEY) {
      return {
        ok: false,
        error: {
          status: 404,
          code: "not_found",
          message: "No session with this id is visible to you.",
        },
      };
    }
    return {
      ok: true,
      value: {
        session: fixtureSession(),
        plan: fixturePlan(hostilePlan()),
        events: fixtureEvents(),
      },
    };
  }
}

function appWith(loader: ReviewLoader): Hono {
  const app = new Hono();
  app.route(
    "/review",
    reviewRoutes(() => loader),
  );
  return app;
}

const url = (id = SESSION_ID, key = REVIEW_KEY) =>
  `http://planport.test/review/${id}?key=${encodeURIComponent(key)}`;

function cspNonce(res: Response): string {
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  const match = /script-src 'nonce-([^']+)'/.exec(csp);
  if (!match) throw new Error(`no script nonce in CSP: ${csp}`);
  return match[1]!;
}

describe("GET /review/:id", () => {
  it("serves the page with a strict CSP whose nonce is the page script's", async () => {
    const res = await appWith(new FixtureReviewLoader()).request(url());
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("Content-Security-Policy") ?? "";
    const nonce = cspNonce(res);
    for (const directive of [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "require-trusted-types-for 'script'",
    ]) {
      expect(csp.split("; ")).toContain(directive);
    }
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    await expectInert(await res.text(), nonce);
  });

  it("sends the hardening headers: nosniff, no framing, no referrer, no caching", async () => {
    const res = await appWith(new FixtureReviewLoader()).request(url());
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it("uses a fresh nonce for every response", async () => {
    const app = appWith(new FixtureReviewLoader());
    const nonces = new Set<string>();
    for (let i = 0; i < 5; i++) nonces.add(cspNonce(await app.request(url())));
    expect(nonces.size).toBe(5);
    for (const n of nonces) expect(n).toMatch(/^[A-Za-z0-9+/]{24}$/);
  });

  it("part=regions answers only the swappable regions, with no script or style to run", async () => {
    const res = await appWith(new FixtureReviewLoader()).request(`${url()}&part=regions`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const elements = await parseElements(await res.text());
    expect(elements.some((e) => e.tag === "script" || e.tag === "style")).toBe(false);
    const regions = elements.map((e) => e.attrs.get("data-region")).filter(Boolean);
    expect(regions).toEqual([
      "status",
      "outline",
      "outcome",
      "plan",
      "history",
      "group",
      "question",
      "decision",
      "comments",
      "suggestions",
      "message",
      "stop",
      "transcript",
    ]);
    const body = elements.find((e) => e.tag === "body");
    expect(body?.attrs.get("data-cursor")).toMatch(/^evt_\d{16}$/);
  });

  it("a wrong key and an unknown session get the same plain 404 page", async () => {
    const app = appWith(new FixtureReviewLoader());
    const wrongKey = await app.request(url(SESSION_ID, `${REVIEW_KEY.slice(0, -1)}b`));
    const unknown = await app.request(url("ses_01jv7m2k8q1111111111111111"));
    expect(wrongKey.status).toBe(404);
    expect(unknown.status).toBe(404);
    const [a, b] = [await wrongKey.text(), await unknown.text()];
    expect(a).toBe(b);
    expect(a).toContain("Review link not found");
    expect(a).not.toContain(SESSION_ID);
    const elements = await parseElements(a);
    expect(elements.some((e) => e.tag === "script" || e.tag === "style")).toBe(false);
    expect(wrongKey.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(wrongKey.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(wrongKey.headers.get("X-Frame-Options")).toBe("DENY");
  });

  it("a missing or malformed key or id is a 404 without asking the session", async () => {
    const loader = new FixtureReviewLoader();
    const app = appWith(loader);
    for (const target of [
      `http://planport.test/review/${SESSION_ID}`,
      url(SESSION_ID, "short"),
      url(SESSION_ID, "has spaces and <tags> in it!!"),
      url("not-a-session"),
      url("ses_UPPERCASE00000000000000000"),
    ]) {
      const res = await app.request(target);
      expect(res.status, target).toBe(404);
      expect(await res.text()).toContain("Review link not found");
    }
    expect(loader.calls).toBe(0);
  });

  it("a failure other than not-found is shown with its status, never as a 200", async () => {
    const app = appWith(
      new FixtureReviewLoader({
        ok: false,
        error: {
          status: 429,
          code: "rate_limited",
          message: "Too many requests <b>now</b>; wait a minute.",
        },
      }),
    );
    const res = await app.request(url());
    expect(res.status).toBe(429);
    const text = await res.text();
    expect(text).toContain("Too many requests &lt;b&gt;now&lt;/b&gt;; wait a minute.");
  });
});
