import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, ScriptedTurn, Session } from "../../src/protocol/index.ts";
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
 * Team review in Chromium against the real worker under `wrangler dev` (issue 17; docs/PROTOCOL.md
 * "Team review"): the share link shows the plan with no decision control and sends a comment
 * as a suggestion; the requester's page lists it, may not approve (bob must), and sends the
 * suggestion with "Keep planning"; bob's approval shows up on the share page by itself.
 */

const ALICE = "team-share-alice";
const BOB = "team-share-bob";
const TEST_TIMEOUT_MS = 180_000;
/** Long enough for the page's 2-second polls and a planner step or two. */
const UI_TIMEOUT_MS = 30_000;

let worker: WorkerProcess;
let browser: Browser;
const persist = mkdtempSync(join(tmpdir(), "planport-team-share-"));

beforeAll(async () => {
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: {
      PLANPORT_TOKENS: `alice:${ALICE},bob:${BOB}`,
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

async function api<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${worker.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function openPage(url: string): Promise<PageWatch> {
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

/** Waits until the element's text contains `text` (the page updates itself by polling). */
async function shows(locator: Locator, text: string): Promise<void> {
  await expect
    .poll(async () => (await locator.textContent()) ?? "", { timeout: UI_TIMEOUT_MS })
    .toContain(text);
}

const SEED = "# Add OAuth login\n\n1. Add the callback route.\n2. Reuse the session cookie.\n";

describe("team review in the browser (wrangler dev, Chromium)", () => {
  it(
    "a share link shows no decision control and its comment lands as a suggestion for the decider",
    async () => {
      const script: ScriptedTurn[] = [
        { content: [{ type: "tool_use", id: "toolu_exit_1", name: "ExitPlanMode", input: {} }] },
        { content: [{ type: "tool_use", id: "toolu_exit_2", name: "ExitPlanMode", input: {} }] },
        { content: [{ type: "text", text: "Done." }] },
      ];
      const session = await api<Session>(ALICE, "POST", "/v1/sessions", {
        prompt: "Add OAuth login",
        planner: "scripted",
        script,
        seed_plan: SEED,
        approvers: ["bob"],
      });
      expect(session.approvers).toEqual(["bob"]);
      const shareUrl = session.share_url ?? "";
      expect(shareUrl).not.toBe(session.review_url);

      // The share page: the plan, the status and the transcript; no control that decides.
      const viewer = await openPage(shareUrl);
      const { page } = viewer;
      await phaseIs(page, "plan ready");
      await shows(page.locator("#plan-body"), "Reuse the session cookie.");
      await shows(page.locator("[data-region=status]"), "read-only share link");
      await shows(page.locator("[data-region=status]"), "approval of bob");
      expect(await page.locator("[data-region=transcript] .entry").count()).toBeGreaterThan(0);
      for (const name of [
        "Approve and run in the cloud",
        "Approve and send to terminal",
        "Keep planning",
        "Stop session",
        "Send message",
      ]) {
        expect(await page.getByRole("button", { name }).count(), name).toBe(0);
      }
      expect(await page.locator("form#decision-form, form#message-form").count()).toBe(0);
      await screenshot(page, "team-share-view");

      // A comment on a passage goes out at once, as a suggestion.
      const passage = page.locator("#plan-body li").nth(1);
      await selectText(passage);
      await page.locator(".floating-comment").click();
      await page.locator("#comment-text").fill("Rotate the cookie on login.");
      await page.getByRole("button", { name: "Send suggestion" }).click();
      await expect
        .poll(
          async () =>
            (
              await api<{ data: { text: string; from: string }[] }>(
                ALICE,
                "GET",
                `/v1/sessions/${session.id}/comments`,
              )
            ).data,
          { timeout: UI_TIMEOUT_MS },
        )
        .toEqual([
          expect.objectContaining({ text: "Rotate the cookie on login.", from: "share_link" }),
        ]);
      await shows(page.locator("[data-region=suggestions]"), "Rotate the cookie on login.");

      // The requester's page: the suggestion is listed; approval is bob's, keep planning is theirs.
      const decider = await openPage(session.review_url);
      const own = decider.page;
      await phaseIs(own, "plan ready");
      const suggestions = own.locator("[data-region=suggestions]");
      await shows(suggestions, "Suggestions from viewers (1)");
      await shows(suggestions, "from a share link");
      expect(await own.getByRole("button", { name: "Approve and run in the cloud" }).count()).toBe(
        0,
      );
      await shows(own.locator("[data-approval-reason]"), "bob");
      await screenshot(own, "team-share-decider");
      await own.getByRole("button", { name: "Add to my comments" }).click();
      await shows(own.locator("#comment-count"), "1");
      await own.getByRole("button", { name: "Keep planning" }).click();
      await expect
        .poll(
          async () => {
            const events = (
              await api<{ data: Event[] }>(
                ALICE,
                "GET",
                `/v1/sessions/${session.id}/events?limit=1000`,
              )
            ).data;
            return events.some(
              (e) =>
                e.type === "user" &&
                e.decision?.kind === "reject" &&
                e.decision.decided_by === "review_link" &&
                JSON.stringify(e.message.content).includes("Rotate the cookie on login."),
            );
          },
          { timeout: UI_TIMEOUT_MS },
        )
        .toBe(true);

      // Bob approves the revised plan with his own token; the share page follows by itself.
      await expect
        .poll(async () => (await api<Session>(BOB, "GET", `/v1/sessions/${session.id}`)).pending, {
          timeout: UI_TIMEOUT_MS,
        })
        .toMatchObject({ kind: "plan", tool_use_id: "toolu_exit_2" });
      const approved = await api<Session>(BOB, "POST", `/v1/sessions/${session.id}/decision`, {
        tool_use_id: "toolu_exit_2",
        decision: "approve",
      });
      expect(approved.decided_by).toBe("bob");
      await expect
        .poll(() => page.locator("[data-team]").textContent(), { timeout: UI_TIMEOUT_MS })
        .toContain("Decided by bob.");
      expect(await page.getByRole("button", { name: "Stop session" }).count()).toBe(0);
      expectNothingRan(viewer, { consoleErrors: false });
      expectNothingRan(decider, { consoleErrors: false });
    },
    TEST_TIMEOUT_MS,
  );
});
