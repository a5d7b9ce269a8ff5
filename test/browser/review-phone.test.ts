import type { BrowserContextOptions, Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/protocol/index.ts";
import {
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  REVIEW_KEY,
} from "../worker/review-fixtures.ts";
import { FakeSessionApi } from "./fake-session-api.ts";
import { exitPlanMode, write } from "./revision-scenario.ts";
import { expectNothingRan, reviewRig, waitForReviewScript, watchedPage } from "./support.ts";

/**
 * The review page on a phone (issue 26): on a 390 px wide screen the decision panel sits at
 * the end of a page thousands of pixels long, so its buttons ride in a bar fixed to the bottom
 * of the screen — the same buttons of the one decision form, placed there by CSS — with a link
 * to the rest of the panel. The desktop layout is unchanged. In Chromium against the real
 * worker under `wrangler dev` (a decision sent from the bar), and against the session API's
 * test double (a refusal shown where the reader can see it).
 */

const TOKEN = "review-phone-token";
const TEST_TIMEOUT_MS = 240_000;
/** Long enough for the page's 2-second polls and a planner step or two on a busy machine. */
const UI_TIMEOUT_MS = 60_000;
const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 2,
};
const PHONE_HEIGHT = 844;

/** A plan long enough to fill many screens of a phone, as real plans do. */
const LONG_PLAN = `# Move the session store to SQLite

${Array.from(
  { length: 12 },
  (_, i) => `## Step ${i + 1}: part ${i + 1} of the move

- Change \`src/store/part-${i + 1}.ts\` so that it reads and writes through the new table.
- Keep the old reader for one release, behind the \`legacy_store\` setting.
- Add a test in \`test/store/part-${i + 1}.test.ts\` for the round trip and the migration.
`,
).join("\n")}`;

const rig = reviewRig(TOKEN, "planport-review-phone-");

async function phaseIs(page: Page, label: string): Promise<void> {
  await expect
    .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
    .toBe(label);
}

/** Where an element is on the screen now: top and bottom edges in viewport pixels. */
async function onScreen(target: Locator): Promise<{ top: number; bottom: number }> {
  const box = await target.boundingBox();
  if (!box) throw new Error("the element is not displayed");
  return { top: box.y, bottom: box.y + box.height };
}

async function expectWithinScreen(target: Locator): Promise<void> {
  const { top, bottom } = await onScreen(target);
  expect(top).toBeGreaterThanOrEqual(0);
  expect(bottom).toBeLessThanOrEqual(PHONE_HEIGHT);
}

describe("the decision on a phone (390×844, Chromium)", () => {
  it(
    "the decision buttons are on the first screen and stay there while reading; approving from them works (wrangler dev)",
    async () => {
      const session = await rig.api<Session>("POST", "/v1/sessions", {
        prompt: "Move the session store to SQLite",
        title: "Session store on SQLite",
        planner: "scripted",
        script: [
          write("toolu_plan", "$PLAN_PATH", LONG_PLAN),
          exitPlanMode("toolu_exit"),
          { content: [{ type: "text", text: "Done." }] },
        ],
      });
      const w = await watchedPage(rig.browser, rig.worker.url, PHONE);
      const { page } = w;
      await page.goto(session.review_url);
      await waitForReviewScript(page);
      await phaseIs(page, "plan ready");
      // The page is many screens long: the decision panel itself is far down.
      const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(pageHeight).toBeGreaterThan(3 * PHONE_HEIGHT);
      expect((await onScreen(page.locator("#decision-heading"))).top).toBeGreaterThan(PHONE_HEIGHT);

      // One decision form, one approve button: the bar is that form's own buttons.
      expect(await page.locator("form#decision-form").count()).toBe(1);
      const approve = page.getByRole("button", { name: "Approve and run in the cloud" });
      expect(await approve.count()).toBe(1);
      await expect.poll(() => approve.isEnabled(), { timeout: UI_TIMEOUT_MS }).toBe(true);
      await expectWithinScreen(approve);
      // The rest of the decision (edit, keep planning with feedback) is one tap away.
      const more = page.getByRole("link", { name: "Edit or keep planning" });
      await expectWithinScreen(more);

      // Reading the middle of the plan: the buttons are still on screen, and nothing else is
      // pinned over the plan (the outline scrolls away in one column).
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
      await expectWithinScreen(approve);
      expect((await onScreen(page.locator(".outline"))).bottom).toBeLessThan(0);
      // At the end of the page the bar covers nothing: the last panel ends above it.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      const bar = await onScreen(page.locator("#decision-form .actions"));
      const lastPanel = await onScreen(page.locator(".panels > :not([hidden])").last());
      expect(lastPanel.bottom).toBeLessThanOrEqual(bar.top);

      // The link jumps to the whole panel.
      await page.evaluate(() => window.scrollTo(0, 0));
      await more.click();
      await expect
        .poll(async () => (await onScreen(page.locator("#decision-heading"))).top, {
          timeout: UI_TIMEOUT_MS,
        })
        .toBeLessThan(PHONE_HEIGHT / 2);

      // Approve from the bar: the worker records it, and the bar goes with the decided plan.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 3));
      await approve.click();
      await expect
        .poll(
          async () => (await rig.api<Session>("GET", `/v1/sessions/${session.id}`)).outcome?.kind,
          {
            timeout: UI_TIMEOUT_MS,
          },
        )
        .toBe("approved");
      await expect.poll(() => approve.count(), { timeout: UI_TIMEOUT_MS }).toBe(0);
      expectNothingRan(w);
      await w.context.close();

      // On a desktop the panel is as it was: the buttons in the side column, no bar, no link.
      const desk = await watchedPage(rig.browser, rig.worker.url);
      const other = await rig.api<Session>("POST", "/v1/sessions", {
        prompt: "Move the session store to SQLite",
        planner: "scripted",
        script: [write("toolu_plan", "$PLAN_PATH", LONG_PLAN), exitPlanMode("toolu_exit")],
      });
      await desk.page.goto(other.review_url);
      await waitForReviewScript(desk.page);
      await phaseIs(desk.page, "plan ready");
      expect(
        await desk.page
          .locator("#decision-form .actions")
          .evaluate((el) => getComputedStyle(el).position),
      ).toBe("static");
      expect(await desk.page.getByRole("link", { name: "Edit or keep planning" }).isVisible()).toBe(
        false,
      );
      const panel = (await desk.page.locator("[data-region=decision]").boundingBox())!;
      const button = (await desk.page
        .getByRole("button", { name: "Approve and run in the cloud" })
        .boundingBox())!;
      expect(button.y).toBeGreaterThan(panel.y);
      expect(button.y + button.height).toBeLessThan(panel.y + panel.height);
      expectNothingRan(desk);
      await desk.context.close();
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a decision refused after a tap in the bar is shown on screen, above the bar",
    async () => {
      const fake = new FakeSessionApi({
        session: fixtureSession(),
        plan: fixturePlan(),
        events: fixtureEvents(),
        key: REVIEW_KEY,
      });
      await fake.start();
      const w = await watchedPage(rig.browser, fake.origin, PHONE);
      try {
        await w.page.goto(fake.reviewUrl);
        await waitForReviewScript(w.page);
        fake.failNext = {
          status: 409,
          code: "already_decided",
          message: "This plan was already decided in another window.",
        };
        const approve = w.page.getByRole("button", { name: "Approve and run in the cloud" });
        await expectWithinScreen(approve);
        await approve.click();
        const error = w.page.locator("#decision-form [data-form-error]");
        await expect
          .poll(() => error.textContent(), { timeout: UI_TIMEOUT_MS })
          .toBe("This plan was already decided in another window. (already_decided)");
        await expect
          .poll(async () => (await onScreen(error)).top, { timeout: UI_TIMEOUT_MS })
          .toBeGreaterThanOrEqual(0);
        const bar = await onScreen(w.page.locator("#decision-form .actions"));
        expect((await onScreen(error)).bottom).toBeLessThanOrEqual(bar.top);
      } finally {
        await w.context.close();
        await fake.stop();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
