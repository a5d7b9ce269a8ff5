import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
} from "playwright-core";
import { expect } from "vitest";

/**
 * Launches Debian's Chromium for the review page tests (never a downloaded browser: this
 * machine and CI reach no browser CDN) and watches a page for what an attack would do: open a
 * dialog, throw, or talk to another origin.
 */

/** Debian's Chromium (`apt-get install -y chromium`); PLANPORT_CHROMIUM overrides it. */
export const CHROMIUM_PATH = process.env.PLANPORT_CHROMIUM ?? "/usr/bin/chromium";

/** Where screenshots go (git-ignored). */
export const ARTIFACTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Starts a headless Chromium. Playwright gives every launch a fresh temporary profile (its own
 * `--user-data-dir`), removed on close, so no state leaks between runs.
 *
 * @example
 * const browser = await launchChromium();
 * try { … } finally { await browser.close(); }
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}. Install Debian's package with \`apt-get install -y chromium\` (never \`npx playwright install\`), or set PLANPORT_CHROMIUM.`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** What a watched page did that a safe page never does. */
export interface PageWatch {
  page: Page;
  context: BrowserContext;
  /** Messages of every alert/confirm/prompt the page opened (each is dismissed at once). */
  dialogs: string[];
  /** URLs of requests to any origin other than the page's own. */
  foreignRequests: string[];
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** Console messages of level error (CSP violations show up here). */
  consoleErrors: string[];
}

/**
 * Opens a new context and page that record dialogs, foreign requests, page errors and console
 * errors; `origin` is the only origin the page may talk to.
 *
 * @example
 * const w = await watchedPage(browser, server.origin);
 * await w.page.goto(reviewUrl);
 * expect(w.dialogs).toEqual([]);
 */
export async function watchedPage(browser: Browser, origin: string): Promise<PageWatch> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const page = await context.newPage();
  const watch: PageWatch = {
    page,
    context,
    dialogs: [],
    foreignRequests: [],
    pageErrors: [],
    consoleErrors: [],
  };
  page.on("dialog", (dialog) => {
    watch.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  context.on("request", (request) => {
    const url = request.url();
    if (url.startsWith("data:")) return;
    if (new URL(url).origin !== origin) watch.foreignRequests.push(url);
  });
  page.on("pageerror", (error) => watch.pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") watch.consoleErrors.push(message.text());
  });
  return watch;
}

/**
 * Saves a full-page screenshot as `test/artifacts/<name>.png` and returns its path.
 *
 * @example
 * await screenshot(page, "review-plan-ready");
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Resolves once the page script has enabled the review controls. */
export async function waitForReviewScript(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById("announcer") !== null);
}

/** Selects the whole text of an element, as a reader dragging the mouse over it would. */
export async function selectText(target: Locator): Promise<void> {
  await target.evaluate((element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = document.getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  });
}

/**
 * Asserts the page did nothing an attack would: no dialog, no request to another origin, no
 * uncaught exception and (unless told otherwise) no console error, where CSP violations show.
 *
 * @example
 * expectNothingRan(watch);
 */
export function expectNothingRan(w: PageWatch, { consoleErrors = true } = {}): void {
  expect(w.dialogs).toEqual([]);
  expect(w.foreignRequests).toEqual([]);
  expect(w.pageErrors).toEqual([]);
  if (consoleErrors) expect(w.consoleErrors).toEqual([]);
}
