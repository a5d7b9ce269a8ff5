import { decide, send, setStopConfirm, submitAnswers, submitMessage } from "./actions.ts";
import {
  addComment,
  adoptSuggestion,
  loadComments,
  onSelectionChange,
  quoteSelection,
  removeComment,
  renderComments,
} from "./comments.ts";
import { renderDiagrams } from "./diagrams.ts";
import { loadDiffs } from "./diff.ts";
import { addAnnouncer, announce } from "./feedback.ts";
import { enableControls, pollNow, refreshPage, scrollTranscriptToEnd, tick } from "./live.ts";
import { showLocalTimes } from "./local-times.ts";
import { body, state } from "./page-state.ts";

/**
 * The review page's browser script: bundled into one text (src/review/script/index.ts,
 * `npm run build:review`) that the server inlines with the response's nonce.
 *
 * What it does, and the one rule it keeps: it never builds HTML from data. The server renders
 * every piece of the page; the script only
 * - polls the session and its events feed with `X-Review-Key` (every 2 s while visible) and, when
 *   anything changed, fetches the page's regions again (the review route with `part=regions`)
 *   and swaps the regions that differ — regions with an unchanged `data-key` are kept, so what
 *   the reader typed survives (live.ts);
 * - posts answers, decisions, messages and stop requests to the JSON API and shows its errors
 *   (actions.ts);
 * - keeps inline comments (quote + note) in memory and sessionStorage, drawn as text
 *   (comments.ts);
 * - draws the diff after remote execution as text, one line per element (diff.ts);
 * - writes text from data only through visible-text.ts, which shows hidden characters as
 *   marks, as the server's page does;
 * - draws ```mermaid blocks in sandboxed frames, keeping the code block until one succeeds
 *   (diagrams.ts);
 * - re-checks every poll whether a terminal is still polling (teleport offered or explained);
 * - shows the page's times in the reader's time zone (local-times.ts).
 */

document.addEventListener("click", (event) => {
  const target =
    event.target instanceof Element
      ? event.target.closest<HTMLButtonElement>("[data-action]")
      : null;
  if (!target || target.disabled) return;
  switch (target.getAttribute("data-action")) {
    case "approve":
      return void decide(target, "approve");
    case "teleport":
      return void decide(target, "teleport");
    case "reject":
      return void decide(target, "reject");
    case "stop":
      return setStopConfirm(true);
    case "stop-cancel":
      return setStopConfirm(false);
    case "stop-confirm":
      return void send(target, target.closest("section"), "POST", "/archive", undefined, () =>
        announce("Session stopped."),
      );
    case "quote-selection":
      return quoteSelection();
    case "remove-comment":
      return removeComment(Number(target.getAttribute("data-index")));
    case "adopt-suggestion":
      return adoptSuggestion(target);
  }
});

// Keeps the selection alive while the floating button is clicked.
document.addEventListener("mousedown", (event) => {
  if (event.target instanceof Element && event.target.closest(".floating-comment")) {
    event.preventDefault();
  }
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  event.preventDefault();
  if (!(form instanceof HTMLFormElement)) return;
  if (form.id === "question-form") void submitAnswers(form);
  else if (form.id === "comment-form") addComment(form, refreshPage);
  else if (form.id === "message-form") void submitMessage(form);
});

// Typing an own answer picks "Other".
document.addEventListener("input", (event) => {
  const input = event.target;
  if (!(input instanceof HTMLInputElement) || !input.classList.contains("other-text")) return;
  const fieldset = input.closest("fieldset.question");
  const other = fieldset?.querySelector<HTMLInputElement>("[data-other]");
  if (other && input.value.trim() !== "") other.checked = true;
});

document.addEventListener("selectionchange", onSelectionChange);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && !state.stopped) pollNow();
});

state.comments = loadComments();
showLocalTimes(document);
addAnnouncer(body);
enableControls(document);
renderComments();
scrollTranscriptToEnd(document);
renderDiagrams(document);
void loadDiffs();
void tick();
