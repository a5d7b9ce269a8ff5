import type { LinePattern } from "./line-pattern.ts";
import type { ScanBudget } from "./scan-budget.ts";

/**
 * How Grep searches one file's lines without holding the thread: the file is cut into slices
 * of about 20 ms of work each (sized by `ScanBudget` from the speed measured so far), each
 * slice is one synchronous call into the engine (or a few), and the scan yields between them.
 * Within a slice the cheapest test that can rule lines out comes first: for the offline
 * planner's own patterns a one-pass search by V8's RegExp where it answers as RE2 would
 * (trusted-pattern.ts); else candidate lines found by literal search, else a whole-slice test,
 * halving the slice while it may match.
 */

/** Which lines of a file match, and how many were too long to search whole. */
export interface FileHits {
  /** Indexes (0 for the first line) of the matching lines, in order. */
  lines: number[];
  /** Lines searched in their beginning only (`ScanBudget.longLineChars`). */
  longLines: number;
  /** How many characters of the shortest-searched long line were searched. */
  longLineChars: number;
}

/**
 * The lines of `text` (split at "\n", as `split` does) that `pattern` matches, found within
 * `budget`: runs of lines are tested a slice at a time (`ScanBudget.sliceChars`, about 20 ms
 * of work), and a line longer than `ScanBudget.longLineChars` (minified code, data) is tested
 * in that much of its beginning only, so no single call into the engine runs long. Null when
 * the time budget ran out.
 *
 * @example
 * const found = await matchingLines(file.text, pattern, new ScanBudget());
 * found?.lines // [0, 12] — the first and the thirteenth line match
 */
export async function matchingLines(
  text: string,
  pattern: LinePattern,
  budget: ScanBudget,
): Promise<FileHits | null> {
  const hits: number[] = [];
  let longLines = 0;
  let longLineChars = Number.POSITIVE_INFINITY;
  // The pending slice: whole lines from index `sliceLine`, starting at offset `sliceStart`.
  let sliceStart = 0;
  let sliceLine = 0;
  const flush = async (end: number, lines: number): Promise<boolean> => {
    if (lines === 0) return true;
    const slice = text.slice(sliceStart, end);
    if (!(await budget.spend(slice.length))) return false;
    const searched = pattern.searchLines(slice);
    if (searched !== null) {
      for (const i of searched) hits.push(sliceLine + i);
      return true;
    }
    const candidates = pattern.candidateLines(slice);
    if (candidates !== null) {
      for (const c of candidates)
        if (pattern.testLine(slice.slice(c.start, c.end))) hits.push(sliceLine + c.index);
      return true;
    }
    if (!pattern.mayMatch(slice)) return true;
    const parts = slice.split("\n");
    if (!(await budget.spend(slice.length))) return false;
    for (const i of linesThatMatch(slice, parts, pattern)) hits.push(sliceLine + i);
    return true;
  };
  for (let line = 0, start = 0; ; line++) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    if (end - start > budget.longLineChars()) {
      if (!(await flush(Math.max(sliceStart, start - 1), line - sliceLine))) return null;
      if (budget.calibrating) {
        // Size the cut by the speed of this pattern on this text, not by the cautious guess:
        // time one slice of the line (its answer is not the line's), then measure it.
        if (!(await budget.spend(budget.sliceChars()))) return null;
        pattern.mayMatch(text.slice(start, start + budget.sliceChars()));
        await budget.pause();
      }
      const limit = budget.longLineChars();
      if (!(await budget.spend(Math.min(limit, end - start)))) return null;
      if (pattern.testLine(text.slice(start, Math.min(end, start + limit)))) hits.push(line);
      if (end - start > limit) {
        longLines++;
        longLineChars = Math.min(longLineChars, limit);
      }
      sliceStart = end + 1;
      sliceLine = line + 1;
    } else if (end - sliceStart >= budget.sliceChars() || newline === -1) {
      if (!(await flush(end, line + 1 - sliceLine))) return null;
      sliceStart = end + 1;
      sliceLine = line + 1;
    }
    if (newline === -1) return { lines: hits, longLines, longLineChars };
    start = newline + 1;
  }
}

/** Below this many lines, testing each is cheaper than halving the run again. */
const BISECT_MIN_LINES = 8;

/**
 * Indexes of the `lines` of `slice` (its parts at "\n") that match, in order. The slice may
 * hold a match (it passed `mayMatch`): halves that cannot are ruled out with one whole-text
 * test each (RE2's DFA), so a slice with a few matching lines costs a few fast tests, not one
 * slower test per line. A pattern that cannot rule text out tests every line.
 */
function linesThatMatch(slice: string, lines: readonly string[], pattern: LinePattern): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const line of lines) {
    starts.push(at);
    at += line.length + 1;
  }
  // The text of lines [from, to) as a substring of the slice, without its last newline.
  const span = (from: number, to: number) =>
    slice.slice(starts[from], starts[to - 1]! + lines[to - 1]!.length);
  const found: number[] = [];
  const visit = (from: number, to: number) => {
    if (to - from <= BISECT_MIN_LINES || !pattern.canRuleOut) {
      for (let i = from; i < to; i++) if (pattern.testLine(lines[i]!)) found.push(i);
      return;
    }
    const middle = (from + to) >> 1;
    if (pattern.mayMatch(span(from, middle))) visit(from, middle);
    if (pattern.mayMatch(span(middle, to))) visit(middle, to);
  };
  visit(0, lines.length);
  return found;
}
