import { MAX_APPROVABLE_PLAN_CHARS, TERMINAL_POLL_WINDOW_MS } from "../../protocol/index.ts";
import { TRUSTED_TYPES_POLICY } from "../headers.ts";
import { ACTIONS_SCRIPT } from "./actions.ts";
import { COMMENTS_SCRIPT } from "./comments.ts";
import { DIFF_SCRIPT } from "./diff.ts";
import { LIVE_UPDATES_SCRIPT } from "./live.ts";

/** How often the open page asks whether the session changed. */
export const REVIEW_POLL_INTERVAL_MS = 2_000;

/** At most this many diff lines are drawn; `planport pull` shows the rest. */
export const DIFF_MAX_LINES = 10_000;

/**
 * The review page's browser script, inlined with the response's nonce. Plain JavaScript in a
 * TypeScript module, so `wrangler dev` and the vitest worker project load it with no build
 * step and no loader rule. The parts (live.ts, actions.ts, comments.ts, diff.ts) share one
 * closure: the prelude here (constants, state, the API call) and the wiring at the end.
 *
 * What it does, and the one rule it keeps: it never builds HTML from data. The server renders
 * every piece of the page; the script only
 * - polls the session and its events feed with `X-Review-Key` (every 2 s while visible) and, when
 *   anything changed, fetches the page's regions again (the review route with `part=regions`)
 *   and swaps the regions that differ — regions with an unchanged `data-key` are kept, so what
 *   the reader typed survives;
 * - posts answers, decisions, messages and stop requests to the JSON API and shows its errors;
 * - keeps inline comments (quote + note) in memory and sessionStorage, drawn with textContent;
 * - draws the diff after remote execution with textContent, one line per element;
 * - re-checks every poll whether a terminal is still polling (teleport offered or explained).
 */
// biome-ignore lint/complexity/noUselessStringRaw: browser code, so a later regex keeps its backslashes.
export const REVIEW_SCRIPT = String.raw`
(() => {
  "use strict";
  const POLL_INTERVAL_MS = ${REVIEW_POLL_INTERVAL_MS};
  const TERMINAL_POLL_WINDOW_MS = ${TERMINAL_POLL_WINDOW_MS};
  const MAX_APPROVABLE_PLAN_CHARS = ${MAX_APPROVABLE_PLAN_CHARS};
  const DIFF_MAX_LINES = ${DIFF_MAX_LINES};
  const FEED_PAGES_PER_TICK = 10;
  const COMMENT_MAX_CHARS = 10000;
  const POLICY_NAME = ${JSON.stringify(TRUSTED_TYPES_POLICY)};

  const body = document.body;
  const sessionId = body.dataset.sessionId || "";
  const reviewKey = new URLSearchParams(location.search).get("key") || "";
  const apiBase = "/v1/sessions/" + encodeURIComponent(sessionId);
  const storageKey = "planport-review-comments:" + sessionId;

  // The page parses only its own server-rendered HTML, fetched from its own URL; this policy
  // is the single place a string may become HTML (CSP: require-trusted-types-for 'script').
  const policy =
    window.trustedTypes && window.trustedTypes.createPolicy
      ? window.trustedTypes.createPolicy(POLICY_NAME, { createHTML: (text) => text })
      : null;

  const state = {
    cursor: body.dataset.cursor || "",
    stateKey: body.dataset.state || "",
    session: null,
    clockSkewMs: 0,
    needsRefresh: false,
    refreshing: false,
    refreshAgain: false,
    stopped: false,
    failures: 0,
    timer: 0,
    polling: false,
    pollAgain: false,
    lastSelection: "",
    comments: loadComments(),
  };

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function callApi(method, path, payload) {
    const headers = { "X-Review-Key": reviewKey, Accept: "application/json" };
    const init = { method, headers, cache: "no-store", credentials: "omit" };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    let res;
    try {
      res = await fetch(apiBase + path, init);
    } catch {
      throw new ApiError(0, "network", "Could not reach the planport server. Check your connection and try again.");
    }
    if (res.ok) return res;
    let code = "http_" + res.status;
    let message = "The server answered with status " + res.status + ".";
    try {
      const data = await res.json();
      if (data && data.error && typeof data.error.message === "string") {
        code = String(data.error.code);
        message = data.error.message;
      }
    } catch {
      // Not a JSON error body: keep the generic sentence.
    }
    throw new ApiError(res.status, code, message);
  }

${LIVE_UPDATES_SCRIPT}
${ACTIONS_SCRIPT}
${COMMENTS_SCRIPT}
${DIFF_SCRIPT}

  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target.closest("[data-action]") : null;
    if (!target || target.disabled) return;
    switch (target.getAttribute("data-action")) {
      case "approve":
        return decide(target, "approve");
      case "teleport":
        return decide(target, "teleport");
      case "reject":
        return decide(target, "reject");
      case "stop":
        return setStopConfirm(true);
      case "stop-cancel":
        return setStopConfirm(false);
      case "stop-confirm":
        return send(target, target.closest("section"), "POST", "/archive", undefined, () => announce("Session stopped."));
      case "quote-selection":
        return quoteSelection();
      case "remove-comment": {
        const index = Number(target.getAttribute("data-index"));
        state.comments.splice(index, 1);
        saveComments();
        announce("Comment removed. " + state.comments.length + " left.");
        const next = document.querySelector('[data-action="remove-comment"]') || document.getElementById("comment-quote");
        if (next) next.focus();
        return;
      }
    }
  });

  // Keeps the selection alive while the floating button is clicked.
  document.addEventListener("mousedown", (event) => {
    if (event.target instanceof Element && event.target.closest(".floating-comment")) event.preventDefault();
  });

  document.addEventListener("submit", (event) => {
    const form = event.target;
    event.preventDefault();
    if (!(form instanceof HTMLFormElement)) return;
    if (form.id === "question-form") submitAnswers(form);
    else if (form.id === "comment-form") addComment(form);
    else if (form.id === "message-form") submitMessage(form);
  });

  // Typing an own answer picks "Other".
  document.addEventListener("input", (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || !input.classList.contains("other-text")) return;
    const fieldset = input.closest("fieldset.question");
    const other = fieldset && fieldset.querySelector("[data-other]");
    if (other && input.value.trim() !== "") other.checked = true;
  });

  document.addEventListener("selectionchange", onSelectionChange);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && !state.stopped) pollNow();
  });

  const announcer = document.createElement("p");
  announcer.id = "announcer";
  announcer.className = "visually-hidden";
  announcer.setAttribute("aria-live", "polite");
  body.append(announcer);

  enableControls(document);
  renderComments();
  scrollTranscriptToEnd(document);
  loadDiffs();
  tick();
})();
`;
