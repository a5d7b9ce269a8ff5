import { searchPattern, type Term } from "../task/terms.ts";
import { type DefinitionKind, parseDefinition } from "./definitions.ts";

/**
 * Where in a file the task's terms show up, named by the enclosing definition, so the plan can
 * say "`createSession` (lines 12–18)" instead of just a path. Pure.
 */

export interface LineRef {
  /** The innermost enclosing function/class/type, or null for top-level lines. */
  symbol: string | null;
  lines: number[];
}

/** A definition and the lines it spans (up to the next definition at its depth or shallower). */
export interface Span {
  name: string;
  kind: DefinitionKind;
  start: number;
  end: number;
}

/** Longest span assumed for a definition whose end was not seen. */
const MAX_SPAN_LINES = 80;

/**
 * The definitions of a file's numbered lines with the lines each spans, by indentation: a
 * definition ends before the next one indented as deep or less.
 *
 * @example
 * symbolSpans("a.py", [[1, "def a():"], [2, "    return 1"], [3, "def b():"]])
 * // [{ name: "a", kind: "function", start: 1, end: 2 }, { name: "b", kind: "function", start: 3, end: 3 }]
 */
export function symbolSpans(path: string, lines: readonly [number, string][]): Span[] {
  const found: { name: string; kind: DefinitionKind; start: number; indent: number }[] = [];
  for (const [n, text] of lines) {
    const d = parseDefinition(path, text);
    if (d === null || d.kind === "field" || d.kind === "key" || d.kind === "route") continue;
    // Indented constants are locals, not definitions worth naming.
    if (d.kind === "constant" && /^\s/.test(text)) continue;
    found.push({ ...d, start: n, indent: /^\s*/.exec(text)![0].length });
  }
  const last = lines.length > 0 ? lines[lines.length - 1]![0] : 0;
  return found.map((d, i) => {
    // Up to the next definition as shallow or shallower; the last one runs to the end of what
    // was read if it is a class or type, else at most {@link MAX_SPAN_LINES}.
    const next = found.slice(i + 1).find((x) => x.indent <= d.indent);
    let end =
      next !== undefined
        ? next.start - 1
        : d.kind === "class" || d.kind === "type"
          ? last
          : Math.min(last, d.start + MAX_SPAN_LINES);
    // A constant is its line — unless it holds a function (`export const cors = (…) => {`).
    if (d.kind === "constant" && !opensBody(lines, d.start)) end = d.start;
    return { name: d.name, kind: d.kind, start: d.start, end: Math.max(d.start, end) };
  });
}

/** Whether the line at `start` opens a function body (an arrow or `function` expression). */
function opensBody(lines: readonly [number, string][], start: number): boolean {
  const text = lines.find(([n]) => n === start)?.[1] ?? "";
  return /=>\s*[{(]?\s*$|\bfunction\b[^;]*\{?\s*$|=\s*\(\s*$/.test(text);
}

/**
 * The innermost span holding `line`, or null.
 *
 * @example
 * enclosing([{ name: "A", kind: "class", start: 1, end: 9 }, { name: "run", kind: "method", start: 3, end: 5 }], 4)!.name // "run"
 */
export function enclosing(spans: readonly Span[], line: number): Span | null {
  let best: Span | null = null;
  for (const s of spans)
    if (s.start <= line && line <= s.end && (best === null || s.start >= best.start)) best = s;
  return best;
}

/**
 * Groups the lines that mention any term under their innermost enclosing definition; the
 * groups with most hits first, at most `limit`, then in file order.
 *
 * @example
 * lineRefs("a.ts", [[1, "export function createSession() {"], [2, "  const session = {};"]], [{ text: "session", weight: 1 }])
 * // [{ symbol: "createSession", lines: [1, 2] }]
 */
export function lineRefs(
  path: string,
  lines: readonly [number, string][],
  terms: readonly Term[],
  limit = 3,
): LineRef[] {
  const patterns = terms.filter((t) => t.text !== "").map((t) => new RegExp(searchPattern(t)));
  const spans = symbolSpans(path, lines);
  const groups = new Map<string, LineRef>();
  for (const [n, text] of lines) {
    if (!patterns.some((p) => p.test(text))) continue;
    const symbol = enclosing(spans, n)?.name ?? null;
    const key = symbol ?? "";
    const group = groups.get(key) ?? { symbol, lines: [] };
    group.lines.push(n);
    groups.set(key, group);
  }
  return [...groups.values()]
    .sort((a, b) => b.lines.length - a.lines.length || a.lines[0]! - b.lines[0]!)
    .slice(0, limit)
    .sort((a, b) => a.lines[0]! - b.lines[0]!);
}

/**
 * "lines 12–18" / "line 4" / "lines 3, 9, 40" for a list of line numbers.
 *
 * @example
 * formatLines([12, 13, 14]) // "lines 12–14"
 */
export function formatLines(lines: readonly number[]): string {
  if (lines.length === 0) return "";
  if (lines.length === 1) return `line ${lines[0]}`;
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  if (last - first + 1 === lines.length || last - first <= 12) return `lines ${first}–${last}`;
  return `lines ${lines.slice(0, 4).join(", ")}${lines.length > 4 ? ", …" : ""}`;
}

/**
 * "lines 12–18" for a span, "line 12" for a one-line one.
 *
 * @example
 * formatSpan(3, 3) // "line 3"
 */
export function formatSpan(start: number, end: number): string {
  return end > start ? `lines ${start}–${end}` : `line ${start}`;
}
