import { diffLines, diffWordsWithSpace } from "diff";
import type { PlanDecisionRecord } from "../protocol/index.ts";

/**
 * The review page's revision history, decided and computed without I/O: which revisions the
 * page shows or compares (from the query string, every bad value answered with a sentence),
 * which feedback led to each revision, and the diff between two revisions as rows of kept,
 * added and removed lines with word-level spans. Bounded: a 200,000-character plan against
 * another stays linear-ish (see {@link MAX_LINE_EDITS} and {@link MAX_WORD_DIFF_CHARS}).
 */

/** One stored revision as the picker lists it (the loader's shape, without the text). */
export interface RevisionInfo {
  revision: number;
  edited_by_user: boolean;
  /** ISO time the revision was written. */
  created_at: string;
  chars: number;
}

/** What the page was asked to show: one revision, or a comparison of two. */
export interface RevisionQuery {
  /** The revision shown in the history panel (null: none asked). */
  shown: number | null;
  /** The two revisions compared, older first (null: no comparison asked). */
  compare: { from: number; to: number } | null;
  /** Why (part of) the query was ignored, as a sentence for the page; null when it was fine. */
  problem: string | null;
}

/** The most revisions a query may name: the numbers must be small positive integers. */
const REVISION_PATTERN = /^[1-9][0-9]{0,5}$/;

/**
 * Reads `rev`, `diff=A..B` (links) and `from`/`to` (the picker's GET form) against the stored
 * revisions. Unknown or malformed numbers are dropped with a sentence saying so; a comparison
 * of a revision with itself is refused the same way; `diff=3..1` is read as `1..3`.
 *
 * @example
 * parseRevisionQuery({ diff: "1..3" }, [1, 2, 3]) // { shown: null, compare: { from: 1, to: 3 }, problem: null }
 */
export function parseRevisionQuery(
  query: { rev?: string; diff?: string; from?: string; to?: string },
  stored: readonly number[],
): RevisionQuery {
  const known = new Set(stored);
  const problems: string[] = [];
  const revision = (text: string, what: string): number | null => {
    if (!REVISION_PATTERN.test(text)) {
      problems.push(`${what} must be a revision number such as 1 (got “${clip(text)}”).`);
      return null;
    }
    const n = Number(text);
    if (!known.has(n)) {
      problems.push(
        `There is no revision ${n}${stored.length > 0 ? ` (the plan has revisions 1 to ${Math.max(...stored)})` : ""}.`,
      );
      return null;
    }
    return n;
  };
  const shown = query.rev === undefined || query.rev === "" ? null : revision(query.rev, "rev");
  let compare: RevisionQuery["compare"] = null;
  const pair = pairOf(query, problems);
  if (pair) {
    const a = revision(pair[0], "The first revision to compare");
    const b = revision(pair[1], "The second revision to compare");
    if (a !== null && b !== null) {
      if (a === b)
        problems.push(
          `Revision ${a} compared with itself shows no change: choose two different revisions.`,
        );
      else compare = { from: Math.min(a, b), to: Math.max(a, b) };
    }
  }
  return { shown, compare, problem: problems.length > 0 ? problems.join(" ") : null };
}

/**
 * The revision numbers a query names, before the stored revisions are known: what the loader
 * reads the text of (at most two: the compared pair, else the one shown). Malformed values
 * are left out here and explained by {@link parseRevisionQuery}.
 *
 * @example
 * wantedRevisions({ diff: "3..1" }) // [1, 3]
 */
export function wantedRevisions(query: {
  rev?: string;
  diff?: string;
  from?: string;
  to?: string;
}): number[] {
  const pair = pairOf(query, []);
  const numbers = (pair ?? [query.rev ?? ""]).filter((t) => REVISION_PATTERN.test(t)).map(Number);
  return [...new Set(numbers)].sort((a, b) => a - b).slice(0, 2);
}

function pairOf(
  query: { diff?: string; from?: string; to?: string },
  problems: string[],
): [string, string] | null {
  if (query.diff !== undefined && query.diff !== "") {
    const m = /^([^.]*)\.\.([^.]*)$/.exec(query.diff);
    if (!m) {
      problems.push(`diff must name two revisions such as 1..3 (got “${clip(query.diff)}”).`);
      return null;
    }
    return [m[1] ?? "", m[2] ?? ""];
  }
  const from = query.from ?? "";
  const to = query.to ?? "";
  if (from === "" && to === "") return null;
  if (from === "" || to === "") {
    problems.push("Choose both revisions to compare.");
    return null;
  }
  return [from, to];
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The feedback a revision answers, and what the reviewer decided on it. */
export interface RevisionEntry extends RevisionInfo {
  /** The feedback (and comments) sent back before this revision was written: what it was asked to change. */
  asked: {
    feedback: string | null;
    comments: { quote: string; text: string }[];
    decided_at: string;
  }[];
  /** What the reviewer decided while this revision was the plan (the last such decision). */
  verdict: PlanDecisionRecord["kind"] | null;
}

/**
 * Each revision with the feedback that led to it: a "keep planning" decision leads to the
 * first revision written after it (the ones after that are the planner's own further edits).
 * The verdict of a revision is the last decision taken while it was the newest.
 *
 * @example
 * revisionEntries([r1, r2], [{ kind: "reject", feedback: "Cover logout", decided_at: between, … }])
 * // [{ …r1, asked: [], verdict: "reject" }, { …r2, asked: [{ feedback: "Cover logout", … }], verdict: null }]
 */
export function revisionEntries(
  revisions: readonly RevisionInfo[],
  decisions: readonly PlanDecisionRecord[],
): RevisionEntry[] {
  const sorted = [...revisions].sort((a, b) => a.revision - b.revision);
  const entries: RevisionEntry[] = sorted.map((r) => ({ ...r, asked: [], verdict: null }));
  const times = sorted.map((r) => Date.parse(r.created_at));
  for (const d of decisions) {
    const at = Date.parse(d.decided_at);
    // The revision judged: the newest written at or before the decision.
    let judged = -1;
    for (let i = 0; i < times.length; i++) if ((times[i] ?? 0) <= at) judged = i;
    if (judged >= 0) entries[judged]!.verdict = d.kind;
    if (d.kind !== "reject") continue;
    const next = times.findIndex((t) => t > at);
    if (next >= 0) {
      entries[next]!.asked.push({
        feedback: d.feedback,
        comments: d.comments,
        decided_at: d.decided_at,
      });
    }
  }
  return entries;
}

/** A run of text within a changed line; `changed` marks the words that differ. */
export interface Span {
  text: string;
  changed: boolean;
}

export type DiffRow =
  | { kind: "same"; oldLine: number; newLine: number; text: string }
  | { kind: "removed"; oldLine: number; spans: Span[] }
  | { kind: "added"; newLine: number; spans: Span[] }
  /** Unchanged lines left out between two changes (their count). */
  | { kind: "skipped"; lines: number };

export interface RevisionDiff {
  rows: DiffRow[];
  added: number;
  removed: number;
  /** Word-level spans were computed for every changed block (false: some blocks fell back to whole lines). */
  wordLevel: boolean;
  /** The two texts differ by more than {@link MAX_LINE_EDITS} lines: the middle is shown as replaced. */
  coarse: boolean;
  /** Rows beyond {@link MAX_DIFF_ROWS} were left out. */
  truncated: boolean;
}

/** Line edits jsdiff may explore before the comparison falls back to prefix/suffix matching. */
export const MAX_LINE_EDITS = 1_000;
/** A changed block (removed plus added text) longer than this is shown line by line, not word by word. */
export const MAX_WORD_DIFF_CHARS = 4_000;
/** Word-level comparison stops after this many characters in all (the rest is line-level). */
export const MAX_WORD_DIFF_TOTAL_CHARS = 40_000;
/** Unchanged lines kept around each change. */
export const CONTEXT_LINES = 3;
/** The page shows at most this many rows. */
export const MAX_DIFF_ROWS = 3_000;

/**
 * The diff between two plan texts as rows. Lines are compared with jsdiff's Myers diff,
 * bounded by {@link MAX_LINE_EDITS}; beyond it the common first and last lines are kept and the
 * rest is one replaced block. Within a block of removed lines followed by added lines, words
 * are compared (bounded by {@link MAX_WORD_DIFF_CHARS} per block and
 * {@link MAX_WORD_DIFF_TOTAL_CHARS} in all). Long unchanged runs become `skipped` rows.
 *
 * @example
 * diffRevisions("a\nold b\n", "a\nnew b\n").rows
 * // [{ kind: "same", … text: "a" }, { kind: "removed", spans: [{ text: "old", changed: true }, { text: " b", changed: false }] }, { kind: "added", … }]
 */
export function diffRevisions(oldText: string, newText: string): RevisionDiff {
  const blocks = lineBlocks(oldText, newText);
  const rows: DiffRow[] = [];
  let oldLine = 1;
  let newLine = 1;
  let added = 0;
  let removed = 0;
  let wordLevel = true;
  let wordBudget = MAX_WORD_DIFF_TOTAL_CHARS;
  for (let i = 0; i < blocks.blocks.length; i++) {
    const block = blocks.blocks[i]!;
    if (block.kind === "same") {
      for (const text of block.lines)
        rows.push({ kind: "same", oldLine: oldLine++, newLine: newLine++, text });
      continue;
    }
    const next = blocks.blocks[i + 1];
    const removedLines = block.kind === "removed" ? block.lines : [];
    const addedLines =
      block.kind === "added" ? block.lines : next?.kind === "added" ? next.lines : [];
    if (block.kind === "removed" && next?.kind === "added") i++;
    removed += removedLines.length;
    added += addedLines.length;
    const size = charsOf(removedLines) + charsOf(addedLines);
    let spans: { old: Span[][]; new: Span[][] } | null = null;
    if (removedLines.length > 0 && addedLines.length > 0) {
      if (size <= MAX_WORD_DIFF_CHARS && size <= wordBudget) {
        wordBudget -= size;
        spans = wordSpans(removedLines, addedLines);
      } else wordLevel = false;
    }
    removedLines.forEach((text, k) => {
      rows.push({
        kind: "removed",
        oldLine: oldLine++,
        spans: spans?.old[k] ?? [{ text, changed: true }],
      });
    });
    addedLines.forEach((text, k) => {
      rows.push({
        kind: "added",
        newLine: newLine++,
        spans: spans?.new[k] ?? [{ text, changed: true }],
      });
    });
  }
  const collapsed = collapseUnchanged(rows);
  const truncated = collapsed.length > MAX_DIFF_ROWS;
  return {
    rows: truncated ? collapsed.slice(0, MAX_DIFF_ROWS) : collapsed,
    added,
    removed,
    wordLevel,
    coarse: blocks.coarse,
    truncated,
  };
}

type LineBlock = { kind: "same" | "added" | "removed"; lines: string[] };

/** Splits a text into lines; a final newline ends the last line rather than starting another. */
export function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

function lineBlocks(oldText: string, newText: string): { blocks: LineBlock[]; coarse: boolean } {
  // Compare texts that both end in a newline, so a missing final newline is no change.
  const a = oldText === "" || oldText.endsWith("\n") ? oldText : `${oldText}\n`;
  const b = newText === "" || newText.endsWith("\n") ? newText : `${newText}\n`;
  const changes = diffLines(a, b, { maxEditLength: MAX_LINE_EDITS });
  if (changes !== undefined) {
    return {
      blocks: changes.map((c) => ({
        kind: c.added ? "added" : c.removed ? "removed" : "same",
        lines: linesOf(c.value),
      })),
      coarse: false,
    };
  }
  // Too different for a bounded Myers diff: keep the common ends, replace the middle.
  const oldLines = linesOf(a);
  const newLines = linesOf(b);
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head])
    head++;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  )
    tail++;
  const blocks: LineBlock[] = [
    { kind: "same", lines: oldLines.slice(0, head) },
    { kind: "removed", lines: oldLines.slice(head, oldLines.length - tail) },
    { kind: "added", lines: newLines.slice(head, newLines.length - tail) },
    { kind: "same", lines: oldLines.slice(oldLines.length - tail) },
  ];
  return { blocks: blocks.filter((bl) => bl.lines.length > 0), coarse: true };
}

function charsOf(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) n += line.length + 1;
  return n;
}

/** Word spans of a replaced block, split back into its old and its new lines. */
function wordSpans(
  oldLines: readonly string[],
  newLines: readonly string[],
): { old: Span[][]; new: Span[][] } {
  const parts = diffWordsWithSpace(oldLines.join("\n"), newLines.join("\n"));
  const oldRows: Span[][] = [[]];
  const newRows: Span[][] = [[]];
  const push = (target: Span[][], text: string, changed: boolean) => {
    const pieces = text.split("\n");
    pieces.forEach((piece, k) => {
      if (k > 0) target.push([]);
      if (piece !== "") target.at(-1)!.push({ text: piece, changed });
    });
  };
  for (const part of parts) {
    if (!part.added) push(oldRows, part.value, part.removed);
    if (!part.removed) push(newRows, part.value, part.added);
  }
  return { old: mergeSpans(oldRows), new: mergeSpans(newRows) };
}

/** Joins neighbouring spans of the same kind (fewer elements on the page). */
function mergeSpans(rows: Span[][]): Span[][] {
  return rows.map((spans) => {
    const merged: Span[] = [];
    for (const span of spans) {
      const last = merged.at(-1);
      if (last && last.changed === span.changed) last.text += span.text;
      else merged.push({ ...span });
    }
    return merged;
  });
}

/** Replaces unchanged runs longer than twice the context by a `skipped` row. */
function collapseUnchanged(rows: readonly DiffRow[]): DiffRow[] {
  const out: DiffRow[] = [];
  let i = 0;
  while (i < rows.length) {
    if (rows[i]!.kind !== "same") {
      out.push(rows[i]!);
      i++;
      continue;
    }
    let end = i;
    while (end < rows.length && rows[end]!.kind === "same") end++;
    const keepBefore = i === 0 ? 0 : CONTEXT_LINES;
    const keepAfter = end === rows.length ? 0 : CONTEXT_LINES;
    const run = end - i;
    if (run > keepBefore + keepAfter + 1) {
      out.push(...rows.slice(i, i + keepBefore));
      out.push({ kind: "skipped", lines: run - keepBefore - keepAfter });
      out.push(...rows.slice(end - keepAfter, end));
    } else out.push(...rows.slice(i, end));
    i = end;
  }
  return out;
}
