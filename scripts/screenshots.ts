import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { startWorkerProcess } from "../local-client/embedded/worker-process.ts";
import type { Session } from "../src/protocol/index.ts";
import { launchChromium } from "../test/browser/chromium.ts";
import {
  FEEDBACK,
  GREETING_PROMPT,
  GREETING_TITLE,
  greetingScript,
} from "../test/browser/revision-scenario.ts";

/**
 * Takes the README's screenshots of the review page (docs/screenshots/*.png): starts the
 * worker under `wrangler dev` with the scripted planner, plays the greeting-module session
 * (test/browser/revision-scenario.ts) and photographs its pages in Debian's Chromium. The only
 * thing that writes into docs/: tests never do (test/browser/test-outputs.test.ts).
 *
 * @example
 * npm run screenshots
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = join(ROOT, "docs", "screenshots");
const TOKEN = "screenshots-token";
/** How long one page state may take to appear on a busy machine. */
const WAIT_MS = 120_000;
/** The same picture on every machine: the page shows times in the reader's zone and locale. */
const CONTEXT = { viewport: { width: 1440, height: 1000 }, timezoneId: "UTC", locale: "en-US" };

async function main(): Promise<void> {
  const persist = mkdtempSync(join(tmpdir(), "planport-screenshots-"));
  const worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline", PLANPORT_ALLOW_SCRIPTED: "true" },
  });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    mkdirSync(OUT_DIR, { recursive: true });
    const api = apiOf(worker.url);
    const session = await api<Session>("POST", "/v1/sessions", {
      prompt: GREETING_PROMPT,
      title: GREETING_TITLE,
      planner: "scripted",
      script: greetingScript(),
    });
    const page = await (await browser.newContext(CONTEXT)).newPage();
    await page.goto(session.review_url);
    await phaseIs(page, "plan ready");

    // Keep planning with feedback, as the reviewer does in the test; then compare 1..2.
    await page.locator("#feedback").fill(FEEDBACK);
    await page.getByRole("button", { name: "Keep planning" }).click();
    await page.waitForFunction(
      () => document.querySelector(".plan-meta")?.textContent?.includes("revision 2"),
      undefined,
      { timeout: WAIT_MS },
    );
    await phaseIs(page, "plan ready");
    await page.goto(`${session.review_url}&diff=1..2#revision-compare`);
    await page.locator(".revision-compare").scrollIntoViewIfNeeded();
    await save(page, "review-revision-diff");

    // Approve; the remote execution changes one file the plan did not name.
    await page.goto(session.review_url);
    await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
    await phaseIs(page, "done");
    await page.waitForFunction(
      () => document.querySelector(".adherence")?.textContent?.startsWith("Plan adherence:"),
      undefined,
      { timeout: WAIT_MS },
    );
    await page.waitForSelector(".diff .diff-add", { timeout: WAIT_MS });
    await page.locator(".panel-outcome").scrollIntoViewIfNeeded();
    await save(page, "review-adherence");
  } finally {
    await browser?.close();
    await worker.stop();
    rmSync(persist, { recursive: true, force: true });
  }
}

function apiOf(origin: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
}

/** Waits until the page (its script refreshes it by itself) shows this phase. */
async function phaseIs(page: Page, label: string): Promise<void> {
  await page.waitForFunction(
    (want) => document.querySelector(".phase")?.textContent === want,
    label,
    { timeout: WAIT_MS },
  );
}

async function save(page: Page, name: string): Promise<void> {
  const path = join(OUT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`planport: wrote ${join("docs", "screenshots", `${name}.png`)}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
