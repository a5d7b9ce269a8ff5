import { TERMINAL_POLL_WINDOW_MS } from "../../protocol/limits.ts";
import { reviewStateKey } from "../../protocol/review-state.ts";
import { REVIEW_POLL_INTERVAL_MS } from "../limits.ts";
import { ApiError, callApi, errorMessage } from "./api.ts";
import { renderComments, updateSelectionControls } from "./comments.ts";
import { renderDiagrams } from "./diagrams.ts";
import { loadDiffs } from "./diff.ts";
import { showConnection } from "./feedback.ts";
import { showLocalTimes } from "./local-times.ts";
import { body, type PolledSession, parseOwnHtml, state } from "./page-state.ts";

/**
 * Live updates. Polls the session and its events feed with the review key, and when anything
 * changed fetches the page's regions again and swaps those that differ (regions whose
 * `data-key` is unchanged are kept, so what the reader typed survives). Also re-checks on every
 * poll whether a terminal is still polling, to offer or explain teleport.
 */

/** Feed pages read in one poll at most; the next poll reads on from the cursor. */
const FEED_PAGES_PER_TICK = 10;

interface FeedPage {
  data?: unknown;
  last_id?: unknown;
  has_more?: unknown;
}

/** One poll: the session, then the events feed from the cursor; refreshes the page on change. */
export async function tick(): Promise<void> {
  state.timer = 0;
  if (state.stopped) return;
  if (document.hidden) return schedule();
  // One poll at a time: an action that asks for a poll while one runs gets the next one.
  if (state.polling) {
    state.pollAgain = true;
    return;
  }
  state.polling = true;
  try {
    const sessionRes = await callApi("GET", "");
    const serverNow = Date.parse(sessionRes.headers.get("Date") || "");
    if (Number.isFinite(serverNow)) state.clockSkewMs = serverNow - Date.now();
    const session = (await sessionRes.json()) as PolledSession;
    state.session = session;
    let changed =
      state.needsRefresh ||
      reviewStateKey(session) !== state.stateKey ||
      (typeof session.suggestion_count === "number" &&
        session.suggestion_count !== state.suggestionCount);
    for (let page = 0; page < FEED_PAGES_PER_TICK; page++) {
      const after = state.cursor ? `&after_id=${encodeURIComponent(state.cursor)}` : "";
      const feed = (await (await callApi("GET", `/events?limit=1000${after}`)).json()) as FeedPage;
      if (Array.isArray(feed.data) && feed.data.length > 0) {
        changed = true;
        if (typeof feed.last_id === "string") state.cursor = feed.last_id;
      }
      if (!feed.has_more) break;
    }
    state.failures = 0;
    showConnection("");
    if (changed) await refreshPage();
    updateTeleportOffer();
    // An archived session never changes again.
    if (session.status === "archived" && !state.needsRefresh) state.stopped = true;
  } catch (err) {
    if (
      err instanceof ApiError &&
      (err.status === 401 || err.status === 403 || err.status === 404)
    ) {
      state.stopped = true;
      showConnection(
        "This session is no longer available: it was deleted, or this link is not valid any more.",
      );
    } else {
      state.failures += 1;
      if (state.failures >= 2) {
        showConnection(
          `Lost contact with the planport server (${errorMessage(err)}). Retrying every few seconds…`,
        );
      }
    }
  } finally {
    state.polling = false;
  }
  if (state.pollAgain && !state.stopped) {
    state.pollAgain = false;
    return tick();
  }
  schedule();
}

function schedule(): void {
  if (state.stopped || state.timer) return;
  state.timer = window.setTimeout(tick, REVIEW_POLL_INTERVAL_MS);
}

/** Polls at once (after an action, or when the tab becomes visible). */
export function pollNow(): void {
  if (state.timer) clearTimeout(state.timer);
  state.timer = 0;
  void tick();
}

/** Fetches the page's regions again (`part=regions`) and swaps those that changed. */
export async function refreshPage(): Promise<void> {
  if (state.refreshing) {
    state.refreshAgain = true;
    return;
  }
  state.refreshing = true;
  state.needsRefresh = true;
  try {
    do {
      state.refreshAgain = false;
      const res = await fetch(`${location.pathname}${location.search}&part=regions`, {
        headers: { Accept: "text/html" },
        cache: "no-store",
        credentials: "omit",
      });
      if (!res.ok) {
        throw new ApiError(res.status, `page_${res.status}`, "the page could not be reloaded");
      }
      applyPage(parseOwnHtml(await res.text()));
    } while (state.refreshAgain);
    state.needsRefresh = false;
  } finally {
    state.refreshing = false;
  }
}

function applyPage(doc: Document): void {
  // Before comparing: a region is unchanged when it reads the same in the reader's zone.
  showLocalTimes(doc);
  const focused = document.activeElement;
  const focusedId = focused && focused !== body ? focused.id : "";
  let refocus = false;
  for (const next of Array.from(doc.querySelectorAll("[data-region]"))) {
    const name = next.getAttribute("data-region") ?? "";
    const current = document.querySelector(`[data-region="${CSS.escape(name)}"]`);
    if (!current) continue;
    const key = next.getAttribute("data-key");
    if (key !== null && key !== "" && key === current.getAttribute("data-key")) continue;
    if (current.isEqualNode(next)) continue;
    for (const script of Array.from(next.querySelectorAll("script"))) script.remove();
    const transcript = current.querySelector(".transcript");
    const pinned =
      !transcript || transcript.scrollTop + transcript.clientHeight >= transcript.scrollHeight - 8;
    if (focused && current.contains(focused)) refocus = true;
    const adopted = document.adoptNode(next);
    current.replaceWith(adopted);
    enableControls(adopted);
    renderDiagrams(adopted);
    if (pinned) scrollTranscriptToEnd(adopted);
  }
  document.title = doc.title;
  const cursor = doc.body.dataset.cursor ?? "";
  if (cursor > state.cursor) state.cursor = cursor;
  state.stateKey = doc.body.dataset.state || state.stateKey;
  state.suggestionCount = Number(doc.body.dataset.suggestions ?? state.suggestionCount);
  if (refocus && focusedId) document.getElementById(focusedId)?.focus();
  renderComments();
  updateTeleportOffer();
  void loadDiffs();
}

/** Turns on the controls the server rendered disabled (they need this script to work). */
export function enableControls(root: ParentNode): void {
  const fieldsets = root.querySelectorAll<HTMLFieldSetElement>("fieldset[data-needs-script]");
  for (const fieldset of Array.from(fieldsets)) fieldset.disabled = false;
  updateSelectionControls();
}

export function scrollTranscriptToEnd(root: ParentNode): void {
  const list = root.querySelector(".transcript");
  if (list) list.scrollTop = list.scrollHeight;
}

/** Offers teleport while a terminal polled recently (by the server's clock), explains it otherwise. */
function updateTeleportOffer(): void {
  const session = state.session;
  const button = document.querySelector<HTMLElement>("[data-teleport-offer]");
  const reason = document.querySelector<HTMLElement>("[data-teleport-reason]");
  if (!session || !button || !reason) return;
  const polledAt = Date.parse(session.terminal_polled_at || "");
  const now = Date.now() + state.clockSkewMs;
  const polling = Number.isFinite(polledAt) && now - polledAt <= TERMINAL_POLL_WINDOW_MS;
  button.hidden = !polling;
  reason.hidden = polling;
}
