import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  REVIEW_KEY,
} from "../worker/review-fixtures.ts";
import { FakeSessionApi } from "./fake-session-api.ts";
import {
  expectNothingRan,
  launchChromium,
  type PageWatch,
  screenshot,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * ```mermaid blocks of a plan in Chromium: drawn as SVG inside a sandboxed frame served by the
 * worker (mermaid's bundle from the worker's static assets, as `npm ci` leaves them), the code
 * block kept when the diagram does not draw, and nothing of a hostile diagram running in the page.
 */

const TEST_TIMEOUT_MS = 60_000;
const UI_TIMEOUT_MS = 20_000;

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

async function openPlan(markdown: string): Promise<PageWatch & { api: FakeSessionApi }> {
  api = new FakeSessionApi({
    session: fixtureSession(),
    plan: fixturePlan(markdown),
    events: fixtureEvents(),
    key: REVIEW_KEY,
  });
  await api.start();
  const watch = await watchedPage(browser, api.origin);
  watches.push(watch);
  await watch.page.goto(api.reviewUrl);
  await waitForReviewScript(watch.page);
  return { ...watch, api };
}

const FLOWCHART = [
  "flowchart LR",
  '  n0["src/auth/oauth.ts"] --> n1["src/routes/login.ts (new)"]',
  "  n1 --> n2[Session store]",
].join("\n");

const planWith = (diagram: string) =>
  `# Plan\n\n## Diagram\n\n\`\`\`mermaid\n${diagram}\n\`\`\`\n\n## Steps\n\n1. Do it.\n`;

describe("mermaid diagrams on the review page (Chromium)", () => {
  it(
    "draws a flowchart as SVG inside a sandboxed frame and hides the code block",
    async () => {
      const w = await openPlan(planWith(FLOWCHART));
      const frame = w.page.locator("iframe.diagram-frame");
      await expect
        .poll(() => frame.getAttribute("class"), { timeout: UI_TIMEOUT_MS })
        .toContain("drawn");
      expect(await frame.getAttribute("sandbox")).toBe("allow-scripts");
      const svg = w.page.frameLocator("iframe.diagram-frame").locator("#diagram svg");
      await expect.poll(() => svg.count()).toBe(1);
      expect(await svg.textContent()).toContain("src/routes/login.ts (new)");
      expect(Number(await frame.getAttribute("height"))).toBeGreaterThan(24);
      expect(await w.page.locator("pre:has(code.language-mermaid)").isHidden()).toBe(true);
      // The page itself gained no SVG, style or script: the diagram lives in the frame only.
      expect(await w.page.locator("body svg").count()).toBe(0);
      await screenshot(w.page, "review-mermaid-diagram");
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "draws the diagram of a revision that arrives while the page is open",
    async () => {
      const w = await openPlan("# Plan\n\nNo diagram yet.\n");
      expect(await w.page.locator("iframe.diagram-frame").count()).toBe(0);
      w.api.plan = fixturePlan(planWith(FLOWCHART), { revision: 3 });
      w.api.append({
        type: "assistant",
        message: { role: "assistant", content: [{ type: "text", text: "Revised." }] },
      });
      await expect
        .poll(() => w.page.locator("iframe.diagram-frame.drawn").count(), {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe(1);
      expect(await w.page.locator("pre:has(code.language-mermaid)").isHidden()).toBe(true);
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "keeps the code block when the diagram does not parse",
    async () => {
      const w = await openPlan(planWith("flowchart LR\n  A -->> ((( B\n  this is not mermaid"));
      const code = w.page.locator("pre:has(code.language-mermaid)");
      // The frame reports failure and is removed; the code block is what the reader sees.
      await expect
        .poll(() => w.page.locator("pre[data-diagram]").getAttribute("data-diagram"), {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe("failed");
      await expect
        .poll(() => w.page.locator("iframe.diagram-frame").count(), { timeout: UI_TIMEOUT_MS })
        .toBe(0);
      expect(await code.isVisible()).toBe(true);
      expect(await code.textContent()).toContain("this is not mermaid");
      // A message that does not come from a diagram frame is not heard.
      await w.page.evaluate(() =>
        window.postMessage({ planport: "diagram", ok: true, height: 10 }, "*"),
      );
      await w.page.waitForTimeout(300);
      expect(await code.isVisible()).toBe(true);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a hostile diagram runs nothing in the page and cannot reach it",
    async () => {
      const hostile = [
        "flowchart LR",
        '  A["<img src=x onerror=alert(1)>"] --> B["<script>alert(2)</script>"]',
        "  B --> C[\"<a href='javascript:alert(3)'>x</a>\"]",
        '  click A "javascript:alert(4)"',
        "  click B call alert(5)",
        '  click C href "javascript:alert(6)"',
      ].join("\n");
      const w = await openPlan(planWith(hostile));
      const frame = w.page.locator("iframe.diagram-frame");
      await expect
        .poll(() => w.page.locator("pre[data-diagram]").getAttribute("data-diagram"), {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe("drawn");
      expect(await frame.count()).toBe(1);
      // Clicking every node of the drawn diagram opens nothing and navigates nowhere.
      const nodes = w.page.frameLocator("iframe.diagram-frame").locator("g.node");
      expect(await nodes.count()).toBe(3);
      for (let i = 0; i < 3; i++) await nodes.nth(i).click({ force: true });
      // Mermaid's strict mode sanitised the labels: no script, no handler, no javascript: link.
      const drawn = await w.page
        .frameLocator("iframe.diagram-frame")
        .locator("#diagram")
        .evaluate((d) => d.innerHTML);
      expect(drawn).not.toMatch(/<script|onerror|javascript:/i);
      expect(await w.page.evaluate(() => location.pathname)).toMatch(/^\/review\//);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );
});
