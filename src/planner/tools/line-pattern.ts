import { RE2JS, RE2JSException } from "re2js";
import { err, ok, type Result } from "../../protocol/index.ts";
import { requiredLiterals } from "./required-literals.ts";
import { trustedLineTest, trustedSliceSearch } from "./trusted-pattern.ts";

/**
 * Grep's regular expressions. The pattern is the model's choice — and a prompt-injected README
 * can choose it — so it runs on re2js, an RE2 engine whose matching time is linear in the text
 * whatever the pattern. JavaScript's RegExp backtracks: `^(a+)+$` against 48 "a"s and a "!"
 * pinned the worker for minutes, and even `\w+x` is quadratic on a long line.
 *
 * The syntax is RE2's, as in ripgrep (Claude Code's Grep): classes, `\d \w \s \b`, `\pL`,
 * `[[:alpha:]]`, `(?i)`, non-greedy and counted repeats up to 1000, `(?:…)`, named groups.
 * JavaScript spellings are translated first (`\uXXXX`, `\u{…}`, `(?<name>…)`, `\cX`, `[^]`).
 * Lookaround, backreferences and atomic groups cannot run in linear time and are refused with
 * an explanation. Each line is tested on its own, so `^` and `$` are the line's start and end.
 */

/** Largest compiled program accepted (RE2 instructions); matching work grows with it. */
export const MAX_PATTERN_PROGRAM_SIZE = 2_000;

/** The syntax summary the Grep description gives the model. */
export const GREP_SYNTAX =
  'RE2 syntax as in ripgrep (e.g. "log.*Error", "function\\\\s+\\\\w+", "(?i)todo"); JavaScript escapes like \\uXXXX and (?<name>…) are accepted; lookahead, lookbehind and backreferences are not supported';

/** A compiled Grep pattern. */
export interface LinePattern {
  /** Whether one line (without its newline) matches. */
  testLine(line: string): boolean;
  /**
   * Whether any line of `text` may match: never false when a line does. A search for the
   * literals a match needs, then a whole-text test on RE2's DFA (about 1 ms per MB), are far
   * cheaper than testing each line, so most files are ruled out here.
   */
  mayMatch(text: string): boolean;
  /** False when `mayMatch` says yes to everything (the pattern anchors to the whole text). */
  canRuleOut: boolean;
  /**
   * The only lines of `text` that can match — those holding a literal every match needs — when
   * they are few enough that testing them beats a pass over the whole text; else null.
   */
  candidateLines(text: string): LineSpan[] | null;
  /**
   * The indexes of the lines of `text` (whole lines, "\n" between them) that match, found in
   * one pass by a faster engine that answers exactly as the line tests would; null when it
   * cannot answer for this text (or the pattern is not `trusted`). Then the tests above decide.
   */
  searchLines(text: string): number[] | null;
}

/** A line of a text: its index (0 for the first) and where it starts and ends. */
export interface LineSpan {
  index: number;
  start: number;
  end: number;
}

/**
 * Literal hits per character above which candidate lines stop paying off (about one every
 * 256 characters: then most lines are candidates and one DFA pass is cheaper).
 */
const CHARS_PER_CANDIDATE = 256;

/**
 * Compiles a Grep pattern, or says why it cannot run.
 *
 * @example
 * const p = compileLinePattern("^(a+)+$", { ignoreCase: false });
 * p.ok && p.value.testLine("a".repeat(48) + "!") // false, at once
 * compileLinePattern("(?<=x)y", { ignoreCase: false }) // err("…lookbehind…")
 *
 * `trusted` is for the offline planner's own patterns (never a model's): their lines are
 * tested by V8's RegExp where it answers exactly as RE2 (trusted-pattern.ts), the rest by RE2.
 */
export function compileLinePattern(
  pattern: string,
  opts: { ignoreCase: boolean; trusted?: boolean },
): Result<LinePattern, string> {
  const unsupported = unsupportedConstruct(pattern);
  if (unsupported !== null) {
    return err(
      `The pattern uses ${unsupported}, which Grep does not support: its patterns run on a linear-time engine (RE2 syntax, as in ripgrep), so lookahead, lookbehind, backreferences and atomic groups are not available. Rewrite it without them, e.g. match the surrounding text instead, or run two searches.`,
    );
  }
  const flags = opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  let line: RE2JS;
  let whole: RE2JS;
  let source: string;
  try {
    source = RE2JS.translateRegExp(pattern);
    line = RE2JS.compile(source, flags);
    whole = RE2JS.compile(source, flags | RE2JS.MULTILINE);
  } catch (error) {
    const detail =
      error instanceof RE2JSException ? error.message : String((error as Error).message ?? error);
    return err(
      `The pattern is not a valid regular expression for Grep (RE2 syntax, as in ripgrep): ${detail}.`,
    );
  }
  if (line.programSize() > MAX_PATTERN_PROGRAM_SIZE) {
    return err(
      `The pattern is too complex (${line.programSize()} instructions compiled; the limit is ${MAX_PATTERN_PROGRAM_SIZE}). Use smaller repeat counts or fewer alternatives.`,
    );
  }
  // Text anchors (`\A`, `\z`, or `^`/`$` with the m flag turned off) mean the start and end of
  // each line when lines are tested one by one, but of the whole text in one test: then the
  // whole-text test could miss a line that matches, so it is skipped.
  const prefilter = anchorsText(pattern) ? null : whole;
  // Text without any of the literals a match needs is ruled out at `indexOf` speed.
  const literals = opts.ignoreCase ? null : requiredLiterals(pattern);
  const hasLiteral = (text: string) =>
    literals === null || literals.every((set) => set.some((l) => text.includes(l)));
  const re2Test = (text: string) => line.test(text);
  const lineTest =
    opts.trusted === true && !opts.ignoreCase
      ? (trustedLineTest(source, re2Test) ?? re2Test)
      : re2Test;
  const sliceSearch =
    opts.trusted === true && !opts.ignoreCase && prefilter !== null
      ? trustedSliceSearch(source)
      : null;
  return ok({
    testLine: (text: string) => hasLiteral(text) && lineTest(text),
    searchLines: (text: string) =>
      sliceSearch === null ? null : hasLiteral(text) ? sliceSearch(text) : [],
    mayMatch: (text: string) => hasLiteral(text) && (prefilter === null || prefilter.test(text)),
    canRuleOut: prefilter !== null || literals !== null,
    candidateLines: (text: string) => (literals === null ? null : candidateLines(text, literals)),
  });
}

/**
 * The lines of `text` holding a string of the set (of `sets`) that occurs least, or null when
 * even that set occurs more than once per {@link CHARS_PER_CANDIDATE} characters.
 */
function candidateLines(text: string, sets: readonly string[][]): LineSpan[] | null {
  const limit = Math.max(16, Math.floor(text.length / CHARS_PER_CANDIDATE));
  let chosen: readonly string[] | null = null;
  let fewest = limit + 1;
  for (const set of sets) {
    let count = 0;
    // Counting stops as soon as this set is no better than the best so far.
    for (const literal of set) {
      for (
        let i = text.indexOf(literal);
        i !== -1 && count < fewest;
        i = text.indexOf(literal, i + 1)
      )
        count++;
    }
    if (count < fewest) {
      fewest = count;
      chosen = set;
    }
  }
  if (chosen === null) return null;
  const positions: number[] = [];
  for (const literal of chosen)
    for (let i = text.indexOf(literal); i !== -1; i = text.indexOf(literal, i + 1))
      positions.push(i);
  positions.sort((a, b) => a - b);
  const spans: LineSpan[] = [];
  let index = 0;
  let counted = 0; // newlines before `counted` are in `index`
  for (const at of positions) {
    if (spans.length > 0 && at <= spans[spans.length - 1]!.end) continue;
    const start = text.lastIndexOf("\n", at - 1) + 1;
    for (
      let nl = text.indexOf("\n", counted);
      nl !== -1 && nl < start;
      nl = text.indexOf("\n", nl + 1)
    ) {
      index++;
      counted = nl + 1;
    }
    counted = Math.max(counted, start);
    const newline = text.indexOf("\n", at);
    spans.push({ index, start, end: newline === -1 ? text.length : newline });
  }
  return spans;
}

/**
 * Names the first construct of `pattern` that has no linear-time implementation, or null.
 * Escapes and bracket expressions are skipped, so `\(?=` or `[(?=]` are not flagged.
 *
 * @example
 * unsupportedConstruct("foo(?!bar)") // "a negative lookahead (?!…)"
 * unsupportedConstruct("(a)\\1")     // "a backreference (\\1)"
 */
export function unsupportedConstruct(pattern: string): string | null {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next)) return `a backreference (\\${next})`;
      if (next === "k" && pattern[i + 2] === "<") return "a named backreference (\\k<…>)";
      i++;
      continue;
    }
    if (c === "[") {
      i = bracketEnd(pattern, i);
      continue;
    }
    if (c !== "(" || pattern[i + 1] !== "?") continue;
    const head = pattern.slice(i, i + 4);
    if (head.startsWith("(?=")) return "a lookahead (?=…)";
    if (head.startsWith("(?!")) return "a negative lookahead (?!…)";
    if (head === "(?<=") return "a lookbehind (?<=…)";
    if (head === "(?<!") return "a negative lookbehind (?<!…)";
    if (head.startsWith("(?>")) return "an atomic group (?>…)";
  }
  return null;
}

/**
 * True when the pattern may anchor to the start or end of the whole text: `\A`, `\z`, or an
 * inline flag group that turns multi-line mode off (`(?-m)`, `(?i-m:…)`).
 */
function anchorsText(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (next === "A" || next === "z") return true;
      i++;
      continue;
    }
    if (c === "[") {
      i = bracketEnd(pattern, i);
      continue;
    }
    if (c === "(" && pattern[i + 1] === "?") {
      const flags = /^\(\?([a-zA-Z]*)-([a-zA-Z]*)[:)]/.exec(pattern.slice(i, i + 16));
      if (flags?.[2]?.includes("m")) return true;
    }
  }
  return false;
}

/** Index of the `]` closing the class opened at `open` (RE2 rules), or the last index. */
function bracketEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") i++;
    else if (c === "[" && pattern[i + 1] === ":") {
      // A POSIX class such as [:alpha:] inside the brackets.
      const end = pattern.indexOf(":]", i + 2);
      if (end !== -1) i = end + 1;
    } else if (c === "]") return i;
  }
  return pattern.length - 1;
}
