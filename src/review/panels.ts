import {
  DECISION_LABELS,
  hiddenCharactersIn,
  type LastTestRun,
  type PlanFile,
  personText,
  readableText,
  type Suggestion,
  testRunSentence,
} from "../protocol/index.ts";
import { type ChangesView, renderChanges } from "./changes.ts";
import type { GroupView } from "./group-view.ts";
import { exactTextAttribute } from "./hidden-marks.ts";
import { html, type SafeHtml } from "./html.ts";
import type { TranscriptEntry } from "./transcript.ts";
import type { DecisionView, OutcomeView, QuestionView } from "./view.ts";

/**
 * The review page's side panels. Each one is a region (`data-region`) the browser script may
 * swap for a fresher server render; a region with `data-key` is kept as long as its key is the
 * same, so what the reader typed into it survives a refresh. Controls start disabled inside a
 * `data-needs-script` fieldset: without the script nothing could be sent, and a dead button is
 * worse than an honest one.
 */

/** Shown in the feedback box when the plan is too large to approve. */
export const SHORTEN_REQUEST =
  "The plan is too large to review in full. Please shorten it: keep the context, the files to change and the steps; drop repeated detail.";

/** The transcript shows this many of the latest entries; earlier ones are counted, not shown. */
export const TRANSCRIPT_MAX_ENTRIES = 300;

/**
 * The other plans of a best-of-N group: a link to each one's review page, its phase, and how
 * it came out; and the link to the side-by-side comparison. Hidden when the session is in none.
 */
export function groupPanel(view: GroupView | null): SafeHtml {
  if (!view) return html`<section data-region="group" hidden></section>`;
  const items = view.members.map(
    (m) => html`<li class="group-member${m.self ? " group-self" : ""}">
${m.self ? html`<span class="group-title" aria-current="page">${m.title}</span> <span class="chip">this plan</span>` : html`<a class="group-title" href="${m.reviewUrl}" data-sibling="${m.id}">${m.title}</a>`}
<span class="group-meta">${m.planner}${m.variant ? ` · ${m.variant}` : ""} · ${m.phaseLabel}${m.cost ? ` · ${m.cost}` : ""}</span>
${m.verdict ? html`<span class="verdict verdict-${m.verdict}">${m.verdict === "chosen" ? "chosen" : "superseded"}</span>` : ""}
</li>`,
  );
  const total = view.members.length;
  return html`<section data-region="group" class="panel" aria-labelledby="group-heading">
<h2 id="group-heading">Plans in this group</h2>
<p class="hint">${view.ready} of ${total} ${total === 1 ? "plan" : "plans"} ready. Deciding one (approve, or send to terminal) archives the others.</p>
<ol class="group-members">${items}</ol>
<p><a href="${view.compareUrl}">Compare the plans side by side</a></p>
</section>`;
}

export function questionPanel(view: QuestionView | null): SafeHtml {
  if (!view) return html`<section data-region="question" data-key="" hidden></section>`;
  if (!view.valid) {
    return html`<section data-region="question" data-key="${view.toolUseId}" class="panel panel-attention" aria-labelledby="question-heading">
<h2 id="question-heading">The planner has a question</h2>
<p>The question could not be displayed: the planner sent it in a form this page does not understand. Use “Message to the planner” once it continues, or stop the session.</p>
</section>`;
  }
  const questions = view.questions.map((q, qi) => {
    const name = `q${qi}`;
    const type = q.multiSelect ? "checkbox" : "radio";
    const options = q.options.map(
      (o, oi) => html`<div class="option">
<input type="${type}" name="${name}" id="${name}-o${oi}" value="${exactTextAttribute(o.label)}">
<label for="${name}-o${oi}">${o.label}${o.description ? html`<span class="option-description">${o.description}</span>` : ""}</label>
</div>`,
    );
    // The question and option texts the script sends back are JSON (hidden-marks.ts): the
    // answer is keyed by the exact question text, which the page shows with visible marks.
    return html`<fieldset class="question" data-question="${exactTextAttribute(q.question)}" data-multi="${q.multiSelect ? "true" : "false"}">
<legend>${q.header ? html`<span class="chip">${q.header}</span> ` : ""}${q.question}</legend>
${q.multiSelect ? html`<p class="hint">Choose one or more.</p>` : ""}
${options}
<div class="option option-other">
<input type="${type}" name="${name}" id="${name}-other" value="" data-other>
<label for="${name}-other">Other</label>
<label class="visually-hidden" for="${name}-other-text">Your own answer to: ${q.question}</label>
<input type="text" id="${name}-other-text" class="other-text" data-other-text="${name}" maxlength="10000" placeholder="Your own answer">
</div>
</fieldset>`;
  });
  return html`<section data-region="question" data-key="${view.toolUseId}" class="panel panel-attention" aria-labelledby="question-heading">
<h2 id="question-heading">The planner has ${view.questions.length === 1 ? "a question" : "questions"}</h2>
<form id="question-form" data-tool-use-id="${view.toolUseId}" novalidate>
<fieldset class="bare" data-needs-script disabled>
${questions}
<button type="submit" class="primary">Send ${view.questions.length === 1 ? "answer" : "answers"}</button>
<p class="form-error" role="alert" data-form-error></p>
</fieldset>
</form>
</section>`;
}

export function decisionPanel(view: DecisionView | null, plan: PlanFile | null): SafeHtml {
  if (!view) return html`<section data-region="decision" data-key="" hidden></section>`;
  // Offered actions first, then the sentences that explain what is not offered. The teleport
  // button and its explanation are both rendered: the script shows one of them as terminals
  // start and stop polling while the page is open.
  // A plan that needs someone else's approval offers this reader neither, and says why once.
  // On a phone `.actions` is a bar fixed to the bottom of the screen (styles.ts): the same
  // buttons of this one form, so nothing can be sent twice, with a link to the rest of it.
  const needsApproval = view.approvalNeeded;
  const approveButton =
    view.approve.offered && !view.tooLarge
      ? html`<button type="button" class="primary" data-action="approve">${DECISION_LABELS.approve}</button>`
      : "";
  const approveReason =
    view.approve.offered || view.tooLarge || needsApproval !== null
      ? ""
      : html`<p class="unavailable" id="approve-reason"><strong>Run in the cloud is not offered.</strong> ${view.approve.reason}</p>`;
  const teleportButton =
    view.tooLarge || needsApproval !== null
      ? ""
      : html`<button type="button" class="primary" data-action="teleport" data-teleport-offer ${view.teleport.offered ? "" : html`hidden`}>${DECISION_LABELS.teleport}</button>`;
  const teleportReason = view.tooLarge
    ? ""
    : needsApproval !== null
      ? html`<p class="unavailable" data-approval-reason><strong>Approval is not yours to give.</strong> ${needsApproval}</p>`
      : html`<p class="unavailable" data-teleport-reason ${view.teleport.offered ? html`hidden` : ""}><strong>Send to terminal is not offered.</strong> ${view.noTerminalReason}</p>`;
  // The parser drops one newline right after <textarea>: emit one, so a plan that starts with
  // a blank line comes back unchanged (and is not mistaken for an edit).
  const editor =
    view.tooLarge || needsApproval !== null
      ? ""
      : html`<details class="plan-editor">
<summary>Edit the plan before approving</summary>
<label for="plan-editor">The plan (markdown)</label>
<textarea id="plan-editor" rows="18" spellcheck="false" aria-describedby="plan-editor-hint">
${readableText(plan?.content ?? "")}</textarea>
<p class="hint" id="plan-editor-hint">If you change the plan here, the edited plan is the one approved, and it is marked as edited by you.${editorHiddenHint(plan)}</p>
</details>`;
  return html`<section data-region="decision" data-key="${view.toolUseId}" class="panel panel-attention" aria-labelledby="decision-heading">
<h2 id="decision-heading">Your decision</h2>
<form id="decision-form" data-tool-use-id="${view.toolUseId}" novalidate>
<fieldset class="bare" data-needs-script disabled>
${view.tooLarge && !view.approve.offered ? html`<p class="warning" role="note">${view.approve.reason}</p>` : ""}
${editor}
<div class="actions">
${approveButton}
${teleportButton}
<a class="decision-jump" href="#decision-heading">${editor === "" ? "Keep planning" : "Edit or keep planning"}</a>
</div>
${approveReason}
${teleportReason}
<h3>Keep planning</h3>
<label for="feedback">What should change?</label>
<textarea id="feedback" rows="4" maxlength="100000" aria-describedby="feedback-hint">${view.tooLarge ? SHORTEN_REQUEST : ""}</textarea>
<p class="hint" id="feedback-hint">Write feedback, add comments on passages of the plan, or both. They are sent to the planner, which revises the plan.</p>
<button type="button" data-action="reject">${DECISION_LABELS.reject}</button>
<p class="form-error" role="alert" data-form-error></p>
</fieldset>
</form>
</section>`;
}

/**
 * What the editor does with hidden characters: it holds the plan as a reader sees it
 * (`readableText`, each one a mark, as the plan above it and as a teleport hands it on), and an
 * edit sends what it shows. Restoring the characters from the marks would hand back what the
 * reader never saw, and could not tell a mark the planner typed as text from one that stood
 * for a hidden character; so an edited plan keeps the marks as visible text. Approving without
 * editing keeps the planner's text in the session as written, and every hand-off shows it
 * with the same marks.
 */
function editorHiddenHint(plan: PlanFile | null): string {
  const count = hiddenCharactersIn(plan?.content ?? "").length;
  if (count === 0) return "";
  const characters = count === 1 ? "1 hidden character" : `${count} hidden characters`;
  return ` The plan text holds ${characters}; the editor shows each as a mark such as ⟨U+202E⟩, as the plan is handed on. An edited plan is approved as the editor shows it: the marks stay as visible text. Approve without editing to keep the planner's text in the session exactly as written.`;
}

/**
 * Inline comments. For the decider they are kept in the page and sent with “Keep planning”; on
 * the share page (`viewOnly`) each one is sent at once, as a suggestion for the decider.
 */
export function commentsPanel(offered: boolean, viewOnly = false): SafeHtml {
  const hint = viewOnly
    ? "Select a passage of the plan and choose “Comment on selection”, or type a quote yourself. Your comment is sent at once, as a suggestion the person deciding sees."
    : "Select a passage of the plan and choose “Comment on selection”, or type a quote yourself. Comments are sent with “Keep planning”.";
  return html`<section id="comments" data-region="comments" data-key="${offered ? (viewOnly ? "suggest" : "open") : ""}" class="panel" aria-labelledby="comments-heading" ${offered ? "" : html`hidden`}>
<h2 id="comments-heading">${viewOnly ? "Suggest a change" : "Comments on the plan"}</h2>
<p class="hint">${hint}</p>
<form id="comment-form" novalidate ${viewOnly ? html`data-suggest` : ""}>
<fieldset class="bare" data-needs-script disabled>
<button type="button" data-action="quote-selection" disabled>Comment on selection</button>
<label for="comment-quote">Quoted passage</label>
<textarea id="comment-quote" rows="2" maxlength="10000"></textarea>
<label for="comment-text">Your note</label>
<textarea id="comment-text" rows="3" maxlength="10000"></textarea>
<button type="submit">${viewOnly ? "Send suggestion" : "Add comment"}</button>
<p class="form-error" role="alert" data-form-error></p>
</fieldset>
</form>
${
  viewOnly
    ? ""
    : html`<h3 id="comment-list-heading">Your comments (<span id="comment-count">0</span>)</h3>
<ul id="comment-list" class="comment-list" aria-labelledby="comment-list-heading"></ul>`
}
</section>`;
}

/**
 * The comments readers left as suggestions (team review), with who left each. The decider may
 * add one to their own comments, which “Keep planning” then sends to the planner.
 */
export function suggestionsPanel(suggestions: readonly Suggestion[], canAdopt: boolean): SafeHtml {
  if (suggestions.length === 0) {
    return html`<section data-region="suggestions" data-key="0" hidden></section>`;
  }
  const items = suggestions.map(
    (s) => html`<li class="suggestion">
<blockquote>${s.quote}</blockquote>
<p>${s.text}</p>
<p class="hint">from ${personText(s.from)}</p>
${canAdopt ? html`<button type="button" data-action="adopt-suggestion" data-quote="${s.quote}" data-text="${s.text}">Add to my comments</button>` : ""}
</li>`,
  );
  return html`<section data-region="suggestions" data-key="${String(suggestions.length)}:${canAdopt ? "adopt" : ""}" class="panel" aria-labelledby="suggestions-heading">
<h2 id="suggestions-heading">Suggestions from viewers (${suggestions.length})</h2>
${canAdopt ? html`<p class="hint">Add a suggestion to your comments to send it to the planner with “Keep planning”.</p>` : ""}
<ol class="comment-list suggestion-list">${items}</ol>
</section>`;
}

export function messagePanel(canMessage: boolean): SafeHtml {
  if (!canMessage) return html`<section data-region="message" data-key="" hidden></section>`;
  return html`<section data-region="message" data-key="open" class="panel" aria-labelledby="message-heading">
<h2 id="message-heading">Message to the planner</h2>
<form id="message-form" novalidate>
<fieldset class="bare" data-needs-script disabled>
<label for="message-text">Your message</label>
<textarea id="message-text" rows="3" maxlength="100000"></textarea>
<button type="submit">Send message</button>
<p class="form-error" role="alert" data-form-error></p>
</fieldset>
</form>
</section>`;
}

export function stopPanel(canStop: boolean): SafeHtml {
  if (!canStop) return html`<section data-region="stop" data-key="" hidden></section>`;
  return html`<section data-region="stop" data-key="open" class="panel panel-quiet" aria-labelledby="stop-heading">
<h2 id="stop-heading">Stop</h2>
<fieldset class="bare" data-needs-script disabled>
<button type="button" class="danger" data-action="stop">${DECISION_LABELS.stop}</button>
<div data-stop-confirm hidden>
<p>Stop this session? The planner stops, the session is archived, and the plan is not carried out anywhere.</p>
<button type="button" class="danger" data-action="stop-confirm">Stop now</button>
<button type="button" data-action="stop-cancel">Cancel</button>
</div>
<p class="form-error" role="alert" data-form-error></p>
</fieldset>
</section>`;
}

/**
 * How the session came out. After a remote execution the changes are rendered here when the
 * loader read them (with the plan adherence); otherwise the script fetches and draws them.
 */
export function outcomePanel(
  view: OutcomeView | null,
  sessionId: string,
  changes: { view: ChangesView; hasPlan: boolean } | null = null,
  testRun: LastTestRun | null = null,
): SafeHtml {
  if (!view) return html`<section data-region="outcome" hidden></section>`;
  const diff = changes
    ? html`<div class="changes">${renderChanges(changes.view, changes.hasPlan)}</div>`
    : html`<div data-diff-target><p class="hint">Loading the changes…</p></div>
<noscript><p>Run <code>planport pull ${sessionId}</code> to see the changes.</p></noscript>`;
  const shown = view.showChanges
    ? html`<pre class="command"><code>planport pull ${sessionId} --apply</code></pre>
<h3>Changes</h3>
${diff}`
    : "";
  return html`<section data-region="outcome" class="panel panel-outcome outcome-${view.kind}" aria-labelledby="outcome-heading">
<h2 id="outcome-heading">${view.title}</h2>
<p>${view.text}</p>
${view.detail ? html`<p class="detail">${view.detail}</p>` : ""}
${testRun ? html`<p class="test-run test-run-${testRun.exit_code === 0 && !testRun.timed_out ? "passed" : "failed"}" data-test-run>Last test run: ${readableText(testRunSentence(testRun))}</p>` : ""}
${shown}
</section>`;
}

export function transcriptPanel(entries: readonly TranscriptEntry[]): SafeHtml {
  const shown = entries.slice(-TRANSCRIPT_MAX_ENTRIES);
  const omitted = entries.length - shown.length;
  const items = shown.map(
    (e) => html`<li class="entry entry-${e.kind} tone-${e.tone}">
<span class="entry-who">${whoLabel(e)}</span>
<p class="entry-text">${e.text}</p>
${e.detail ? html`<p class="entry-detail">${e.detail}</p>` : ""}
</li>`,
  );
  return html`<section data-region="transcript" class="panel" aria-labelledby="transcript-heading">
<h2 id="transcript-heading">Transcript</h2>
${omitted > 0 ? html`<p class="hint">${omitted} earlier steps are not shown.</p>` : ""}
${shown.length === 0 ? html`<p class="hint">Nothing has happened yet.</p>` : html`<ol class="transcript" tabindex="0" aria-label="Session transcript">${items}</ol>`}
</section>`;
}

function whoLabel(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case "assistant":
      return "Planner";
    case "tool":
      return entry.tone === "denied" ? "Tool (denied)" : "Tool";
    case "user":
      return "You";
    case "system":
      return "Session";
    case "result":
      return "End";
  }
}
