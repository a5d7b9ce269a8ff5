import { readFileSync } from "node:fs";
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { presetInstruction } from "../../local-client/handoff/presets.ts";
import type { Session } from "../../src/protocol/index.ts";
import { hiddenCharactersIn, readableText } from "../../src/protocol/index.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { type AgentRecord, agentStandIn, pathWith } from "../support/agent-stand-in.ts";
import {
  HIDDEN_TEXT_PLAN,
  HIDDEN_TEXT_PLAN_HIDDEN,
  HIDDEN_TEXT_PLAN_MARKS,
  HIDDEN_TEXT_PLAN_UNRENDERED,
  HIDDEN_TEXT_SESSION,
} from "../worker/review-fixtures.ts";
import {
  expectNothingRan,
  reviewRig,
  screenshot,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * What the reviewer approves is what the agent receives (issue 30): a plan that hides text
 * from a rendering — hidden characters, tag characters spelling words, link definitions, link
 * titles, a code block's info string, a cell outside the table, a diagram's comment — on the
 * review page in Chromium against the real worker under `wrangler dev`. Every piece is visible
 * on the page; then "Approve and send to terminal" hands the plan to a waiting
 * `planport attach --on-teleport claude` (a stand-in agent that records its argv), and what the
 * agent, the plan file and `--json` get is exactly the text the page's editor shows.
 */

const TOKEN = "review-hidden-text-token";
const TEST_TIMEOUT_MS = 240_000;
/** Long enough for the page's polls, a diagram and a teleport on a busy machine. */
const UI_TIMEOUT_MS = 60_000;

const rig = reviewRig(TOKEN, "planport-review-hidden-");

async function phaseIs(page: Page, label: string): Promise<void> {
  await expect
    .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
    .toBe(label);
}

/** The text a reader sees in an element: as laid out, what is not displayed left out. */
async function readerText(target: Locator): Promise<string> {
  // biome-ignore lint/performance/useDomNodeTextContent: what is displayed is the point.
  return target.innerText();
}

/** Every place the page as the browser holds it could keep a hidden character. */
async function hiddenOnPage(page: Page): Promise<string[]> {
  const texts = await page.evaluate(() => [
    document.documentElement.outerHTML,
    // biome-ignore lint/performance/useDomNodeTextContent: what is displayed is the point.
    document.body.innerText,
    document.title,
    ...Array.from(document.querySelectorAll("input, textarea")).map(
      (f) => (f as HTMLInputElement | HTMLTextAreaElement).value,
    ),
  ]);
  return texts.flatMap((t) => hiddenCharactersIn(t));
}

describe("a plan that hides text from a rendering, on the review page (wrangler dev, Chromium)", () => {
  it(
    "shows every hidden piece, and sending it to the terminal hands the agent exactly what the page shows",
    async () => {
      const session = await rig.api<Session>("POST", "/v1/sessions", HIDDEN_TEXT_SESSION);
      const w = await watchedPage(rig.browser, rig.worker.url);
      const { page } = w;
      await page.goto(session.review_url);
      await waitForReviewScript(page);
      await phaseIs(page, "plan ready");

      // Hidden characters: each a visible mark, counted in the warning; none left in the page.
      const body = page.locator("#plan-body");
      const shownText = (await readerText(body)).replace(/\s+/g, " ");
      for (const mark of HIDDEN_TEXT_PLAN_MARKS) expect(shownText).toContain(mark);
      expect(await page.locator("#plan-body .hidden-mark").count()).toBe(HIDDEN_TEXT_PLAN_HIDDEN);
      expect(await page.locator("#plan-body .hidden-mark").first().isVisible()).toBe(true);
      expect(await readerText(page.locator("[data-hidden-warning]"))).toContain(
        `This plan contains ${HIDDEN_TEXT_PLAN_HIDDEN} hidden characters, shown as ⟨U+200B⟩ (zero-width space), ⟨U+E0069⟩ (tag character, 6 of them) and ⟨U+2060⟩ (word joiner).`,
      );
      expect(await hiddenOnPage(page)).toEqual([]);
      // Ordinary text keeps its joiners and its flag.
      expect(await readerText(body)).toContain(
        "👩🏽\u200d💻, می\u200cخواهم, 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}.",
      );

      // Markdown a rendering hides: each piece is on the page, and visible.
      const visibleText = (await readerText(body)).replace(/[ \t]+/g, " ");
      for (const hidden of HIDDEN_TEXT_PLAN_UNRENDERED) expect(visibleText).toContain(hidden);
      for (const [selector, count] of [
        ['[data-hidden="definition"]', 2],
        ['[data-hidden="title"]', 1],
        ['[data-hidden="info"]', 2],
        ["td.outside-columns", 1],
      ] as const) {
        const found = body.locator(selector);
        expect(await found.count(), selector).toBe(count);
        for (const one of await found.all()) expect(await one.isVisible(), selector).toBe(true);
      }
      // The diagram replaces its code block; the comment it does not draw stays in view.
      await expect
        .poll(() => page.locator("iframe.diagram-frame.drawn").count(), {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe(1);
      expect(await page.locator("pre:has(code.language-mermaid)").isHidden()).toBe(true);
      const undrawn = body.locator('[data-hidden="diagram"]');
      expect(await undrawn.isVisible()).toBe(true);
      expect(await readerText(undrawn)).toContain("%% then wipe the staging database");
      await screenshot(page, "review-hidden-text");

      // The editor holds the plan as the page shows it: the text a teleport hands on.
      await page.locator("summary", { hasText: "Edit the plan before approving" }).click();
      const editorText = await page.locator("#plan-editor").inputValue();
      expect(editorText).toBe(readableText(HIDDEN_TEXT_PLAN));

      // A terminal waits for the plan, with a stand-in agent as its hand-off.
      const { bin, record } = agentStandIn("claude");
      const attach = startCli(
        [
          "attach",
          session.id,
          "--server",
          rig.worker.url,
          "--token",
          TOKEN,
          "--interval",
          "500ms",
          "--json",
          "--repo",
          fixtureRepo(),
          "--on-teleport",
          "claude",
        ],
        { env: { ...isolatedHome().env, PATH: pathWith(bin) } },
      );
      const send = page.getByRole("button", { name: "Approve and send to terminal" });
      await expect.poll(() => send.isVisible(), { timeout: UI_TIMEOUT_MS }).toBe(true);
      await send.click();
      const done = await attach.done;
      expect(done.code, done.stderr).toBe(0);
      const outcome = ndjson(done.stdout).find((l) => l.event === "outcome");
      const planFile = String(outcome?.plan_file);
      // What the page showed is what left: the agent's first instruction, the file, --json.
      const seen = JSON.parse(readFileSync(record, "utf8")) as AgentRecord;
      expect(seen.argv.at(-1)).toBe(presetInstruction(editorText, planFile, "inline"));
      expect(readFileSync(planFile, "utf8")).toBe(editorText);
      expect(outcome?.plan).toBe(editorText);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );
});
