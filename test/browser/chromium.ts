import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/**
 * Debian's Chromium for the review page tests and `npm run screenshots` (never a downloaded
 * browser: this machine and CI reach no browser CDN). No vitest here: scripts use it too.
 */

/** Debian's Chromium (`apt-get install -y chromium`); PLANPORT_CHROMIUM overrides it. */
export const CHROMIUM_PATH = process.env.PLANPORT_CHROMIUM ?? "/usr/bin/chromium";

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
