/**
 * Browser script part: inline comments. A passage selected in the rendered plan (or typed) plus
 * a note; kept in memory and sessionStorage, drawn with textContent, sent with "Keep planning".
 */
// biome-ignore lint/complexity/noUselessStringRaw: browser code, so a later regex keeps its backslashes.
export const COMMENTS_SCRIPT = String.raw`

  function loadComments() {
    try {
      const list = JSON.parse(sessionStorage.getItem(storageKey) || "[]");
      return Array.isArray(list)
        ? list.filter((c) => c && typeof c.quote === "string" && typeof c.text === "string")
        : [];
    } catch {
      return [];
    }
  }

  function saveComments() {
    try {
      sessionStorage.setItem(storageKey, JSON.stringify(state.comments));
    } catch {
      // Storage full or disabled: the comments still live in this page.
    }
    renderComments();
  }

  function renderComments() {
    const list = document.getElementById("comment-list");
    const count = document.getElementById("comment-count");
    if (!list) return;
    list.replaceChildren(
      ...state.comments.map((comment, index) => {
        const item = document.createElement("li");
        const quote = document.createElement("blockquote");
        quote.textContent = comment.quote;
        const note = document.createElement("p");
        note.textContent = comment.text;
        const remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "Remove";
        remove.setAttribute("data-action", "remove-comment");
        remove.setAttribute("data-index", String(index));
        remove.setAttribute("aria-label", "Remove comment on: " + comment.quote.slice(0, 80));
        item.append(quote, note, remove);
        return item;
      }),
    );
    if (count) count.textContent = String(state.comments.length);
  }

  function addComment(form) {
    const errorEl = form.querySelector("[data-form-error]");
    const quoteEl = document.getElementById("comment-quote");
    const noteEl = document.getElementById("comment-text");
    const quote = quoteEl.value.trim();
    const text = noteEl.value.trim();
    if (!quote) return showError(errorEl, "Select a passage of the plan (or type the passage you mean) first.", quoteEl);
    if (!text) return showError(errorEl, "Write a note for this passage.", noteEl);
    if (quote.length > COMMENT_MAX_CHARS || text.length > COMMENT_MAX_CHARS) {
      return showError(errorEl, "A quote or a note can have at most " + COMMENT_MAX_CHARS + " characters.", quoteEl);
    }
    errorEl.textContent = "";
    state.comments.push({ quote, text });
    saveComments();
    quoteEl.value = "";
    noteEl.value = "";
    state.lastSelection = "";
    updateSelectionControls();
    announce("Comment added. " + state.comments.length + " in total; they are sent with “Keep planning”.");
    quoteEl.focus();
  }

  function selectedPlanText() {
    const selection = document.getSelection();
    const plan = document.getElementById("plan-body");
    if (!selection || selection.isCollapsed || !plan || selection.rangeCount === 0) return "";
    if (!plan.contains(selection.anchorNode) || !plan.contains(selection.focusNode)) return "";
    return selection.toString().trim().slice(0, COMMENT_MAX_CHARS);
  }

  function updateSelectionControls() {
    for (const button of Array.from(document.querySelectorAll('#comments [data-action="quote-selection"]'))) {
      button.disabled = state.lastSelection === "";
    }
  }

  function onSelectionChange() {
    const text = selectedPlanText();
    const floating = document.querySelector(".floating-comment");
    if (text) state.lastSelection = text;
    updateSelectionControls();
    if (!floating) return;
    const comments = document.getElementById("comments");
    if (!text || !comments || comments.hidden) {
      floating.hidden = true;
      return;
    }
    const rect = document.getSelection().getRangeAt(0).getBoundingClientRect();
    floating.style.top = Math.round(rect.bottom + window.scrollY + 6) + "px";
    floating.style.left = Math.round(Math.max(8, rect.left + window.scrollX)) + "px";
    floating.hidden = false;
  }

  function quoteSelection() {
    const quoteEl = document.getElementById("comment-quote");
    const noteEl = document.getElementById("comment-text");
    const floating = document.querySelector(".floating-comment");
    if (floating) floating.hidden = true;
    if (!quoteEl || !noteEl) return;
    if (!state.lastSelection) {
      const form = document.getElementById("comment-form");
      return showError(form && form.querySelector("[data-form-error]"), "Select a passage of the plan first.", quoteEl);
    }
    quoteEl.value = state.lastSelection;
    noteEl.focus();
  }

`;
