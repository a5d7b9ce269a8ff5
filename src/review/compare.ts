import { MAX_APPROVABLE_PLAN_CHARS } from "../protocol/index.ts";
import { type GroupMemberView, groupView } from "./group-view.ts";
import { hiddenNote } from "./hidden-marks.ts";
import { html, PAGE_HEAD_META, rawElementText, type SafeHtml } from "./html.ts";
import { renderPlanMarkdown } from "./markdown.ts";
import { REVIEW_STYLES } from "./styles.ts";
import type { ReviewData } from "./view.ts";

/**
 * The plans of a best-of-N group side by side (`/review/:id?key=…&compare=1`): one column per
 * session, each plan rendered by the same hostile-input markdown renderer as the review page,
 * with a link to that session's own review page, where it is decided. Server-rendered and
 * complete without JavaScript: the page carries no script at all, only the nonce'd stylesheet.
 */

export interface ComparePageInput extends ReviewData {
  /** This response's CSP nonce (the stylesheet's). */
  nonce: string;
}

/**
 * Renders the comparison page. Pure: the same input gives the same page. A session in no
 * group gets a page that says so, with the way back.
 *
 * @example
 * const page = renderComparePage({ ...loaded, nonce });
 * return new Response(showHiddenCharactersInHtml(page), { headers: reviewHeaders(nonce) });
 */
export function renderComparePage(input: ComparePageInput): string {
  const group = groupView(input);
  const back = input.session.review_url;
  const body = group
    ? html`<main class="compare" aria-label="Plans of group ${group.name}">
${group.members.map(memberColumn)}
</main>`
    : html`<main class="plan-column"><p class="hint">This session is not part of a group: there is nothing to compare it with.</p></main>`;
  return html`<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD_META}
<title>Compare plans · ${input.session.title} — planport</title>
<link rel="icon" href="data:,">
<style nonce="${input.nonce}">${rawElementText(REVIEW_STYLES)}</style>
</head>
<body>
<header class="top">
<p class="brand">planport · compare plans</p>
<h1>${group ? `${group.members.length} plans of group ${group.name}` : input.session.title}</h1>
<p class="phase-hint">${group ? `${group.ready} of ${group.members.length} ready. ` : ""}Open a plan's review page to decide it: approving one (or sending it to your terminal) archives the others. <a href="${back}">Back to this session's review</a></p>
</header>
${body}
</body>
</html>
`.value;
}

function memberColumn(m: GroupMemberView, index: number): SafeHtml {
  const headingId = `compare-${index + 1}`;
  const rendered =
    m.plan === null ? null : renderPlanMarkdown(m.plan.slice(0, MAX_APPROVABLE_PLAN_CHARS));
  return html`<section class="plan compare-column" aria-labelledby="${headingId}">
<div class="plan-meta">
<h2 id="${headingId}"><a href="${m.reviewUrl}" data-sibling="${m.id}">${m.title}</a>${m.self ? html` <span class="chip">this plan</span>` : ""}</h2>
<p>${m.planner}${m.variant ? ` · ${m.variant}` : ""} · ${m.phaseLabel}${m.revision > 0 ? ` · revision ${m.revision}` : ""}${m.cost ? ` · ${m.cost}` : ""}${m.verdict ? html` · <span class="verdict verdict-${m.verdict}">${m.verdict}</span>` : ""}</p>
</div>
${rendered ? hiddenNote(rendered.hiddenCharacters) : ""}
<article class="plan-body">${rendered ? rendered.html : html`<p class="hint">No plan yet.</p>`}</article>
</section>`;
}
