import {
  MAX_APPROVABLE_PLAN_CHARS,
  type PlanFile,
  personText,
  type Session,
} from "../protocol/index.ts";
import { changesView } from "./changes.ts";
import { groupView } from "./group-view.ts";
import { hiddenNote } from "./hidden-marks.ts";
import { historyRegion } from "./history.ts";
import { html, PAGE_HEAD_META, rawElementText, type SafeHtml } from "./html.ts";
import { type OutlineEntry, type RenderedPlan, renderPlanMarkdown } from "./markdown.ts";
import { type NextStep, nextSteps } from "./next-steps.ts";
import {
  commentsPanel,
  decisionPanel,
  groupPanel,
  messagePanel,
  outcomePanel,
  questionPanel,
  stopPanel,
  suggestionsPanel,
  transcriptPanel,
} from "./panels.ts";
import { type RevisionQuery, revisionEntries } from "./revisions.ts";
import { REVIEW_SCRIPT } from "./script/index.ts";
import { REVIEW_STYLES } from "./styles.ts";
import { sentenceHtml } from "./times.ts";
import { transcriptEntries } from "./transcript.ts";
import { costText, plannerLabel, type ReviewData, type ReviewView, reviewView } from "./view.ts";

/**
 * The review page as one HTML document: readable without JavaScript (the plan, the outline,
 * the status and the transcript are all rendered here), and made interactive by one small
 * script that carries this response's nonce.
 */

export interface ReviewPageInput extends RegionsInput {
  /** This response's CSP nonce (see `newNonce`). */
  nonce: string;
}

/** What the regions are rendered from: the loaded data, the time, the revisions asked for. */
export interface RegionsInput extends ReviewData {
  /** Milliseconds since the epoch; decides whether a terminal counts as polling. */
  now: number;
  /** The revision shown or the two compared (`rev`, `diff`, `from`/`to`); none when absent. */
  revisionQuery?: RevisionQuery;
}

const NO_REVISION_QUERY: RevisionQuery = { shown: null, compare: null, problem: null };

/** Outline entries beyond this many are left out (the plan itself still has them all). */
const OUTLINE_MAX_ENTRIES = 200;

/** The pieces of the page the browser script may swap, rendered once for either document. */
interface RenderedRegions {
  view: ReviewView;
  title: string;
  bodyAttrs: SafeHtml;
  status: SafeHtml;
  outline: SafeHtml;
  plan: SafeHtml;
  history: SafeHtml;
  outcome: SafeHtml;
  panels: SafeHtml;
}

function renderRegions(input: RegionsInput): RenderedRegions {
  const { session, plan, events } = input;
  const view = reviewView(input, input.now);
  const rendered = plan
    ? renderPlanMarkdown(plan.content.slice(0, MAX_APPROVABLE_PLAN_CHARS))
    : null;
  const lastEventId = events.at(-1)?.id ?? "";
  return {
    view,
    title: pageTitle(view, session),
    bodyAttrs: html`data-session-id="${session.id}" data-cursor="${lastEventId}" data-state="${view.stateKey}"${view.viewOnly ? html` data-view-only="true"` : ""} data-suggestions="${String(input.suggestions?.length ?? 0)}"`,
    // What happens next is the decider's business: the share page lists none of it.
    status: statusRegion(
      view,
      session,
      view.viewOnly ? [] : nextSteps(session, input.deadlines, input.now),
    ),
    outline: outlineRegion(rendered?.outline ?? []),
    plan: planRegion(
      plan,
      rendered,
      session.phase === "running" || session.phase === "needs_input",
    ),
    history: historyRegion({
      entries: revisionEntries(input.revisions ?? [], input.decisions ?? []),
      query: input.revisionQuery ?? NO_REVISION_QUERY,
      texts: input.revisionTexts ?? [],
      reviewUrl: session.review_url,
      current: plan?.revision ?? null,
      now: input.now,
    }),
    outcome: outcomePanel(
      view.outcome,
      session.id,
      view.outcome?.showChanges && typeof input.changes === "string"
        ? { view: changesView(input.changes, plan?.content ?? ""), hasPlan: plan !== null }
        : null,
      session.last_test_run ?? null,
    ),
    panels: html`${groupPanel(groupView(input))}
${questionPanel(view.question)}
${decisionPanel(view.decision, plan)}
${commentsPanel(view.canComment, view.viewOnly)}
${suggestionsPanel(input.suggestions ?? [], view.canComment && !view.viewOnly)}
${messagePanel(view.canMessage)}
${stopPanel(view.canStop)}
${transcriptPanel(transcriptEntries(events, input.decisions))}`,
  };
}

/**
 * Renders the whole review page. Pure: the same input gives the same page. The route sends it
 * through `showHiddenCharactersInHtml` (hidden-marks.ts), as every review document.
 *
 * @example
 * const page = renderReviewPage({ session, plan, events, nonce: newNonce(), now: Date.now() });
 * return new Response(showHiddenCharactersInHtml(page), { headers: reviewHeaders(nonce) });
 */
export function renderReviewPage(input: ReviewPageInput): string {
  const { session, nonce } = input;
  const r = renderRegions(input);
  return html`<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD_META}
<title>${r.title}</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${rawElementText(REVIEW_STYLES)}</style>
</head>
<body ${r.bodyAttrs}>
<a class="skip-link" href="#plan-body">Skip to the plan</a>
<header class="top">
<p class="brand">planport · plan review</p>
<h1>${session.title}</h1>
<div class="status" role="status" aria-live="polite">${r.status}</div>
<p id="connection" class="connection" role="status" hidden></p>
</header>
<div class="layout">
${r.outline}
<main id="main" class="plan-column">
${r.outcome}
${r.plan}
${r.history}
</main>
<aside class="panels" aria-label="Review actions and transcript">
${r.panels}
</aside>
</div>
<noscript><p class="noscript">This page needs JavaScript to ${r.view.viewOnly ? "comment" : "answer questions, comment and decide"}. The plan above is complete without it.</p></noscript>
<button type="button" class="floating-comment" data-action="quote-selection" hidden>Comment on selection</button>
<script nonce="${nonce}">${rawElementText(REVIEW_SCRIPT)}</script>
</body>
</html>
`.value;
}

/**
 * Only the swappable regions, as a bare document with no style and no script: what the page
 * script fetches (`?part=regions`) to refresh itself after the session changed. Parsing a full
 * page would also parse its `<style>`, whose nonce is not the open page's (a CSP violation).
 *
 * @example
 * renderReviewRegions({ session, plan, events, now: Date.now() })
 */
export function renderReviewRegions(input: RegionsInput): string {
  const r = renderRegions(input);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${r.title}</title>
</head>
<body ${r.bodyAttrs}>
${r.status}
${r.outline}
${r.outcome}
${r.plan}
${r.history}
${r.panels}
</body>
</html>
`.value;
}

function pageTitle(view: ReviewView, session: Session): string {
  return `${capitalise(view.phaseLabel)} · ${session.title} — planport`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function statusRegion(view: ReviewView, session: Session, steps: readonly NextStep[]): SafeHtml {
  const cost = costText(session.usage.cost_usd);
  return html`<div data-region="status">
<p class="status-line"><span class="phase phase-${session.phase}">${view.phaseLabel}</span>
<span class="planner">${plannerLabel(session.planner)}</span>
${session.variant ? html`<span class="variant">${session.variant} variant</span>` : ""}
${cost ? html`<span class="cost" title="model cost of this session so far">${cost}</span>` : ""}
${session.reject_count > 0 ? html`<span class="revisions">${session.reject_count} ${session.reject_count === 1 ? "round" : "rounds"} of feedback</span>` : ""}</p>
<p class="phase-hint">${view.phaseHint}</p>
${teamLine(session)}
${steps.length > 0 ? html`<ul class="next-steps" aria-label="What happens next">${steps.map((st) => html`<li class="next-step next-${st.tone}">${sentenceHtml(st.sentence)}</li>`)}</ul>` : ""}
</div>`;
}

/** Who must approve, and who decided (team review); nothing for a session without either. */
function teamLine(session: Session): SafeHtml | string {
  const approvers = session.approvers ?? [];
  const parts = [
    approvers.length > 0 ? `Needs the approval of ${approvers.join(" or ")}.` : "",
    session.decided_by ? `Decided by ${personText(session.decided_by)}.` : "",
  ].filter((p) => p !== "");
  return parts.length === 0 ? "" : html`<p class="team-line" data-team>${parts.join(" ")}</p>`;
}

function outlineRegion(outline: readonly OutlineEntry[]): SafeHtml {
  const shown = outline.slice(0, OUTLINE_MAX_ENTRIES);
  const minLevel = Math.min(...shown.map((e) => e.level));
  const items = shown.map(
    (e) =>
      html`<li class="outline-level-${Math.min(e.level - minLevel + 1, 4)}"><a href="#${e.id}">${e.text}</a></li>`,
  );
  return html`<nav class="outline" data-region="outline" aria-labelledby="outline-heading">
<h2 id="outline-heading">Outline</h2>
${shown.length === 0 ? html`<p class="hint">The plan has no headings yet.</p>` : html`<ol>${items}</ol>`}
</nav>`;
}

function planRegion(
  plan: PlanFile | null,
  rendered: RenderedPlan | null,
  planning: boolean,
): SafeHtml {
  if (!plan || !rendered) {
    const empty = planning
      ? "No plan yet. The planner writes it while it researches; it appears here by itself."
      : "The planner wrote no plan file in this session.";
    return html`<section class="plan" data-region="plan" aria-labelledby="plan-heading">
<h2 id="plan-heading">Plan</h2>
<article id="plan-body" class="plan-body" tabindex="-1"><p class="hint">${empty}</p></article>
</section>`;
  }
  const tooLarge = plan.content.length > MAX_APPROVABLE_PLAN_CHARS;
  return html`<section class="plan" data-region="plan" aria-labelledby="plan-heading">
<div class="plan-meta">
<h2 id="plan-heading">Plan</h2>
<p><span>revision ${plan.revision}</span>${plan.edited_by_user ? html` · <span class="edited">edited by you</span>` : ""} · <code>${plan.path}</code></p>
</div>
${tooLarge ? html`<p class="warning" role="note">The plan is too large to review in full: it has ${plan.content.length.toLocaleString("en-US")} characters, and only the first ${MAX_APPROVABLE_PLAN_CHARS.toLocaleString("en-US")} are shown.</p>` : ""}
${hiddenNote(rendered.hiddenCharacters)}
<article id="plan-body" class="plan-body" tabindex="-1">${rendered.html}</article>
</section>`;
}
