import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  Browser,
  BrowserContext,
  BrowserContextOptions,
  Locator,
  Page,
} from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { launchChromium } from "./chromium.ts";

/**
 * Watches a review page in Chromium (chromium.ts launches it) for what an attack would do:
 * open a dialog, throw, or talk to another origin.
 */

export { CHROMIUM_PATH, launchChromium } from "./chromium.ts";

/**
 * Where the tests' screenshots go: a temporary folder, never the repository (a test run leaves
 * the clone as it found it; the README's screenshots come from `npm run screenshots`).
 * PLANPORT_TEST_ARTIFACTS overrides it.
 */
export const ARTIFACTS_DIR =
  process.env.PLANPORT_TEST_ARTIFACTS ?? join(tmpdir(), "planport-test-artifacts");

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
 * errors; `origin` is the only origin the page may talk to. `options` are the context's (a
 * desktop viewport unless given: a phone's, a time zone, a locale).
 *
 * @example
 * const w = await watchedPage(browser, server.origin);
 * await w.page.goto(reviewUrl);
 * expect(w.dialogs).toEqual([]);
 */
export async function watchedPage(
  browser: Browser,
  origin: string,
  options: BrowserContextOptions = {},
): Promise<PageWatch> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, ...options });
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
 * Saves a full-page screenshot as `<ARTIFACTS_DIR>/<name>.png` and returns its path.
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

/** A planport worker under `wrangler dev` and Chromium, shared by the tests of one file. */
export interface ReviewRig {
  readonly worker: WorkerProcess;
  readonly browser: Browser;
  /** One call to the worker's API with the rig's token; a non-2xx answer throws. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/**
 * Starts the worker (offline planner, scripted planner allowed, `token` accepted) and Chromium
 * before the file's tests and stops both after them.
 *
 * @example
 * const rig = reviewRig("review-phone-token", "planport-review-phone-");
 * const w = await watchedPage(rig.browser, rig.worker.url);
 */
export function reviewRig(token: string, persistPrefix: string): ReviewRig {
  let worker: WorkerProcess | undefined;
  let browser: Browser | undefined;
  const persist = mkdtempSync(join(tmpdir(), persistPrefix));
  beforeAll(async () => {
    worker = await startWorkerProcess({
      persistDir: persist,
      vars: {
        PLANPORT_TOKENS: token,
        PLANPORT_PLANNER: "offline",
        PLANPORT_ALLOW_SCRIPTED: "true",
        PLANPORT_EXECUTION: "overlay",
      },
    });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    rmSync(persist, { recursive: true, force: true });
  });
  const rig: ReviewRig = {
    get worker() {
      if (!worker) throw new Error("the review rig's worker is not started yet");
      return worker;
    },
    get browser() {
      if (!browser) throw new Error("the review rig's browser is not started yet");
      return browser;
    },
    async api<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${rig.worker.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
  };
  return rig;
}
