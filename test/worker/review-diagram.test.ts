import { env, exports } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { MERMAID_SCRIPT_PATH } from "../../src/review/browser/diagram-message.ts";
import { reviewRoutes } from "../../src/review/route.ts";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  REVIEW_KEY,
  SESSION_ID,
} from "./review-fixtures.ts";
import { parseElements } from "./review-inspect.ts";

/**
 * The diagram frame (`GET /review/diagram`) through the real worker: a static page with its own
 * strict CSP that loads only mermaid's bundle from the worker's static assets, and the review
 * page's CSP allowing only same-origin frames.
 */

const FRAME_URL = "http://planport.test/review/diagram";

function directives(res: Response): string[] {
  return (res.headers.get("Content-Security-Policy") ?? "").split("; ");
}

describe("GET /review/diagram", () => {
  it("answers a static page, no key needed, with its own strict CSP", async () => {
    const res = await exports.default.fetch(new Request(FRAME_URL));
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    const csp = directives(res);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp.join("; "))?.[1] ?? "";
    expect(nonce).not.toBe("");
    for (const directive of [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      "style-src 'unsafe-inline'",
      "img-src data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'self'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp.join("; ")).not.toMatch(/unsafe-eval|connect-src|frame-src|\*|https?:/);
    expect(res.headers.get("X-Frame-Options")).toBe("SAMEORIGIN");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    // Two scripts, both with this response's nonce: mermaid's bundle (same origin) and the frame's.
    const scripts = (await parseElements(await res.text())).filter((e) => e.tag === "script");
    expect(scripts.map((s) => s.attrs.get("nonce"))).toEqual([nonce, nonce]);
    expect(scripts.map((s) => s.attrs.get("src"))).toEqual([MERMAID_SCRIPT_PATH, undefined]);
  });

  it("has a fresh nonce in every response", async () => {
    const a = await exports.default.fetch(new Request(FRAME_URL));
    const b = await exports.default.fetch(new Request(FRAME_URL));
    expect(a.headers.get("Content-Security-Policy")).not.toBe(
      b.headers.get("Content-Security-Policy"),
    );
  });

  it("mermaid's bundle is served by the worker's static assets", async () => {
    const assets = (env as unknown as { ASSETS: Fetcher }).ASSETS;
    const res = await assets.fetch(`http://planport.test${MERMAID_SCRIPT_PATH}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type") ?? "").toMatch(/javascript/);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff"); // public/_headers
    const text = await res.text();
    expect(text).toContain('globalThis["mermaid"]');
    expect(text).not.toContain("sourceMappingURL");
  });
});

describe("the review page's CSP", () => {
  it("allows frames from its own origin only (the diagram frames), and is still unframeable", async () => {
    const app = new Hono();
    app.route(
      "/review",
      reviewRoutes(() => ({
        loadReview: async () => ({
          ok: true as const,
          value: { session: fixtureSession(), plan: fixturePlan(), events: fixtureEvents() },
        }),
      })),
    );
    const res = await app.request(
      `http://planport.test/review/${SESSION_ID}?key=${encodeURIComponent(REVIEW_KEY)}`,
    );
    expect(res.status).toBe(200);
    const csp = directives(res);
    expect(csp.filter((d) => d.startsWith("frame-"))).toEqual([
      "frame-src 'self'",
      "frame-ancestors 'none'",
    ]);
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
  });
});
