import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Event, PlanFile, Session } from "../../src/protocol/index.ts";
import {
  fixtureEvent,
  fixtureEvents,
  fixturePlan,
  fixtureSession,
  hostilePlan,
  QUESTION_INPUT,
  REVIEW_KEY,
  XSS_PAYLOADS,
} from "../worker/review-fixtures.ts";
import { FakeSessionApi } from "./fake-session-api.ts";
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
 * The real review page and its real browser script in Chromium, talking to a test double of
 * the session API (FakeSessionApi). What the page sends and shows is asserted here; the same
 * flows against the real worker and planner are in review-e2e (phase B).
 */

const TEST_TIMEOUT_MS = 60_000;
/** Long enough for a few 2-second polls of the page. */
const UI_TIMEOUT_MS = 15_000;

let browser: Browser;
let api: FakeSessionApi | null = null;
const watches: PageWatch[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const w of watches.splice(0)) await w.context.close();
  await api?.stop();
  api = null;
});

async function openReview(init: {
  session: Session;
  plan: PlanFile | null;
  events: Event[];
}): Promise<PageWatch & { api: FakeSessionApi }> {
  api = new FakeSessionApi({ ...init, key: REVIEW_KEY });
  await api.start();
  const watch = await watchedPage(browser, api.origin);
  watches.push(watch);
  await watch.page.goto(api.reviewUrl);
  await waitForReviewScript(watch.page);
  return { ...watch, api };
}

/** The usual review: a plan waiting for a decision, no terminal polling. */
function openPlanReady() {
  return openReview({ session: fixtureSession(), plan: fixturePlan(), events: fixtureEvents() });
}

const questionSession = () =>
  fixtureSession({
    status: "requires_action",
    phase: "needs_input",
    pending: {
      kind: "question",
      tool_use_id: "toolu_q1",
      input: QUESTION_INPUT,
      opened_at: new Date().toISOString(),
    },
  });

describe("review page in Chromium", () => {
  it(
    "a hostile plan, transcript and comment open no dialog, run no script and reach no other origin",
    async () => {
      const plan = fixturePlan(hostilePlan());
      const w = await openReview({ session: fixtureSession(), plan, events: fixtureEvents() });
      const { page } = w;
      // The editor gives back exactly the plan, break-out attempts included.
      await page.getByText("Edit the plan before approving").click();
      expect(await page.locator("#plan-editor").inputValue()).toBe(plan.content);
      // A comment whose quote and note are hostile is drawn as text.
      await page.locator("#comment-quote").fill(XSS_PAYLOADS.join("\n"));
      await page.locator("#comment-text").fill("<img src=x onerror=alert('note')>");
      await page.getByRole("button", { name: "Add comment" }).click();
      await expect.poll(() => page.locator("#comment-list li").count()).toBe(1);
      // Hostile transcript entries arrive live, through the page's own refresh.
      w.api.append(
        ...XSS_PAYLOADS.map((payload, i) => ({
          type: "assistant" as const,
          message: {
            role: "assistant" as const,
            content: [
              { type: "text" as const, text: payload },
              {
                type: "tool_use" as const,
                id: `toolu_h${i}`,
                name: "Grep",
                input: { pattern: payload },
              },
            ],
          },
        })),
      );
      await expect
        .poll(() => page.locator(".transcript").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("<svg onload=");
      // Clicking a link of the plan stays harmless (only http(s)/mailto survive; they open a tab).
      const hrefs = await page
        .locator("#plan-body a")
        .evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
      for (const href of hrefs) expect(href).toMatch(/^(https?:|mailto:|#)/);
      expect(await page.locator("img, svg, iframe, object, embed, base").count()).toBe(0);
      expect(await page.locator("script").count()).toBe(1);
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "answers a clarifying question with the keyboard alone: an option, several options and Other",
    async () => {
      const w = await openReview({
        session: questionSession(),
        plan: null,
        events: fixtureEvents().slice(0, 3),
      });
      const { page } = w;
      await expect.poll(() => page.locator(".phase").textContent()).toBe("needs your input");
      await screenshot(page, "review-needs-input");
      await page.locator("#q0-o0").focus();
      await page.keyboard.press("ArrowDown"); // radio group: moves to and picks "SQLite"
      await page.keyboard.press("Tab"); // leaves the group: the first question's own-answer box
      await page.keyboard.press("Tab"); // the next question: "Google"
      await page.keyboard.press("Space");
      await page.keyboard.press("Tab"); // "GitLab"
      await page.keyboard.press("Tab"); // "Other"
      await page.keyboard.press("Tab"); // its text box
      await page.keyboard.type("Okta");
      await page.keyboard.press("Enter");
      await expect.poll(() => w.api.received.length, { timeout: UI_TIMEOUT_MS }).toBe(1);
      expect(w.api.received[0]).toEqual({
        route: "/v1/sessions/ses_01jv7m2k8q0000000000000000/messages",
        body: {
          tool_use_id: "toolu_q1",
          answers: {
            "Which database should the users table live in?": "SQLite",
            "Which providers besides GitHub?": "Google, Okta",
          },
        },
      });
      await expect
        .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("researching");
      expect(await page.locator("[data-region=question]").isHidden()).toBe(true);
      // The planner writes a plan and asks for review: the page follows without a reload.
      w.api.plan = fixturePlan();
      w.api.append({
        type: "assistant",
        message: {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_p2", name: "ExitPlanMode", input: {} }],
        },
      });
      w.api.touch({
        status: "requires_action",
        phase: "plan_ready",
        pending: {
          kind: "plan",
          tool_use_id: "toolu_p2",
          input: {},
          opened_at: new Date().toISOString(),
        },
      });
      await expect
        .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("plan ready");
      await expect.poll(() => page.locator("#plan-body h2").first().textContent()).toBe("Context");
      expect(await page.locator("nav.outline a").allInnerTexts()).toContain("Files to change");
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "an unanswered question is refused in the page, nothing is sent",
    async () => {
      const w = await openReview({ session: questionSession(), plan: null, events: [] });
      await w.page.locator("#q0-o1").check();
      await w.page.getByRole("button", { name: "Send answers" }).click();
      await expect
        .poll(() => w.page.locator("#question-form [data-form-error]").textContent())
        .toContain("Which providers besides GitHub?");
      expect(w.api.received).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "comments on a selected passage and keeps planning: quote and note are sent",
    async () => {
      const w = await openPlanReady();
      const { page } = w;
      await screenshot(page, "review-plan-ready");
      // Keep planning with nothing to say is refused before anything is sent.
      await page.getByRole("button", { name: "Keep planning" }).click();
      await expect
        .poll(() => page.locator("#decision-form [data-form-error]").textContent())
        .toContain("Write what should change");
      expect(w.api.received).toEqual([]);
      // Select a passage of the rendered plan, as a reader would with the mouse.
      await selectText(page.locator("#plan-body li", { hasText: "Write the callback route." }));
      const floating = page.locator(".floating-comment");
      await expect.poll(() => floating.isVisible()).toBe(true);
      await floating.click();
      expect(await page.locator("#comment-quote").inputValue()).toBe("Write the callback route.");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("comment-text");
      await page.keyboard.type("Use the existing session cookie here.");
      await page.getByRole("button", { name: "Add comment" }).click();
      await expect.poll(() => page.locator("#comment-count").textContent()).toBe("1");
      // A second comment, then removed again.
      await page.locator("#comment-quote").fill("Add the OAuth client config.");
      await page.locator("#comment-text").fill("Read it from the environment.");
      await page.getByRole("button", { name: "Add comment" }).click();
      await expect.poll(() => page.locator("#comment-count").textContent()).toBe("2");
      await page.getByRole("button", { name: /Remove comment on: Add the OAuth/ }).click();
      await expect.poll(() => page.locator("#comment-count").textContent()).toBe("1");
      await page.getByRole("button", { name: "Keep planning" }).click();
      await expect.poll(() => w.api.received.length, { timeout: UI_TIMEOUT_MS }).toBe(1);
      expect(w.api.received[0]?.body).toEqual({
        tool_use_id: "toolu_plan_1",
        decision: "reject",
        comments: [
          { quote: "Write the callback route.", text: "Use the existing session cookie here." },
        ],
      });
      await expect
        .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("researching");
      expect(await page.locator("#comment-count").textContent()).toBe("0");
      expect(await page.locator(".transcript").textContent()).toContain(
        "not approved, keep planning",
      );
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "offers send-to-terminal only once a terminal polls, then teleports",
    async () => {
      const w = await openPlanReady();
      const { page } = w;
      const teleport = page.getByRole("button", { name: "Approve and send to terminal" });
      expect(await teleport.isHidden()).toBe(true);
      expect(await page.locator("[data-teleport-reason]").textContent()).toContain(
        "planport attach ses_01jv7m2k8q0000000000000000",
      );
      w.api.terminalPolls();
      await expect.poll(() => teleport.isVisible(), { timeout: UI_TIMEOUT_MS }).toBe(true);
      await teleport.click();
      await expect.poll(() => w.api.received.length, { timeout: UI_TIMEOUT_MS }).toBe(1);
      expect(w.api.received[0]?.body).toEqual({
        tool_use_id: "toolu_plan_1",
        decision: "teleport",
      });
      await expect
        .poll(() => page.locator("#outcome-heading").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("Sent to your terminal");
      expect(await page.locator("[data-region=decision]").isHidden()).toBe(true);
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "withdraws send-to-terminal when the terminal stops polling, and says why",
    async () => {
      const w = await openReview({
        session: fixtureSession({
          terminal_polled_at: new Date(Date.now() - 12_000).toISOString(),
        }),
        plan: fixturePlan(),
        events: fixtureEvents(),
      });
      const teleport = w.page.getByRole("button", { name: "Approve and send to terminal" });
      expect(await teleport.isVisible()).toBe(true);
      const reason = w.page.locator("[data-teleport-reason]");
      await expect.poll(() => reason.isVisible(), { timeout: UI_TIMEOUT_MS }).toBe(true);
      expect(await teleport.isHidden()).toBe(true);
      expect(await reason.textContent()).toContain(
        "planport attach ses_01jv7m2k8q0000000000000000",
      );
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "approves an edited plan, follows remote execution and shows the diff",
    async () => {
      const w = await openPlanReady();
      const { page } = w;
      await page.getByText("Edit the plan before approving").click();
      const edited = `${fixturePlan().content}\n## Rollback\n\nRevert the migration.\n`;
      await page.locator("#plan-editor").fill(edited);
      await page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await expect.poll(() => w.api.received.length, { timeout: UI_TIMEOUT_MS }).toBe(1);
      expect(w.api.received[0]?.body).toEqual({
        tool_use_id: "toolu_plan_1",
        decision: "approve",
        plan: edited,
      });
      await expect
        .poll(() => page.locator(".phase").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("executing");
      // The planner finishes in the cloud.
      w.api.changes = [
        "diff --git a/src/auth/github.ts b/src/auth/github.ts",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/src/auth/github.ts",
        "@@ -0,0 +1,2 @@",
        '+export const provider = "github";',
        "+// <script>alert('diff')</script>",
        "diff --git a/src/session.ts b/src/session.ts",
        "--- a/src/session.ts",
        "+++ b/src/session.ts",
        "@@ -1,2 +1,2 @@",
        "-const cookie = 'old';",
        "+const cookie = 'new';",
        " export {};",
        "",
      ].join("\n");
      w.api.append({ type: "result", subtype: "success", is_error: false, num_turns: 4 });
      w.api.touch({ status: "idle", phase: "done" });
      await expect
        .poll(() => page.locator(".diff span").count(), { timeout: UI_TIMEOUT_MS })
        .toBe(14);
      expect(await page.locator(".diff .diff-add").count()).toBe(3);
      expect(await page.locator(".diff .diff-del").count()).toBe(1);
      expect(await page.locator(".diff").textContent()).toContain(
        "+// <script>alert('diff')</script>",
      );
      expect(await page.locator("[data-diff-target] p").first().textContent()).toBe(
        "2 files changed: 3 lines added, 1 removed.",
      );
      expect(await page.locator(".command").textContent()).toBe(
        "planport pull ses_01jv7m2k8q0000000000000000 --apply",
      );
      await screenshot(page, "review-done");
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "shows the API's refusal to the user, with its code",
    async () => {
      const w = await openPlanReady();
      w.api.failNext = {
        status: 409,
        code: "already_decided",
        message: "This plan was already decided in another window.",
      };
      await w.page.getByRole("button", { name: "Approve and run in the cloud" }).click();
      await expect
        .poll(() => w.page.locator("#decision-form [data-form-error]").textContent(), {
          timeout: UI_TIMEOUT_MS,
        })
        .toBe("This plan was already decided in another window. (already_decided)");
      expect(
        await w.page.getByRole("button", { name: "Approve and run in the cloud" }).isEnabled(),
      ).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "stops the session after an explicit confirmation",
    async () => {
      const w = await openPlanReady();
      await w.page.getByRole("button", { name: "Stop session" }).click();
      expect(w.api.received).toEqual([]);
      await w.page.getByRole("button", { name: "Stop now" }).click();
      await expect
        .poll(() => w.api.received.map((r) => r.route), { timeout: UI_TIMEOUT_MS })
        .toEqual(["/v1/sessions/ses_01jv7m2k8q0000000000000000/archive"]);
      await expect
        .poll(() => w.page.locator("#outcome-heading").textContent(), { timeout: UI_TIMEOUT_MS })
        .toBe("Session stopped");
      expectNothingRan(w);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "says so when the session disappears",
    async () => {
      const w = await openReview({
        session: fixtureSession(),
        plan: fixturePlan(),
        events: [
          fixtureEvent({ type: "result", subtype: "success", is_error: false, num_turns: 1 }),
        ],
      });
      w.api.session = { ...w.api.session, id: "ses_01jv7m2k8q9999999999999999" };
      await expect
        .poll(() => w.page.locator("#connection").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("no longer available");
    },
    TEST_TIMEOUT_MS,
  );
});
