import type { PlanFile } from "../protocol/index.ts";
import { html, type SafeHtml } from "./html.ts";
import {
  type DiffRow,
  diffRevisions,
  type RevisionEntry,
  type RevisionQuery,
  type Span,
} from "./revisions.ts";
import { pageTime, timeHtml } from "./times.ts";

/**
 * The review page's revision history: a picker (a link per revision, a GET form to compare
 * any two), the feedback that led to each revision, one older revision's text, and the diff of
 * two revisions with what the feedback asked beside it. Plain links and a GET form: it works
 * without JavaScript, and every text in it is escaped by {@link html}.
 */

export interface HistoryInput {
  entries: readonly RevisionEntry[];
  query: RevisionQuery;
  /** The texts the loader read (the shown revision, the compared ones). */
  texts: readonly PlanFile[];
  /** The session's review link (`/review/<id>?key=…`), relative or absolute. */
  reviewUrl: string;
  /** The revision the plan region shows (the newest). */
  current: number | null;
  now: number;
}

const VERDICTS: Record<string, string> = {
  reject: "keep planning",
  approve: "approved",
  teleport: "sent to terminal",
};

/** The history region; hidden while the plan has fewer than two revisions and nothing was asked. */
export function historyRegion(input: HistoryInput): SafeHtml {
  const { entries, query } = input;
  if (entries.length < 2 && query.problem === null && query.shown === null) {
    return html`<section data-region="history" hidden></section>`;
  }
  const link = (params: string) => `${input.reviewUrl}&${params}`;
  const key = reviewKeyOf(input.reviewUrl);
  const items = [...entries].reverse().map(
    (
      e,
    ) => html`<li class="revision${e.revision === query.shown ? " revision-shown" : ""}" id="revision-${e.revision}">
<p class="revision-head"><a href="${link(`rev=${e.revision}#revision-view`)}"${e.revision === query.shown ? html` aria-current="true"` : ""}>Revision ${e.revision}</a>
${e.revision === input.current ? html`<span class="chip">current</span>` : ""}
${e.edited_by_user ? html`<span class="chip">edited by you</span>` : ""}
${e.verdict ? html`<span class="chip verdict-${e.verdict}">${VERDICTS[e.verdict] ?? e.verdict}</span>` : ""}
<span class="hint">${timeHtml(pageTime(Date.parse(e.created_at), input.now))} · ${e.chars.toLocaleString("en-US")} characters</span>
${e.revision > 1 ? html`<a class="revision-diff-link" href="${link(`diff=${e.revision - 1}..${e.revision}#revision-compare`)}">changes from revision ${e.revision - 1}</a>` : ""}</p>
${askedBlock(e, false)}
</li>`,
  );
  const options = (selected: number | undefined) =>
    entries.map(
      (e) =>
        html`<option value="${e.revision}"${e.revision === selected ? html` selected` : ""}>revision ${e.revision}</option>`,
    );
  const newest = entries.at(-1)?.revision;
  const from = query.compare?.from ?? (newest === undefined ? undefined : Math.max(1, newest - 1));
  const to = query.compare?.to ?? newest;
  return html`<section data-region="history" class="plan history" aria-labelledby="history-heading">
<h2 id="history-heading">Revisions</h2>
${query.problem ? html`<p class="warning" role="note">${query.problem}</p>` : ""}
<form class="compare-form" method="get">
<input type="hidden" name="key" value="${key}">
<label for="compare-from">Compare</label>
<select id="compare-from" name="from">${options(from)}</select>
<label for="compare-to">with</label>
<select id="compare-to" name="to">${options(to)}</select>
<button type="submit">Show changes</button>
</form>
${compareBlock(input)}
${shownBlock(input)}
<ol class="revision-list" aria-label="Plan revisions, newest first">${items}</ol>
</section>`;
}

function askedBlock(e: RevisionEntry, withNumber: boolean): SafeHtml | "" {
  if (e.asked.length === 0) return "";
  const asks = e.asked.map(
    (a) => html`<div class="asked-one">
${a.feedback ? html`<blockquote class="asked-feedback">${a.feedback}</blockquote>` : ""}
${a.comments.length > 0 ? html`<ul class="asked-comments">${a.comments.map((c) => html`<li><q>${c.quote}</q> — ${c.text}</li>`)}</ul>` : ""}
${!a.feedback && a.comments.length === 0 ? html`<p class="hint">Kept planning without feedback.</p>` : ""}
</div>`,
  );
  return html`<div class="asked">
<p class="asked-label">${withNumber ? `Revision ${e.revision}: what the feedback asked` : "What the feedback asked"}</p>
${asks}
</div>`;
}

function compareBlock(input: HistoryInput): SafeHtml | "" {
  const compare = input.query.compare;
  if (!compare) return "";
  const oldText = input.texts.find((t) => t.revision === compare.from);
  const newText = input.texts.find((t) => t.revision === compare.to);
  if (!oldText || !newText) {
    return html`<p class="warning" id="revision-compare" role="note">The revisions to compare could not be read. Reload the page to try again.</p>`;
  }
  const diff = diffRevisions(oldText.content, newText.content);
  const asked = input.entries.filter(
    (e) => e.revision > compare.from && e.revision <= compare.to && e.asked.length > 0,
  );
  const notes = [
    diff.coarse
      ? "The revisions differ too much to match line by line: the changed middle is shown as removed, then added."
      : "",
    !diff.wordLevel ? "Some long changed passages are marked by whole lines, not by word." : "",
    diff.truncated ? "The comparison is long: only its first part is shown." : "",
  ].filter((n) => n !== "");
  return html`<div class="revision-compare" id="revision-compare">
<div class="revision-diff-column">
<h3>Changes from revision ${compare.from} to revision ${compare.to}</h3>
<p class="revision-diff-summary"><span class="count-added">${diff.added} ${diff.added === 1 ? "line" : "lines"} added</span>, <span class="count-removed">${diff.removed} removed</span>.</p>
${notes.map((n) => html`<p class="hint">${n}</p>`)}
${diff.rows.length === 0 || (diff.added === 0 && diff.removed === 0) ? html`<p>The two revisions have the same text.</p>` : diffTable(diff.rows)}
</div>
<aside class="revision-asked" aria-label="What the feedback asked">
<h3>What the feedback asked</h3>
${asked.length === 0 ? html`<p class="hint">No feedback led to these revisions: the planner revised the plan by itself${newText.edited_by_user ? ", or you edited it" : ""}.</p>` : asked.map((e) => askedBlock(e, true))}
</aside>
</div>`;
}

function diffTable(rows: readonly DiffRow[]): SafeHtml {
  const body = rows.map((row) => {
    switch (row.kind) {
      case "same":
        return html`<tr class="rev-same"><td class="ln">${row.oldLine}</td><td class="ln">${row.newLine}</td><td class="sign"></td><td class="text">${row.text}</td></tr>`;
      case "removed":
        return html`<tr class="rev-removed"><td class="ln">${row.oldLine}</td><td class="ln"></td><td class="sign" aria-label="removed">−</td><td class="text">${spans(row.spans, "del")}</td></tr>`;
      case "added":
        return html`<tr class="rev-added"><td class="ln"></td><td class="ln">${row.newLine}</td><td class="sign" aria-label="added">+</td><td class="text">${spans(row.spans, "ins")}</td></tr>`;
      default:
        return html`<tr class="rev-skipped"><td colspan="4">… ${row.lines} unchanged ${row.lines === 1 ? "line" : "lines"} …</td></tr>`;
    }
  });
  return html`<div class="rev-diff-scroll" tabindex="0"><table class="rev-diff">
<thead><tr><th scope="col">old</th><th scope="col">new</th><th scope="col"><span class="visually-hidden">change</span></th><th scope="col">text</th></tr></thead>
<tbody>${body}</tbody>
</table></div>`;
}

function spans(list: readonly Span[], tag: "del" | "ins"): SafeHtml[] {
  // A wholly changed line is marked by its row; only words within a partly changed line get a tag.
  const whole = list.length === 1 && list[0]?.changed === true;
  return list.map((s) =>
    s.changed && !whole
      ? tag === "del"
        ? html`<del>${s.text}</del>`
        : html`<ins>${s.text}</ins>`
      : html`${s.text}`,
  );
}

function shownBlock(input: HistoryInput): SafeHtml | "" {
  const shown = input.query.shown;
  if (shown === null) return "";
  const text = input.texts.find((t) => t.revision === shown);
  if (!text) return "";
  const entry = input.entries.find((e) => e.revision === shown);
  return html`<div class="revision-view" id="revision-view">
<h3>Revision ${shown}${shown === input.current ? " (the current plan)" : ""}</h3>
${entry ? askedBlock(entry, false) : ""}
<pre class="revision-text" tabindex="0" aria-label="The text of revision ${shown}">${text.content}</pre>
</div>`;
}

/** The `key` query parameter of a review link ("" when it has none). */
function reviewKeyOf(reviewUrl: string): string {
  const query = reviewUrl.split("?")[1] ?? "";
  return new URLSearchParams(query).get("key") ?? "";
}
