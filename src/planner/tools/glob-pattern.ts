import { RE2JS } from "re2js";
import { err, ok, type Result } from "../../protocol/index.ts";

/**
 * Glob patterns the model writes (Glob's `pattern`, Grep's `glob`), translated to an RE2
 * regular expression and matched with re2js, which runs in time linear in the path whatever the
 * pattern: a glob like `*a*a*a*a*a*a*a*a*a*b` backtracks exponentially in a regex-based glob
 * library (picomatch took minutes on one 40-character name), never here.
 *
 * Supported syntax (the everyday subset of picomatch/bash globs, dotfiles included):
 * - `*` any run of characters within one path segment; `?` one character (never `/`);
 * - `**` as a whole segment: any number of segments, none included (`src/**`, `**\/*.ts`);
 *   elsewhere it acts like `*`;
 * - `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` one character of (or not of) a set, never `/`;
 * - `{a,b}` alternatives, nestable (`src/{api,db/{models,migrations}}/*`);
 * - `\x` the character x literally. Every other character (`(`, `)`, `|`, `+`, `@`, `!`) is
 *   literal; extglobs (`@(a|b)`, `!(x)`, `+(x)`, `*(x)`, `?(x)`) and a leading `!` are refused
 *   with a reason rather than silently matched differently from what the model meant.
 */

/** Where the tool descriptions say what a glob may contain. */
export const GLOB_SYNTAX =
  "*, ** (whole segments), ?, [abc], [a-z], [!abc], {a,b} (nestable), \\ escapes; dotfiles included";

const EXTGLOB = /[@!+*?]\(/;

/**
 * Translates a glob to the source of an anchored RE2 regular expression.
 *
 * @example
 * globToRegExpSource("*.{ts,tsx}") // { ok: true, value: "^[^/]*\\.(?:ts|tsx)$" }
 * globToRegExpSource("!(a)")               // err("…extglob…")
 */
export function globToRegExpSource(glob: string): Result<string, string> {
  const extglob = firstExtglob(glob);
  if (extglob !== null) {
    return err(
      `The glob "${clip(glob)}" uses the extglob "${extglob}", which is not supported: write alternatives as {a,b}. Supported: ${GLOB_SYNTAX}.`,
    );
  }
  if (glob.startsWith("!")) {
    return err(
      `The glob "${clip(glob)}" starts with "!": negated globs are not supported. Supported: ${GLOB_SYNTAX}.`,
    );
  }
  return ok(`^${new GlobTranslator(glob).translate()}$`);
}

/**
 * A compiled glob: a linear-time test of a repository-relative path.
 *
 * @example
 * const glob = compileGlob("**\/*.test.ts");
 * glob.ok && glob.value("test/a.test.ts") // true
 */
export function compileGlob(glob: string): Result<(path: string) => boolean, string> {
  const source = globToRegExpSource(glob);
  if (!source.ok) return source;
  let re: RE2JS;
  try {
    re = RE2JS.compile(source.value, RE2JS.DOTALL);
  } catch (error) {
    // The translator escapes everything it does not interpret, so this means a pattern too
    // large for the engine (RE2's own limit), not bad syntax.
    return err(`The glob "${clip(glob)}" could not be compiled: ${(error as Error).message}.`);
  }
  return ok((path: string) => re.test(path));
}

/** The first extglob opener outside brackets and escapes, or null. */
function firstExtglob(glob: string): string | null {
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "[") {
      const end = classEnd(glob, i);
      if (end !== -1) {
        i = end;
        continue;
      }
    }
    if (EXTGLOB.test(glob.slice(i, i + 2))) return glob.slice(i, i + 2);
  }
  return null;
}

/**
 * Index of the `]` closing the bracket expression opened at `open`, or -1 (then `[` is a
 * literal). A `]` right after `[`, `[!` or `[^` belongs to the set.
 */
function classEnd(glob: string, open: number): number {
  let i = open + 1;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++;
  for (; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "]") return i;
  }
  return -1;
}

/**
 * Recursive descent over the glob; each method returns RE2 source. Brace groups are found in
 * one pass first (a stack of `{`), so nesting costs linear time however deep it goes.
 */
class GlobTranslator {
  #i = 0;
  readonly #braces: Braces;

  constructor(private readonly glob: string) {
    this.#braces = findBraces(glob);
  }

  translate(): string {
    return this.#sequence(false);
  }

  /** A run of glob syntax up to the end, or (inside braces) up to its group's `,` or `}`. */
  #sequence(inBraces: boolean): string {
    const glob = this.glob;
    let out = "";
    while (this.#i < glob.length) {
      const at = this.#i;
      const c = glob[at]!;
      if (inBraces && this.#braces.separators.has(at)) break;
      const trailing = c === "/" ? trailingGlobstars(glob, at, this.#braces) : at;
      if (trailing > at) {
        // A trailing `/**` (or `/**/**`…): the folder itself or anything below it.
        out += "(?:/.*)?";
        this.#i = trailing;
      } else if (c === "*") out += this.#star();
      else if (c === "?") {
        out += "[^/]";
        this.#i++;
      } else if (c === "[") out += this.#bracket();
      else if (c === "{" && this.#braces.groups.has(at)) out += this.#group();
      else if (c === "\\") {
        // A trailing backslash stands for itself.
        const next = glob[at + 1];
        out += literal(next ?? "\\");
        this.#i += next === undefined ? 1 : 2;
      } else {
        out += literal(c);
        this.#i++;
      }
    }
    return out;
  }

  /** `*`, or `**` filling a whole segment (then `**` + `/` is any number of whole segments). */
  #star(): string {
    const glob = this.glob;
    const start = this.#i;
    let end = start;
    while (glob[end] === "*") end++;
    this.#i = end;
    const whole =
      end - start >= 2 &&
      segmentStartAt(glob, start, this.#braces) &&
      segmentEndAt(glob, end, this.#braces);
    if (!whole) return "[^/]*";
    if (glob[end] === "/") {
      this.#i++;
      return "(?:[^/]*/)*";
    }
    return ".*";
  }

  /** `[...]`: one character of a set (or not of it), never `/`; an unclosed `[` is literal. */
  #bracket(): string {
    const glob = this.glob;
    const open = this.#i;
    const close = classEnd(glob, open);
    if (close === -1) {
      this.#i++;
      return literal("[");
    }
    let i = open + 1;
    const negated = glob[i] === "!" || glob[i] === "^";
    if (negated) i++;
    const ranges: [number, number][] = [];
    const next = (): number => {
      let cp = glob.codePointAt(i)!;
      if (cp === BACKSLASH && i + 1 < close) {
        i++;
        cp = glob.codePointAt(i)!;
      }
      i += cp > 0xffff ? 2 : 1;
      return cp;
    };
    while (i < close) {
      const from = next();
      let to = from;
      if (glob[i] === "-" && i + 1 < close) {
        i++;
        to = next();
      }
      if (from <= to) ranges.push([from, to]);
    }
    this.#i = close + 1;
    if (negated) return `[^/${ranges.map(rangeSource).join("")}]`;
    const withoutSlash = ranges.flatMap(([lo, hi]): [number, number][] => {
      if (SLASH < lo || SLASH > hi) return [[lo, hi]];
      const parts: [number, number][] = [];
      if (lo < SLASH) parts.push([lo, SLASH - 1]);
      if (hi > SLASH) parts.push([SLASH + 1, hi]);
      return parts;
    });
    // `[/]` (or an empty range like `[z-a]`) matches no character of a path segment.
    if (withoutSlash.length === 0) return NOTHING;
    return `[${withoutSlash.map(rangeSource).join("")}]`;
  }

  /** `{a,b,…}` → `(?:a|b|…)`. */
  #group(): string {
    const alternatives: string[] = [];
    do {
      this.#i++; // the `{` or `,`
      alternatives.push(this.#sequence(true));
    } while (this.glob[this.#i] === ",");
    this.#i++; // the `}`
    return `(?:${alternatives.join("|")})`;
  }
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
/** A class no character is in. */
const NOTHING = "[^\\x00-\\x{10FFFF}]";

interface Braces {
  /** Indexes of each `{` that opens a group (it has a `,` at its own level and a `}`). */
  groups: Set<number>;
  /** Indexes of the `,` and `}` that belong to a group. */
  separators: Set<number>;
}

/**
 * Finds the brace groups in one pass. A `{` without a `,` at its level, or never closed, is a
 * literal, and so are its `,` and `}`; escapes and bracket expressions are skipped.
 */
function findBraces(glob: string): Braces {
  const groups = new Set<number>();
  const separators = new Set<number>();
  const open: { at: number; commas: number[] }[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") i++;
    else if (c === "[") {
      const end = classEnd(glob, i);
      if (end !== -1) i = end;
    } else if (c === "{") open.push({ at: i, commas: [] });
    else if (c === "," && open.length > 0) open[open.length - 1]!.commas.push(i);
    else if (c === "}" && open.length > 0) {
      const group = open.pop()!;
      if (group.commas.length === 0) continue;
      groups.add(group.at);
      for (const comma of group.commas) separators.add(comma);
      separators.add(i);
    }
  }
  return { groups, separators };
}

/** A segment starts at `at`: the pattern's start, after `/`, or at the start of an alternative. */
function segmentStartAt(glob: string, at: number, braces: Braces): boolean {
  if (at === 0) return true;
  const before = at - 1;
  return glob[before] === "/" || braces.groups.has(before) || braces.separators.has(before);
}

/**
 * Where a run of `/**` segments starting at `at` ends, when nothing but the end of the
 * pattern (or of an alternative) follows it; else `at`.
 */
function trailingGlobstars(glob: string, at: number, braces: Braces): number {
  let end = at;
  while (glob.startsWith("/**", end) && (glob[end + 3] === "/" || segmentEnd(glob, end + 3))) {
    end += 3;
    if (segmentEnd(glob, end)) return end;
  }
  return at;

  function segmentEnd(g: string, i: number): boolean {
    return i >= g.length || braces.separators.has(i);
  }
}

/** A segment ends at `at`: the pattern's end, a `/`, or the end of an alternative. */
function segmentEndAt(glob: string, at: number, braces: Braces): boolean {
  return at >= glob.length || glob[at] === "/" || braces.separators.has(at);
}

function rangeSource([from, to]: [number, number]): string {
  const one = (cp: number) => `\\x{${cp.toString(16)}}`;
  return from === to ? one(from) : `${one(from)}-${one(to)}`;
}

/** One character as an RE2 literal. */
function literal(c: string): string {
  return /[\\^$.|?*+()[\]{}]/.test(c) ? `\\${c}` : c;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
