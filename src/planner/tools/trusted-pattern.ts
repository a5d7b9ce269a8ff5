/**
 * A faster engine for the offline planner's own Grep patterns. Those patterns are built by
 * planport's code from escaped literals in a few fixed shapes (a word start, a definition, an
 * import), never chosen by a model or a README, and RE2 in JavaScript (re2js) spends most of a
 * plan's time testing them line by line: on a 4,400-file Java tree V8's own RegExp tests the
 * same lines 7–10× faster. This module translates a pattern to a JavaScript RegExp that
 * answers **exactly** as RE2 does on one line, or says it cannot (then RE2 answers alone):
 *
 * - only the syntax whose meaning is the same in both is accepted: literals, `.`, classes,
 *   `\w \W \d \D \b \B`, `\s \S` (spelled out as RE2's `[\t\n\f\r ]`: JavaScript's `\s` also
 *   takes Unicode spaces), `(…)`, `(?:…)`, `|`, `* + ? {n,m}` (greedy or lazy), `^ $`; anything
 *   else — flags, `\p`, `\x`, `\A`, POSIX classes, a non-ASCII character — gives null;
 * - `.` runs with the `s` flag (RE2's `.` takes `\r`; a line holds no `\n`);
 * - a line that holds a UTF-16 surrogate is left to RE2 (there a character is one code point,
 *   in a non-Unicode RegExp two units), and so is a line longer than {@link JS_MAX_LINE_CHARS}
 *   (a backtracking engine's time on our patterns grows with the square of a line at worst).
 *
 * The answer therefore never depends on which engine ran, only how fast it came: the same
 * lines match, and the plan is byte for byte the same (test/unit/trusted-pattern.test.ts
 * compares both engines on the planner's patterns).
 */

/** Longest line the JavaScript engine tests; longer ones go to RE2. */
export const JS_MAX_LINE_CHARS = 1_024;

const SURROGATE = /[\uD800-\uDFFF]/;
/** RE2's `\s`, as class members. */
const RE2_SPACE = "\\t\\n\\f\\r ";
/** Escapes of one character that mean the same in both engines (outside or inside a class). */
const SAME_ESCAPES = new Set([..."wWdDtnrf"]);
const QUANTIFIER = /^\{\d+(?:,\d*)?\}/;

/**
 * How RE2's one-line meaning is spelled in JavaScript: for one line at a time (`LINE`, with the
 * `s` flag), or for a run of whole lines searched at once (`SLICE`), where nothing may match a
 * newline and `^`/`$` are a line's ends (lookarounds, not the `m` flag: that one also ends
 * lines at `\r` and U+2028).
 */
interface Mode {
  escapes: Readonly<Record<string, string>>;
  chars: Readonly<Record<string, string>>;
  classSpace: string;
  negatedClassExtra: string;
  noNewline: boolean;
}

const LINE: Mode = {
  escapes: { s: `[${RE2_SPACE}]`, S: `[^${RE2_SPACE}]` },
  chars: {},
  classSpace: RE2_SPACE,
  negatedClassExtra: "",
  noNewline: false,
};

const SLICE: Mode = {
  escapes: {
    s: "[\\t\\f\\r ]",
    S: `[^${RE2_SPACE}]`,
    W: "[^\\w\\n]",
    D: "[^\\d\\n]",
    n: "(?!)",
  },
  chars: { ".": "[^\\n]", "^": "(?<![^\\n])", $: "(?![^\\n])" },
  classSpace: "\\t\\f\\r ",
  negatedClassExtra: "\\n",
  noNewline: true,
};

/**
 * A search of a run of whole lines (a slice of a file, "\n" between lines) that answers the
 * indexes of the lines `re2Source` matches, each tested as RE2 tests one line; or null when the
 * pattern is outside the shared subset. The search itself answers null for a slice it cannot
 * answer exactly (a surrogate, a line longer than {@link JS_MAX_LINE_CHARS}): then the caller
 * tests the slice as before.
 *
 * @example
 * trustedSliceSearch("(?:^|[^A-Za-z])retry")?.("a\nretry = 1\nb") // [1]
 */
export function trustedSliceSearch(re2Source: string): ((slice: string) => number[] | null) | null {
  const source = toJavaScript(re2Source, SLICE);
  if (source === null) return null;
  let js: RegExp;
  try {
    js = new RegExp(source, "g");
  } catch {
    return null;
  }
  return (slice: string) => {
    if (SURROGATE.test(slice) || longestLine(slice) > JS_MAX_LINE_CHARS) return null;
    const lines: number[] = [];
    let line = 0;
    let counted = 0; // the newlines before `counted` are counted in `line`
    js.lastIndex = 0;
    for (let m = js.exec(slice); m !== null; m = js.exec(slice)) {
      for (let nl = slice.indexOf("\n", counted); nl !== -1 && nl < m.index; ) {
        line++;
        counted = nl + 1;
        nl = slice.indexOf("\n", counted);
      }
      lines.push(line);
      const end = slice.indexOf("\n", m.index);
      if (end === -1) break;
      js.lastIndex = end + 1;
    }
    return lines;
  };
}

function longestLine(text: string): number {
  let longest = 0;
  for (let start = 0; ; ) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    if (end - start > longest) longest = end - start;
    if (nl === -1) return longest;
    start = nl + 1;
  }
}

/**
 * A line tester that answers as `re2Test` does, faster where it can, or null when the pattern
 * uses syntax outside the shared subset.
 *
 * @example
 * const test = trustedLineTest("(?:^|[^A-Za-z])(?:retry|Retry)", (l) => re2.test(l));
 * test?.("const retryCount = 3") // true
 */
export function trustedLineTest(
  re2Source: string,
  re2Test: (line: string) => boolean,
): ((line: string) => boolean) | null {
  const source = toJavaScript(re2Source);
  if (source === null) return null;
  let js: RegExp;
  try {
    js = new RegExp(source, "s");
  } catch {
    return null;
  }
  return (line: string) =>
    line.length > JS_MAX_LINE_CHARS || SURROGATE.test(line) ? re2Test(line) : js.test(line);
}

/**
 * The JavaScript spelling of an RE2 pattern of the shared subset, or null.
 *
 * @example
 * toJavaScript("foo\\s+bar") // "foo[\\t\\n\\f\\r ]+bar"
 * toJavaScript("(?i)foo")    // null
 */
export function toJavaScript(pattern: string, mode: Mode = LINE): string | null {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c.charCodeAt(0) > 0x7e || c.charCodeAt(0) < 0x20) return null;
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) return null;
      i++;
      const spelled = mode.escapes[next];
      if (spelled !== undefined) out += spelled;
      else if (next === "b" || next === "B" || SAME_ESCAPES.has(next)) out += `\\${next}`;
      else if (/[!-/:-@[-`{-~]/.test(next)) out += `\\${next}`;
      else return null;
      continue;
    }
    if (c === "[") {
      const cls = classToJavaScript(pattern, i, mode);
      if (cls === null) return null;
      out += cls.source;
      i = cls.end;
      continue;
    }
    if (c === "(") {
      if (pattern[i + 1] === "?") {
        if (pattern[i + 2] !== ":") return null;
        out += "(?:";
        i += 2;
      } else out += "(?:";
      continue;
    }
    if (c === "{") {
      const q = QUANTIFIER.exec(pattern.slice(i));
      if (q === null) {
        out += "\\{";
        continue;
      }
      out += q[0];
      i += q[0].length - 1;
      continue;
    }
    if (c === "}") {
      out += "\\}";
      continue;
    }
    out += mode.chars[c] ?? c;
  }
  return out;
}

/** The class opening at `open` in JavaScript, and the index of its `]`; null outside the subset. */
function classToJavaScript(
  pattern: string,
  open: number,
  mode: Mode,
): { source: string; end: number } | null {
  let i = open + 1;
  let out = "[";
  if (pattern[i] === "^") {
    out += `^${mode.negatedClassExtra}`;
    i++;
  }
  // RE2 takes a `]` right after `[` or `[^` as a literal; JavaScript as the class's end.
  if (pattern[i] === "]") {
    out += "\\]";
    i++;
  }
  for (; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c.charCodeAt(0) > 0x7e || c.charCodeAt(0) < 0x20) return null;
    if (c === "]")
      return out === "[" || out === `[^${mode.negatedClassExtra}`
        ? null
        : { source: `${out}]`, end: i };
    if (c === "[") {
      if (pattern[i + 1] === ":") return null;
      out += "\\[";
      continue;
    }
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) return null;
      i++;
      if (next === "s") out += mode.classSpace;
      else if (next === "n" && mode.noNewline) return null;
      else if (next === "w" || next === "d" || "tnrf".includes(next)) out += `\\${next}`;
      else if (/[!-/:-@[-`{-~]/.test(next)) out += `\\${next}`;
      else return null;
      continue;
    }
    out += c;
  }
  return null;
}
