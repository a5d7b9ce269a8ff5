import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PlanFile, Session } from "../../src/protocol/index.ts";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  hostilePlan,
  REVIEW_KEY,
  XSS_PAYLOADS,
} from "../worker/review-fixtures.ts";
import { FakeSessionApi } from "./fake-session-api.ts";
import {
  expectNothingRan,
  launchChromium,
  type PageWatch,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * The review page of a session in a best-of-N group, in Chromium: the group panel links each
 * sibling's own review page, and the side-by-side comparison renders every plan — hostile
 * titles and plans included — without running anything, with or without JavaScript.
 */

const TEST_TIMEOUT_MS = 60_000;

let browser: Browser;
let api: FakeSessionApi | null = null;
const watches: PageWatch[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const w of watches.splice(0)) await w.context.close();
  await api?.stop();
  api = null;
});

/** Review links as the real loader gives them: relative, each with its session's own key. */
const reviewLink = (id: string, key: string) => `/review/${id}?key=${encodeURIComponent(key)}`;

function sibling(n: number, overrides: Partial<Session> = {}) {
  const id = `ses_01jv7m2k8q00000000000000s${n}`;
  const key = `k3y_sibling${n}_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`;
  const plan: PlanFile = fixturePlan(`# Plan of attempt ${n}\n\n${XSS_PAYLOADS.join("\n\n")}\n`);
  return {
    key,
    plan,
    session: fixtureSession({
      id,
      title: `${XSS_PAYLOADS[n]} attempt ${n}`,
      review_url: reviewLink(id, key),
      ...overrides,
    }),
  };
}

async function openGroup(): Promise<PageWatch & { api: FakeSessionApi }> {
  const main = fixtureSession({
    title: `${XSS_PAYLOADS[0]} attempt 1`,
    variant: "deep",
    usage: { input_tokens: 1200, output_tokens: 800, cost_usd: 0.0042 },
  });
  api = new FakeSessionApi({
    session: { ...main, review_url: reviewLink(main.id, REVIEW_KEY) },
    plan: fixturePlan(hostilePlan()),
    events: fixtureEvents(),
    key: REVIEW_KEY,
  });
  api.siblings = [
    sibling(2),
    sibling(3, { status: "running", phase: "running", pending: null, variant: "visual" }),
  ];
  await api.start();
  const watch = await watchedPage(browser, api.origin);
  watches.push(watch);
  await watch.page.goto(api.reviewUrl);
  await waitForReviewScript(watch.page);
  return { ...watch, api };
}

describe("a group's review page in Chromium", () => {
  it(
    "links each sibling's review page, and shows the variant, the cost and how many plans are ready",
    async () => {
      const w = await openGroup();
      const { page } = w;
      const panel = page.locator('[data-region="group"]');
      await expect.poll(() => panel.isVisible()).toBe(true);
      expect(await panel.textContent()).toContain("2 of 3 plans ready");
      const links = await panel
        .locator("a[data-sibling]")
        .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
      expect(links).toEqual(w.api.siblings.map((s) => s.session.review_url));
      expect(await page.locator(".status-line").textContent()).toMatch(
        /deep variant[\s\S]*\$0\.0042/,
      );
      // The titles are hostile: shown as text, never run.
      expect(await panel.textContent()).toContain(XSS_PAYLOADS[2]);
      expectNothingRan(w);
      // A sibling's link opens that session's own review page. (The test double serves only the
      // first session's JSON API, so the sibling page's own polls are not checked here.)
      await panel.locator("a[data-sibling]").first().click();
      await page.waitForURL(/s2\?key=/);
      await waitForReviewScript(page);
      expect(await page.locator("header h1").textContent()).toContain("attempt 2");
      expect(await page.locator('[data-region="group"] .group-self').textContent()).toContain(
        "attempt 2",
      );
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "compares the plans side by side: every hostile plan inert, no script, readable without JavaScript",
    async () => {
      const w = await openGroup();
      const { page } = w;
      await page.getByRole("link", { name: "Compare the plans side by side" }).click();
      await page.waitForURL(/compare=1/);
      const columns = page.locator(".compare-column");
      expect(await columns.count()).toBe(3);
      expect(await columns.nth(0).textContent()).toContain("this plan");
      expect(await columns.nth(2).textContent()).toContain("Plan of attempt 3");
      expect(await page.locator("script").count()).toBe(0);
      expect(await page.locator("img, svg, iframe, object, embed, base").count()).toBe(0);
      for (const href of await page
        .locator(".plan-body a")
        .evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""))) {
        expect(href).toMatch(/^(https?:|mailto:|#)/);
      }
      expectNothingRan(w);

      // The same page with JavaScript off: everything is there.
      const noScript = await browser.newContext({ javaScriptEnabled: false });
      try {
        const bare = await noScript.newPage();
        await bare.goto(page.url());
        expect(await bare.locator(".compare-column").count()).toBe(3);
        expect(await bare.locator(".compare-column h2 a").first().getAttribute("href")).toBe(
          w.api.session.review_url,
        );
      } finally {
        await noScript.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
