import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, PlanFile, ScriptedTurn, Session } from "../../src/protocol/index.ts";
import { TROJAN_PLAN, TROJAN_PLAN_CONTROLS, TROJAN_QUESTION } from "../worker/review-fixtures.ts";
import {
  expectNothingRan,
  launchChromium,
  screenshot,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * Hidden text-direction characters (Trojan Source) on the review page, in Chromium against the
 * real worker under `wrangler dev` with the scripted planner: a question, a plan, a live
 * revision, the plan editor, approval of an edited plan and the diff of remote execution. At
 * every stage the document the browser built — its markup, text, title and every field's value
 * — holds no bidi embedding, override or isolate (U+202A–E, U+2066–9), and the plan shows
 * each one as a visible mark under a warning that counts them.
 */

const TOKEN = "review-bidi-token";
const TEST_TIMEOUT_MS = 180_000;
const UI_TIMEOUT_MS = 30_000;
const CONTROL_SOURCE = "[\\u202a-\\u202e\\u2066-\\u2069]";

let worker: WorkerProcess;
let browser: Browser;
const persist = mkdtempSync(join(tmpdir(), "planport-review-bidi-"));

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

/**
 * Where the page as the browser holds it carries a direction control: its serialised markup
 * (text and attribute values), the rendered text, the title, and every field's current value.
 */
async function directionControlsOnPage(page: Page): Promise<string[]> {
  return page.evaluate((source) => {
    const control = new RegExp(source);
    const found: string[] = [];
    const check = (where: string, text: string) => {
      const at = text.search(control);
      if (at !== -1)
        found.push(`${where}: ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 30))}`);
    };
    check("markup", document.documentElement.outerHTML);
    check("text", document.body.textContent ?? "");
    check("title", document.title);
    for (const field of Array.from(document.querySelectorAll("input, textarea"))) {
      check(`value of #${field.id}`, (field as HTMLInputElement | HTMLTextAreaElement).value);
    }
    return found;
  }, CONTROL_SOURCE);
}

const write = (id: string, file_path: string, content: string): ScriptedTurn => ({
  content: [{ type: "tool_use", id, name: "Write", input: { file_path, content } }],
});

describe("hidden text-direction characters on the review page (wrangler dev, Chromium)", () => {
  it(
    "a Trojan Source session: question, plan, live revision, editor and diff show marks, never a control",
    async () => {
      const revised = `${TROJAN_PLAN}\n- one more &#x2067;step\n`;
      const script: ScriptedTurn[] = [
        {
          content: [
            { type: "text", text: "I will run rm -rf build/\u202egol.* after asking." },
            { type: "tool_use", id: "toolu_ask", name: "AskUserQuestion", input: TROJAN_QUESTION },
          ],
        },
        write("toolu_plan_1", "$PLAN_PATH", TROJAN_PLAN),
        { content: [{ type: "tool_use", id: "toolu_exit_1", name: "ExitPlanMode", input: {} }] },
        write("toolu_plan_2", "$PLAN_PATH", revised),
        { content: [{ type: "tool_use", id: "toolu_exit_2", name: "ExitPlanMode", input: {} }] },
        write("toolu_code", "src/clean.sh", "rm -rf build/\u202egol.*\n"),
        { content: [{ type: "text", text: "Done: src/clean.sh." }] },
      ];
      const session = await api<Session>("POST", "/v1/sessions", {
        prompt: "Clean up the build folder",
        title: "Clean up build/\u202egol.*",
        planner: "scripted",
        script,
      });
      const w = await watchedPage(browser, worker.url);
      const { page } = w;
      await page.goto(session.review_url);
      await waitForReviewScript(page);

      // The question: its text and options show marks; the answer is filed under the exact text.
      await phaseIs(page, "needs your input");
      expect(await directionControlsOnPage(page)).toEqual([]);
      expect(await page.title()).toContain("Clean up build/⟨U+202E⟩gol.*");
      expect(await page.locator("legend").textContent()).toContain(
        "Delete build/⟨U+202E⟩gol.* now?",
      );
      expect(await page.locator("label[for=q0-o0]").textContent()).toContain(
        "Yes, delete ⟨U+202E⟩gol.*",
      );
      expect(await page.locator(".transcript").textContent()).toContain(
        "rm -rf build/⟨U+202E⟩gol.*",
      );
      await page.locator("#q0-o0").check();
      await page.getByRole("button", { name: "Send answer" }).click();
      await phaseIs(page, "plan ready");
      const events = await api<{ data: Event[] }>(
        "GET",
        `/v1/sessions/${session.id}/events?limit=1000`,
      );
      const question = TROJAN_QUESTION.questions[0]!;
      expect(
        events.data.flatMap((e) => (e.type === "user" && e.answers ? [e.answers] : [])),
      ).toEqual([
        expect.objectContaining({ answers: { [question.question]: question.options[0]!.label } }),
      ]);

      // The plan: every control, raw or an entity markdown decoded, is a visible mark, counted.
      expect(await directionControlsOnPage(page)).toEqual([]);
      const warning = page.locator("[data-hidden-warning]");
      expect(await warning.textContent()).toContain(
        `This plan contains ${TROJAN_PLAN_CONTROLS} hidden characters`,
      );
      // One of them is in a link's title: shown after the link, as text, not in a tooltip.
      expect(await page.locator("#plan-body .hidden-mark").count()).toBe(TROJAN_PLAN_CONTROLS);
      expect(await page.locator("#plan-body a").first().getAttribute("title")).toBeNull();
      expect(await page.locator("#plan-body .link-title").first().textContent()).toBe(
        " (title: ti⟨U+202E⟩tle)",
      );
      expect(await page.locator("#plan-body .hidden-mark").first().isVisible()).toBe(true);
      expect(await page.locator("#plan-body").textContent()).toContain(
        "rm -rf build/⟨U+202E⟩gol.*",
      );
      await screenshot(page, "review-bidi-plan");

      // A new revision arrives by the live refresh: still marks only.
      await page.locator("#feedback").fill("Add one more step.");
      await page.getByRole("button", { name: "Keep planning" }).click();
      await expect
        .poll(() => page.locator(".plan-meta").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("revision 2");
      await phaseIs(page, "plan ready");
      expect(await directionControlsOnPage(page)).toEqual([]);
      expect(await page.locator("[data-hidden-warning]").textContent()).toContain(
        `This plan contains ${TROJAN_PLAN_CONTROLS + 1} hidden characters`,
      );

      // The editor shows the plan's text with plain marks; an edited plan is approved as shown.
      await page.locator("summary", { hasText: "Edit the plan before approving" }).click();
      const editor = page.locator("#plan-editor");
      const shown = await editor.inputValue();
      expect(shown).toContain("rm -rf build/⟨U+202E⟩gol.*");
      expect(await page.locator("#plan-editor-hint").textContent()).toContain(
        "An edited plan is approved as the editor shows it",
      );
      const edited = `${shown}\n- Edited before approval.\n`;
      await editor.fill(edited);
      await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await phaseIs(page, "done");
      const approved = await api<PlanFile>("GET", `/v1/sessions/${session.id}/plan`);
      expect(approved).toMatchObject({ content: edited, edited_by_user: true });

      // The diff of remote execution, drawn by the script from the API: marks too.
      await expect
        .poll(() => page.locator(".diff .diff-add").allTextContents(), { timeout: UI_TIMEOUT_MS })
        .toContain("+rm -rf build/⟨U+202E⟩gol.*");
      expect(await page.locator(".diff .hidden-mark").count()).toBe(1);
      expect(await directionControlsOnPage(page)).toEqual([]);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );
});
