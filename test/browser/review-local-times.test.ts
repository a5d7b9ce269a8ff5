import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type Session, TERMINAL_POLL_WINDOW_MS } from "../../src/protocol/index.ts";
import { FEEDBACK, GREETING_PROMPT, GREETING_TITLE, greetingScript } from "./revision-scenario.ts";
import { expectNothingRan, reviewRig, waitForReviewScript, watchedPage } from "./support.ts";

/**
 * Times on the review page in the reader's time zone (issue 26), in Chromium against the real
 * worker under `wrangler dev`: the server writes each time in UTC inside a `<time>` with the
 * exact moment, and the page script shows it in the browser's zone — on load, and in regions
 * the live refresh swaps in. Without JavaScript the reader keeps the UTC text.
 */

const TOKEN = "review-local-times-token";
const TEST_TIMEOUT_MS = 240_000;
/** Long enough for the page's 2-second polls and a planner step or two on a busy machine. */
const UI_TIMEOUT_MS = 60_000;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The zones a reader may be in, with the zone name en-US gives each. */
const ZONES = [
  { timezoneId: "America/New_York", zoneName: /E[DS]T$/ },
  { timezoneId: "Asia/Tokyo", zoneName: /GMT\+9$/ },
] as const;

const rig = reviewRig(TOKEN, "planport-review-local-times-");

/** ICU puts a narrow no-break space before AM/PM in some versions: compare words, not spaces. */
const spaces = (text: string | null) => (text ?? "").replace(/\s+/g, " ").trim();

/**
 * What a reader in `timeZone` with an en-US browser should read for `iso`, worked out here
 * with Node's Intl: with the date when the moment is not the reader's today (both forms are
 * accepted, in case the test runs across the reader's midnight).
 */
function localForms(iso: string, timeZone: string, precision: "minute" | "second"): string[] {
  const time: Intl.DateTimeFormatOptions = {
    timeZone,
    hour: "numeric",
    minute: "2-digit",
    ...(precision === "second" ? { second: "2-digit" } : {}),
    timeZoneName: "short",
  };
  const at = new Date(iso);
  return [
    new Intl.DateTimeFormat("en-US", time).format(at),
    new Intl.DateTimeFormat("en-US", { ...time, month: "short", day: "numeric" }).format(at),
  ].map(spaces);
}

/**
 * Polls the events feed with the bearer token (a terminal is polling now) and opens the page
 * while that counts: returns the moment the page names as the end of the polling window.
 */
async function openWhileTerminalPolls(page: Page, session: Session): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    await rig.api("GET", `/v1/sessions/${session.id}/events?limit=1`);
    const polled = (await rig.api<Session>("GET", `/v1/sessions/${session.id}`)).terminal_polled_at;
    await page.goto(session.review_url);
    const steps = spaces(await page.locator(".next-steps").textContent());
    // The page is rendered within the 15-second window unless the machine stalled: try again.
    if (steps.includes("A terminal is polling this session") || attempt === 3) {
      expect(steps).toContain("A terminal is polling this session");
      return new Date(Date.parse(String(polled)) + TERMINAL_POLL_WINDOW_MS).toISOString();
    }
  }
}

describe("times on the review page in the reader's time zone (wrangler dev, Chromium)", () => {
  it(
    "the next steps and the revision history show the browser's local time; datetime is the exact moment; no JavaScript keeps UTC",
    async () => {
      const session = await rig.api<Session>("POST", "/v1/sessions", {
        prompt: GREETING_PROMPT,
        title: GREETING_TITLE,
        planner: "scripted",
        script: greetingScript(),
      });
      await expect
        .poll(async () => (await rig.api<Session>("GET", `/v1/sessions/${session.id}`)).phase, {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe("plan_ready");

      for (const { timezoneId, zoneName } of ZONES) {
        const w = await watchedPage(rig.browser, rig.worker.url, { timezoneId, locale: "en-US" });
        const until = await openWhileTerminalPolls(w.page, session);
        await waitForReviewScript(w.page);
        // "… at the latest by <time> unless it polls again": one time, the exact window's end.
        const deadline = w.page.locator(".next-steps time");
        expect(await deadline.count()).toBe(1);
        expect(await deadline.getAttribute("datetime")).toBe(until);
        const shown = spaces(await deadline.textContent());
        expect(localForms(until, timezoneId, "second")).toContain(shown);
        expect(shown).toMatch(zoneName);
        expect(shown).not.toContain("UTC");
        // The UTC text the server wrote stays at hand, as the element's title.
        expect(await deadline.getAttribute("title")).toBe(`${until.slice(11, 19)} UTC`);
        expectNothingRan(w);
        await w.context.close();
      }

      // Keep planning in Tokyo: the revision history the live refresh swaps in is local too.
      const { timezoneId, zoneName } = ZONES[1];
      const w = await watchedPage(rig.browser, rig.worker.url, { timezoneId, locale: "en-US" });
      const { page } = w;
      const before = Date.now();
      await page.goto(session.review_url);
      await waitForReviewScript(page);
      await page.locator("#feedback").fill(FEEDBACK);
      await page.getByRole("button", { name: "Keep planning" }).click();
      const times = page.locator("[data-region=history] .revision-head time");
      await expect.poll(() => times.count(), { timeout: UI_TIMEOUT_MS }).toBe(2);
      for (const time of await times.all()) {
        const iso = String(await time.getAttribute("datetime"));
        expect(iso).toMatch(ISO_MS);
        expect(Date.parse(iso)).toBeLessThanOrEqual(Date.now());
        const shown = spaces(await time.textContent());
        expect(localForms(iso, timezoneId, "minute")).toContain(shown);
        expect(shown).toMatch(zoneName);
      }
      // The second revision was written after the reviewer opened the page.
      const newest = await times.first().getAttribute("datetime");
      expect(Date.parse(String(newest))).toBeGreaterThanOrEqual(before - 1_000);
      expectNothingRan(w);
      await w.context.close();

      // Without JavaScript the same page tells the times in UTC.
      const bare = await rig.browser.newContext({ javaScriptEnabled: false, timezoneId });
      try {
        const page = await bare.newPage();
        await page.goto(session.review_url);
        const history = page.locator("[data-region=history] .revision-head time");
        expect(await history.count()).toBe(2);
        for (const time of await history.all()) {
          const iso = String(await time.getAttribute("datetime"));
          expect(await time.textContent()).toMatch(
            new RegExp(`^(${iso.slice(0, 10)} )?${iso.slice(11, 16)} UTC$`),
          );
        }
      } finally {
        await bare.close();
      }
    },
    TEST_TIMEOUT_MS,
  );
});
