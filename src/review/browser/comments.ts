import { readableText } from "../../protocol/readable-text.ts";
import { ApiError, callApi } from "./api.ts";
import { announce, showError } from "./feedback.ts";
import { type PlanComment, state, storageKey } from "./page-state.ts";
import { setVisibleText } from "./visible-text.ts";

/**
 * Inline comments: a passage selected in the rendered plan (or typed) plus a note; kept in
 * memory and sessionStorage, drawn as text (visible-text.ts), sent with "Keep planning".
 */

const COMMENT_MAX_CHARS = 10_000;

/** The comments this tab kept for the session (a reload keeps them). */
export function loadComments(): PlanComment[] {
  try {
    const list: unknown = JSON.parse(sessionStorage.getItem(storageKey) || "[]");
    return Array.isArray(list)
      ? list.filter(
          (c): c is PlanComment => c && typeof c.quote === "string" && typeof c.text === "string",
        )
      : [];
  } catch {
    return [];
  }
}

export function saveComments(): void {
  try {
    sessionStorage.setItem(storageKey, JSON.stringify(state.comments));
  } catch {
    // Storage full or disabled: the comments still live in this page.
  }
  renderComments();
}

export function renderComments(): void {
  const list = document.getElementById("comment-list");
  const count = document.getElementById("comment-count");
  if (!list) return;
  list.replaceChildren(
    ...state.comments.map((comment, index) => {
      const item = document.createElement("li");
      const quote = document.createElement("blockquote");
      setVisibleText(quote, comment.quote);
      const note = document.createElement("p");
      setVisibleText(note, comment.text);
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "Remove";
      remove.setAttribute("data-action", "remove-comment");
      remove.setAttribute("data-index", String(index));
      remove.setAttribute(
        "aria-label",
        `Remove comment on: ${readableText(comment.quote.slice(0, 80))}`,
      );
      item.append(quote, note, remove);
      return item;
    }),
  );
  if (count) count.textContent = String(state.comments.length);
}

/**
 * Keeps the comment the form holds, or on the share page sends it as a suggestion and then
 * redraws the page with `refresh` (live.ts `refreshPage`, passed in so this module stays below
 * the live updates that redraw it).
 */
export function addComment(form: HTMLFormElement, refresh: () => Promise<void>): void {
  const errorEl = form.querySelector<HTMLElement>("[data-form-error]");
  const quoteEl = document.getElementById("comment-quote") as HTMLTextAreaElement;
  const noteEl = document.getElementById("comment-text") as HTMLTextAreaElement;
  const quote = quoteEl.value.trim();
  const text = noteEl.value.trim();
  if (!quote) {
    showError(
      errorEl,
      "Select a passage of the plan (or type the passage you mean) first.",
      quoteEl,
    );
    return;
  }
  if (!text) {
    showError(errorEl, "Write a note for this passage.", noteEl);
    return;
  }
  if (quote.length > COMMENT_MAX_CHARS || text.length > COMMENT_MAX_CHARS) {
    showError(
      errorEl,
      `A quote or a note can have at most ${COMMENT_MAX_CHARS} characters.`,
      quoteEl,
    );
    return;
  }
  if (errorEl) errorEl.textContent = "";
  if (form.hasAttribute("data-suggest")) {
    void sendSuggestion(form, errorEl, { quote, text }, quoteEl, noteEl, refresh);
    return;
  }
  state.comments.push({ quote, text });
  saveComments();
  quoteEl.value = "";
  noteEl.value = "";
  state.lastSelection = "";
  updateSelectionControls();
  announce(`Comment added. ${state.comments.length} in total; they are sent with “Keep planning”.`);
  quoteEl.focus();
}

/**
 * The share page: sends one comment as a suggestion for the decider (team review), then
 * refreshes the page so it appears among the suggestions.
 */
async function sendSuggestion(
  form: HTMLFormElement,
  errorEl: HTMLElement | null,
  comment: PlanComment,
  quoteEl: HTMLTextAreaElement,
  noteEl: HTMLTextAreaElement,
  refresh: () => Promise<void>,
): Promise<void> {
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  if (button) button.disabled = true;
  try {
    await callApi("POST", "/comments", comment);
    quoteEl.value = "";
    noteEl.value = "";
    state.lastSelection = "";
    updateSelectionControls();
    announce("Suggestion sent. The person deciding sees it beside the plan.");
    await refresh().catch(() => {
      state.needsRefresh = true;
    });
  } catch (err) {
    showError(errorEl, err instanceof ApiError ? `${err.message} (${err.code})` : String(err));
  } finally {
    if (button) button.disabled = false;
  }
}

/** The decider takes a viewer's suggestion into their own comments (sent with "Keep planning"). */
export function adoptSuggestion(button: HTMLElement): void {
  const quote = button.getAttribute("data-quote") ?? "";
  const text = button.getAttribute("data-text") ?? "";
  if (!quote || !text) return;
  if (!state.comments.some((c) => c.quote === quote && c.text === text)) {
    state.comments.push({ quote, text });
    saveComments();
  }
  announce(
    `Suggestion added to your comments. ${state.comments.length} in total; they are sent with “Keep planning”.`,
  );
}

export function removeComment(index: number): void {
  state.comments.splice(index, 1);
  saveComments();
  announce(`Comment removed. ${state.comments.length} left.`);
  const next =
    document.querySelector<HTMLElement>('[data-action="remove-comment"]') ??
    document.getElementById("comment-quote");
  if (next) next.focus();
}

function selectedPlanText(): string {
  const selection = document.getSelection();
  const plan = document.getElementById("plan-body");
  if (!selection || selection.isCollapsed || !plan || selection.rangeCount === 0) return "";
  if (!plan.contains(selection.anchorNode) || !plan.contains(selection.focusNode)) return "";
  return selection.toString().trim().slice(0, COMMENT_MAX_CHARS);
}

export function updateSelectionControls(): void {
  const buttons = document.querySelectorAll<HTMLButtonElement>(
    '#comments [data-action="quote-selection"]',
  );
  for (const button of Array.from(buttons)) button.disabled = state.lastSelection === "";
}

export function onSelectionChange(): void {
  const text = selectedPlanText();
  const floating = document.querySelector<HTMLElement>(".floating-comment");
  if (text) state.lastSelection = text;
  updateSelectionControls();
  if (!floating) return;
  const comments = document.getElementById("comments");
  const selection = document.getSelection();
  if (!text || !comments || comments.hidden || !selection) {
    floating.hidden = true;
    return;
  }
  const rect = selection.getRangeAt(0).getBoundingClientRect();
  floating.style.top = `${Math.round(rect.bottom + window.scrollY + 6)}px`;
  floating.style.left = `${Math.round(Math.max(8, rect.left + window.scrollX))}px`;
  floating.hidden = false;
}

export function quoteSelection(): void {
  const quoteEl = document.getElementById("comment-quote") as HTMLTextAreaElement | null;
  const noteEl = document.getElementById("comment-text");
  const floating = document.querySelector<HTMLElement>(".floating-comment");
  if (floating) floating.hidden = true;
  if (!quoteEl || !noteEl) return;
  if (!state.lastSelection) {
    const form = document.getElementById("comment-form");
    showError(
      form?.querySelector<HTMLElement>("[data-form-error]") ?? null,
      "Select a passage of the plan first.",
      quoteEl,
    );
    return;
  }
  quoteEl.value = state.lastSelection;
  noteEl.focus();
}
