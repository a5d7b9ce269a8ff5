import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, ScriptedTurn, Session } from "../../src/protocol/index.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { XSS_PAYLOADS } from "../worker/review-fixtures.ts";
import {
  expectNothingRan,
  launchChromium,
  type PageWatch,
  screenshot,
  selectText,
  waitForReviewScript,
  watchedPage,
} from "./support.ts";

/**
 * PHASE B DRAFT (not run: its name does not end in `.test.ts`). Rename it to
 * `review-e2e.test.ts` once `reviewRoutes` is mounted at `/review` in the worker entry.
 *
 * The review page end to end, in Chromium, against the real worker under `wrangler dev`: the
 * offline planner driven by the real CLI (a terminal that polls, so teleport is offered), and
 * the scripted planner driven over the API (question → approve → remote execution → diff).
 *
 * Validated against a worker entry that mounts the route exactly as route.ts's doc comment
 * shows (see the review report); every assertion below passed there.
 */

const TOKEN = "review-e2e-token";
const TEST_TIMEOUT_MS = 180_000;
/** Long enough for the page's 2-second polls and a planner step or two. */
const UI_TIMEOUT_MS = 30_000;

let worker: WorkerProcess;
let browser: Browser;
const persist = mkdtempSync(join(tmpdir(), "planport-review-e2e-"));

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

async function allEvents(sessionId: string): Promise<Event[]> {
  const page = await api<{ data: Event[] }>("GET", `/v1/sessions/${sessionId}/events?limit=1000`);
  return page.data;
}

async function openReview(url: string): Promise<PageWatch> {
  const watch = await watchedPage(browser, worker.url);
  await watch.page.goto(url);
  await waitForReviewScript(watch.page);
  return watch;
}

async function phaseIs(page: Page, label: string): Promise<void> {
  await expect
    .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
    .toBe(label);
}

describe("review page end to end (wrangler dev, Chromium)", () => {
  it(
    "offline planner via the CLI: comment and keep planning, then teleport to the terminal",
    async () => {
      const repo = fixtureRepo();
      const home = isolatedHome();
      const cli = startCli(
        [
          "plan",
          "add GitHub OAuth login next to the password login",
          "--repo",
          repo,
          "--server",
          worker.url,
          "--token",
          TOKEN,
          "--interval",
          "1s",
          "--json",
        ],
        { env: home.env },
      );
      try {
        await cli.waitForStdout('"event":"session"', 60_000);
        const reviewUrl = String(ndjson(cli.stdout())[0]?.review_url);
        const sessionId = String(ndjson(cli.stdout())[0]?.id);
        const w = await openReview(reviewUrl);
        const { page } = w;
        await phaseIs(page, "plan ready");
        await screenshot(page, "review-e2e-plan-ready");
        expect(await page.locator("[data-region=status] .planner").textContent()).toBe(
          "offline planner (no model)",
        );
        expect(
          await page.getByRole("button", { name: "Approve and run in the cloud" }).count(),
        ).toBe(0);

        // Comment on the first step of the plan and keep planning.
        const passage = page.locator("#plan-body li").first();
        const quote = ((await passage.textContent()) ?? "").trim();
        await selectText(passage);
        await page.locator(".floating-comment").click();
        await page.locator("#comment-text").fill("Also cover the logout path.");
        await page.getByRole("button", { name: "Add comment" }).click();
        await page.getByRole("button", { name: "Keep planning" }).click();
        // The model's next request is built from the log: the rejection carries quote and note.
        await expect
          .poll(
            async () =>
              (await allEvents(sessionId)).some(
                (e) =>
                  e.type === "user" &&
                  Array.isArray(e.message.content) &&
                  e.message.content.some(
                    (b) =>
                      b.type === "tool_result" &&
                      b.is_error === true &&
                      JSON.stringify(b.content).includes("Also cover the logout path.") &&
                      JSON.stringify(b.content).includes(JSON.stringify(quote).slice(1, -1)),
                  ),
              ),
            { timeout: UI_TIMEOUT_MS },
          )
          .toBe(true);
        await expect
          .poll(() => page.locator(".revisions").textContent(), { timeout: UI_TIMEOUT_MS })
          .toContain("1 round");
        await phaseIs(page, "plan ready");

        // The CLI polls with its token, so sending the plan to the terminal is offered.
        const teleport = page.getByRole("button", { name: "Approve and send to terminal" });
        await expect.poll(() => teleport.isVisible(), { timeout: UI_TIMEOUT_MS }).toBe(true);
        const shownPlan = await page.locator("#plan-editor").inputValue();
        await teleport.click();
        const exit = await cli.done;
        expect(exit.code).toBe(0);
        const outcome = ndjson(exit.stdout).at(-1);
        expect(outcome).toMatchObject({
          event: "outcome",
          kind: "teleport",
          execution_target: "local",
          plan: shownPlan,
        });
        await expect
          .poll(() => page.locator("#outcome-heading").textContent(), { timeout: UI_TIMEOUT_MS })
          .toBe("Sent to your terminal");
        expectNothingRan(w, { consoleErrors: false });
      } finally {
        cli.child.kill("SIGINT");
        rmSync(repo, { recursive: true, force: true });
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "scripted planner: answer a question, approve, follow remote execution, see the diff",
    async () => {
      const script: ScriptedTurn[] = [
        {
          content: [
            { type: "text", text: "One question before I plan." },
            {
              type: "tool_use",
              id: "toolu_ask",
              name: "AskUserQuestion",
              input: {
                questions: [
                  {
                    question: "Which greeting should the module export?",
                    header: "Greeting",
                    options: [{ label: "hello" }, { label: "hi" }],
                  },
                ],
              },
            },
          ],
        },
        { content: [{ type: "tool_use", id: "toolu_exit", name: "ExitPlanMode", input: {} }] },
        {
          content: [
            {
              type: "tool_use",
              id: "toolu_write",
              name: "Write",
              input: {
                file_path: "src/greeting.ts",
                content: 'export const greeting = "hello";\n',
              },
            },
          ],
        },
        { content: [{ type: "text", text: "Done: src/greeting.ts exports the greeting." }] },
      ];
      const session = await api<Session>("POST", "/v1/sessions", {
        prompt: "Add a greeting module",
        planner: "scripted",
        script,
      });
      const w = await openReview(session.review_url);
      const { page } = w;
      await phaseIs(page, "needs your input");
      await screenshot(page, "review-e2e-needs-input");
      await page.getByLabel("hi", { exact: true }).check();
      await page.getByRole("button", { name: "Send answer" }).click();
      await phaseIs(page, "plan ready");
      // The browser polls with the review key, which never counts as a terminal.
      expect(await page.locator("[data-teleport-reason]").isVisible()).toBe(true);
      await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await phaseIs(page, "done");
      await expect
        .poll(() => page.locator(".diff .diff-add").allTextContents(), { timeout: UI_TIMEOUT_MS })
        .toContain('+export const greeting = "hello";');
      expect(await page.locator(".command").textContent()).toBe(
        `planport pull ${session.id} --apply`,
      );
      await screenshot(page, "review-e2e-done");
      const answered = (await allEvents(session.id)).some(
        (e) => e.type === "user" && JSON.stringify(e.message.content).includes('\\"=\\"hi\\"'),
      );
      expect(answered).toBe(true);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "hostile model output on the real stack opens no dialog, runs no script, reaches no other origin",
    async () => {
      const script: ScriptedTurn[] = [
        {
          content: [
            ...XSS_PAYLOADS.map((text) => ({ type: "text" as const, text })),
            ...XSS_PAYLOADS.map((pattern, i) => ({
              type: "tool_use" as const,
              id: `toolu_grep_${i}`,
              name: "Grep",
              input: { pattern },
            })),
            {
              type: "tool_use",
              id: "toolu_w",
              name: "Write",
              input: { file_path: XSS_PAYLOADS[1]!, content: XSS_PAYLOADS[0]! },
            },
            {
              type: "tool_use",
              id: "toolu_q",
              name: "AskUserQuestion",
              input: {
                questions: [
                  {
                    question: `${XSS_PAYLOADS[3]}?`,
                    header: "<svg onload>",
                    options: [
                      { label: XSS_PAYLOADS[0]!.slice(0, 100), description: XSS_PAYLOADS[2] },
                      { label: XSS_PAYLOADS[6]!.slice(0, 100) },
                    ],
                  },
                ],
              },
            },
          ],
        },
      ];
      const session = await api<Session>("POST", "/v1/sessions", {
        prompt: XSS_PAYLOADS.join("\n"),
        title: XSS_PAYLOADS[1],
        planner: "scripted",
        script,
      });
      const w = await openReview(session.review_url);
      await phaseIs(w.page, "needs your input");
      await w.page.locator("#q0-o0").check();
      await w.page.getByRole("button", { name: "Send answer" }).click();
      await expect
        .poll(() => w.page.locator(".transcript").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("you answered");
      expect(await w.page.locator("img, svg, iframe, object, embed").count()).toBe(0);
      expect(await w.page.locator("script").count()).toBe(1);
      expectNothingRan(w, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );
});
