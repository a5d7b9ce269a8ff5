import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { ScriptedTurn, Session } from "../../src/protocol/index.ts";
import { isolatedHome, startCli } from "../client/run-cli.ts";
import { XSS_PAYLOADS } from "../worker/review-fixtures.ts";
import {
  exitPlanMode,
  FEEDBACK,
  GREETING_PROMPT,
  GREETING_TITLE,
  greetingScript,
  PLAN_1,
  write,
} from "./revision-scenario.ts";
import {
  expectNothingRan,
  launchChromium,
  screenshot,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * Revision history and plan adherence on the review page, in Chromium against the real worker
 * under `wrangler dev` with the scripted planner: plan → keep planning with feedback →
 * revision 2 → compare 1..2 (with and without JavaScript) → approve → remote execution that
 * changes one file the plan did not name → the adherence line links into the diff. Its
 * screenshots go to the tests' temporary folder; the README's come from `npm run screenshots`.
 */

const TOKEN = "review-revisions-token";
const TEST_TIMEOUT_MS = 180_000;
const UI_TIMEOUT_MS = 30_000;
let worker: WorkerProcess;
let browser: Browser;
const persist = mkdtempSync(join(tmpdir(), "planport-review-revisions-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: {
      PLANPORT_TOKENS: TOKEN,
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

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${worker.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function phaseIs(page: Page, label: string): Promise<void> {
  await expect
    .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
    .toBe(label);
}

/** Starts a scripted session and opens its review page once the first plan is ready. */
async function planReady(script: ScriptedTurn[], prompt: string, title: string) {
  const session = await api<Session>("POST", "/v1/sessions", {
    prompt,
    title,
    planner: "scripted",
    script,
  });
  const w = await watchedPage(browser, worker.url);
  const { page } = w;
  await page.goto(session.review_url);
  await waitForReviewScript(page);
  await phaseIs(page, "plan ready");
  return { session, w, page };
}

describe("revision history and plan adherence (wrangler dev, Chromium)", () => {
  it(
    "keep planning with feedback → revision 2 → diff 1..2 with the feedback beside it → approve → adherence",
    async () => {
      const script = greetingScript();
      const { session, w, page } = await planReady(script, GREETING_PROMPT, GREETING_TITLE);
      // One revision: no history yet; the next steps say the plan waits and no terminal polls.
      expect(await page.locator("[data-region=history]").isHidden()).toBe(true);
      expect(await page.locator(".next-steps").textContent()).toContain(
        `No terminal is polling: start planport attach ${session.id} to enable send-to-terminal.`,
      );

      await page.locator("#feedback").fill(FEEDBACK);
      await page.getByRole("button", { name: "Keep planning" }).click();
      await expect
        .poll(() => page.locator(".plan-meta").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("revision 2");
      await phaseIs(page, "plan ready");

      // The history appears by itself (the live refresh swaps its region in).
      const history = page.locator("[data-region=history]");
      await expect.poll(() => history.isVisible(), { timeout: UI_TIMEOUT_MS }).toBe(true);
      const newest = history.locator(".revision").first();
      expect(await newest.locator(".revision-head a").first().textContent()).toBe("Revision 2");
      expect(await newest.locator(".asked-feedback").textContent()).toBe(FEEDBACK);
      expect(await history.locator("#revision-1 .chip").textContent()).toBe("keep planning");

      // The link "changes from revision 1" opens the comparison 1..2.
      await newest.getByRole("link", { name: "changes from revision 1" }).click();
      await page.waitForURL(/diff=1\.\.2/);
      await waitForReviewScript(page);
      const compare = page.locator(".revision-compare");
      expect(await compare.locator("h3").first().textContent()).toBe(
        "Changes from revision 1 to revision 2",
      );
      expect(await compare.locator(".revision-diff-summary").textContent()).toBe(
        "4 lines added, 2 removed.",
      );
      expect(await compare.locator(".rev-added .text").allTextContents()).toEqual([
        "- `src/farewell.ts` — export the farewell",
        '1. Add `src/greeting.ts` exporting "hello there".',
        '2. Add `src/farewell.ts` exporting "goodbye".',
        "3. Run the tests.",
      ]);
      expect(await compare.locator(".rev-removed .text").allTextContents()).toEqual([
        '1. Add `src/greeting.ts` exporting "hello".',
        "2. Run the tests.",
      ]);
      // Word level: within the changed step only the new word is marked.
      expect((await compare.locator(".rev-added ins").allTextContents()).join("|")).toContain(
        "there",
      );
      expect(await compare.locator(".revision-asked .asked-feedback").textContent()).toBe(FEEDBACK);
      await compare.scrollIntoViewIfNeeded();
      await screenshot(page, "review-revision-diff");
      expectNothingRan(w, { consoleErrors: false });

      // Without JavaScript: the picker's GET form compares, and the links work.
      const noScript = await browser.newContext({
        javaScriptEnabled: false,
        viewport: { width: 1440, height: 1000 },
      });
      try {
        const bare = await noScript.newPage();
        await bare.goto(session.review_url);
        await bare.locator("#compare-from").selectOption("1");
        await bare.locator("#compare-to").selectOption("2");
        await bare.getByRole("button", { name: "Show changes" }).click();
        await bare.waitForURL(/from=1&to=2/);
        expect(new URL(bare.url()).searchParams.get("key")).toBe(
          new URL(session.review_url).searchParams.get("key"),
        );
        expect(await bare.locator(".revision-diff-summary").textContent()).toBe(
          "4 lines added, 2 removed.",
        );
        expect(await bare.locator(".revision-asked .asked-feedback").textContent()).toBe(FEEDBACK);
        await bare.getByRole("link", { name: "Revision 1", exact: true }).click();
        await bare.waitForURL(/rev=1/);
        expect(await bare.locator(".revision-text").textContent()).toBe(PLAN_1);
        // A bad revision is a sentence, not an error page.
        await bare.goto(`${session.review_url}&diff=1..9`);
        expect(await bare.locator("[data-region=history] .warning").textContent()).toBe(
          "There is no revision 9 (the plan has revisions 1 to 2).",
        );
      } finally {
        await noScript.close();
      }

      // Approve revision 2; the remote execution changes one file the plan did not name.
      await page.goto(session.review_url);
      await waitForReviewScript(page);
      await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await phaseIs(page, "done");
      const adherence = page.locator(".adherence");
      await expect
        .poll(() => adherence.textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("Plan adherence: 2 files changed as planned, 1 not in the plan: src/extra.ts.");
      await adherence.getByRole("link", { name: "src/extra.ts" }).click();
      await page.waitForURL(/#change-1$/);
      expect(await page.locator("#change-1 h4 code").textContent()).toBe("src/extra.ts");
      expect(await page.locator("#change-1 .chip").textContent()).toBe("not in the plan");
      expect(await page.locator("#change-2 .chip").textContent()).toBe("in the plan");
      expect(await page.locator(".diff .diff-add").allTextContents()).toContain(
        '+export const farewell = "goodbye";',
      );
      await page.locator(".panel-outcome").scrollIntoViewIfNeeded();
      await screenshot(page, "review-adherence");
      expectNothingRan(w, { consoleErrors: false });
      await w.context.close();

      // planport status says the same, from GET …/plan and …/changes, read by the same code.
      const home = isolatedHome();
      const args = ["status", session.id, "--server", worker.url, "--token", TOKEN];
      const human = await startCli(args, { env: home.env }).done;
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(
        /^adherence\s{2,}2 files changed as planned, 1 not in the plan: src\/extra\.ts$/m,
      );
      const json = await startCli([...args, "--json"], { env: home.env }).done;
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        id: session.id,
        plan_adherence: {
          planned: ["src/farewell.ts", "src/greeting.ts"],
          unplanned: ["src/extra.ts"],
          untouched: [],
          sentence: "2 files changed as planned, 1 not in the plan: src/extra.ts",
        },
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "hostile revisions, feedback and changed paths stay inert in the history, the diff and the adherence",
    async () => {
      const hostile = XSS_PAYLOADS.join("\n");
      const badPath = `src/${XSS_PAYLOADS[6]!.replace(/[/\\]/g, "")}.ts`;
      const script: ScriptedTurn[] = [
        write("toolu_plan_1", "$PLAN_PATH", `# Plan\n${hostile}\n`),
        exitPlanMode("toolu_exit_1"),
        write(
          "toolu_plan_2",
          "$PLAN_PATH",
          `# Plan\n${hostile}\n${XSS_PAYLOADS[2]} and \`src/ok.ts\`\n`,
        ),
        exitPlanMode("toolu_exit_2"),
        write("toolu_ok", "src/ok.ts", `${XSS_PAYLOADS[0]}\n`),
        write("toolu_bad", badPath, `${XSS_PAYLOADS[1]}\n`),
        { content: [{ type: "text", text: XSS_PAYLOADS[3]! }] },
      ];
      const { session, w, page } = await planReady(script, hostile, XSS_PAYLOADS[1]!);
      await page.locator("#feedback").fill(hostile);
      await page.getByRole("button", { name: "Keep planning" }).click();
      await expect
        .poll(() => page.locator(".plan-meta").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("revision 2");
      await page.goto(`${session.review_url}&diff=1..2`);
      await waitForReviewScript(page);
      expect(await page.locator(".revision-asked .asked-feedback").textContent()).toBe(hostile);
      await page.goto(`${session.review_url}&rev=1`);
      await waitForReviewScript(page);
      expect(await page.locator(".revision-text").textContent()).toBe(`# Plan\n${hostile}\n`);
      await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await phaseIs(page, "done");
      await expect
        .poll(() => page.locator(".adherence").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe(`Plan adherence: 1 file changed as planned, 1 not in the plan: ${badPath}.`);
      expect(await page.locator(".diff .diff-add").allTextContents()).toContain(
        `+${XSS_PAYLOADS[0]}`,
      );
      expectNothingRan(w);
      await w.context.close();
    },
    TEST_TIMEOUT_MS,
  );
});
