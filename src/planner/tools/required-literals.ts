/**
 * Literal strings one of which every match of a pattern must contain, found by a small parse
 * of the pattern: `(TODO|FIXME)` needs "TODO" or "FIXME", `function\s+\w+Error` needs
 * "function" (and "Error"). Grep looks for them with `indexOf` before asking the regular
 * expression engine, so a file without any is ruled out at memory speed — RE2's DFA takes
 * ~15 ms per MB on an alternation, `indexOf` a fraction of that. Pure and conservative:
 * anything the parse does not understand (case-insensitive flags, escapes it does not know,
 * `\Q…\E`) gives no literals, which only costs speed, never a missed line.
 */

/** Shortest literal worth a prefilter (a one- or two-character search saves little). */
const MIN_LITERAL_CHARS = 3;
/** Most alternatives a prefilter looks for. */
const MAX_LITERALS = 16;

/** Escapes that stand for one literal character. */
const LITERAL_ESCAPES = new Set([..."\\.+*?()[]{}|^$/-#&~!\"'%,:;<=>@`_ "]);

/**
 * What every match of `pattern` must contain: one string of each returned set (a line that
 * lacks all strings of any one set cannot match). Null when nothing useful is known.
 *
 * @example
 * requiredLiterals("(TODO|FIXME|XXX)")    // [["TODO", "FIXME", "XXX"]]
 * requiredLiterals("function\\s+\\w+Error") // [["function"], ["Error"]]
 * requiredLiterals("(?i)todo")            // null
 */
export function requiredLiterals(pattern: string): string[][] | null {
  try {
    const parser = new Parser(pattern);
    const found = parser.alternation();
    if (parser.at < pattern.length) return null;
    // Alternatives repeated across branches (`(a|b)x|(a|b)y`) count once.
    const useful = found.all
      .map((set) => [...new Set(set)])
      .filter(
        (set) => set.length <= MAX_LITERALS && set.every((s) => s.length >= MIN_LITERAL_CHARS),
      );
    return useful.length === 0 ? null : useful;
  } catch {
    return null;
  }
}

/** What a piece of pattern tells: its exact text when it is a plain literal, and what it needs. */
interface Need {
  /** The piece matches exactly this string (and nothing else), or null. */
  exact: string | null;
  /** Every match of the piece contains one string of each of these sets ([] = unknown). */
  all: string[][];
}

const NOTHING_KNOWN: Need = { exact: null, all: [] };

class GiveUp extends Error {}

class Parser {
  at = 0;

  constructor(private readonly p: string) {}

  alternation(): Need {
    const branches = [this.concatenation()];
    while (this.p[this.at] === "|") {
      this.at++;
      branches.push(this.concatenation());
    }
    if (branches.length === 1) return branches[0]!;
    // A set every branch needs is needed by the whole: `(a|b)x|(a|b)y` needs a or b.
    const key = (set: readonly string[]) => JSON.stringify([...new Set(set)].sort());
    const shared = branches[0]!.all.filter((set) =>
      branches.every((b) => b.all.some((other) => key(other) === key(set))),
    );
    if (shared.length > 0) return { exact: null, all: shared };
    // A match contains what one of the branches needs: one set, the union of their best.
    const bests = branches.map((b) => best(b.all));
    if (bests.some((b) => b === null)) return NOTHING_KNOWN;
    return { exact: null, all: [bests.flatMap((b) => b!)] };
  }

  concatenation(): Need {
    const all: string[][] = [];
    let run = "";
    let whole = true;
    const close = () => {
      if (run !== "") all.push([run]);
      run = "";
    };
    while (this.at < this.p.length && this.p[this.at] !== "|" && this.p[this.at] !== ")") {
      const item = this.item();
      const quantifier = this.quantifier();
      if (quantifier === "one" && item.exact !== null) {
        run += item.exact;
        continue;
      }
      whole = false;
      close();
      // A piece that must occur at least once still needs what it needs.
      if (quantifier !== "optional") all.push(...item.all);
    }
    const exact = whole ? run : null;
    close();
    return { exact, all };
  }

  /** One atom: a group, a class, an escape, `.`, an anchor or a character. */
  item(): Need {
    const p = this.p;
    const c = p[this.at]!;
    if (c === "(") return this.group();
    if (c === "[") {
      this.skipClass();
      return NOTHING_KNOWN;
    }
    if (c === "\\") {
      const next = p[this.at + 1];
      if (next === undefined) throw new GiveUp();
      this.at += 2;
      if (LITERAL_ESCAPES.has(next)) return literal(next);
      // Classes (\d \w \s \pL…), anchors (\b \A \z) and anything else: no literal here.
      if (next === "p" || next === "P") this.skipUnicodeClass();
      else if (!/[dDwWsSbBAzntrfv]/.test(next)) throw new GiveUp();
      return NOTHING_KNOWN;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{") throw new GiveUp();
    this.at++;
    if (c === "." || c === "^" || c === "$") return NOTHING_KNOWN;
    // A surrogate pair is one character.
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdbff && this.at < p.length) return literal(c + p[this.at++]!);
    return literal(c);
  }

  group(): Need {
    const p = this.p;
    this.at++; // (
    if (p[this.at] === "?") {
      const flags = /^\?([a-zA-Z-]*)([:)])/.exec(p.slice(this.at, this.at + 12));
      const named = /^\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(p.slice(this.at, this.at + 40));
      if (named) this.at += named[0].length;
      else if (flags) {
        // Case-insensitive matching breaks literal search; other flags do not matter here.
        if (flags[1]!.includes("i")) throw new GiveUp();
        this.at += flags[0].length;
        if (flags[2] === ")") return NOTHING_KNOWN;
      } else throw new GiveUp();
    }
    const inner = this.alternation();
    if (p[this.at] !== ")") throw new GiveUp();
    this.at++;
    return inner;
  }

  /** After an atom: how often it must occur. */
  quantifier(): "one" | "optional" | "at-least-one" {
    const p = this.p;
    const c = p[this.at];
    let kind: "one" | "optional" | "at-least-one" = "one";
    if (c === "*" || c === "?") {
      kind = "optional";
      this.at++;
    } else if (c === "+") {
      kind = "at-least-one";
      this.at++;
    } else if (c === "{") {
      const m = /^\{(\d+)(,\d*)?\}/.exec(p.slice(this.at, this.at + 16));
      if (!m) throw new GiveUp();
      const min = Number(m[1]);
      kind = min === 0 ? "optional" : min === 1 && m[2] === undefined ? "one" : "at-least-one";
      this.at += m[0].length;
    } else return "one";
    if (p[this.at] === "?" || p[this.at] === "+") this.at++; // lazy (or a refused possessive)
    if ("*+?{".includes(p[this.at] ?? "")) throw new GiveUp();
    return kind;
  }

  skipClass(): void {
    const p = this.p;
    let i = this.at + 1;
    if (p[i] === "^") i++;
    if (p[i] === "]") i++;
    for (; i < p.length; i++) {
      if (p[i] === "\\") i++;
      else if (p[i] === "[" && p[i + 1] === ":") {
        const end = p.indexOf(":]", i + 2);
        if (end === -1) throw new GiveUp();
        i = end + 1;
      } else if (p[i] === "]") {
        this.at = i + 1;
        return;
      }
    }
    throw new GiveUp();
  }

  skipUnicodeClass(): void {
    if (this.p[this.at] === "{") {
      const end = this.p.indexOf("}", this.at);
      if (end === -1) throw new GiveUp();
      this.at = end + 1;
    } else this.at++;
  }
}

function literal(text: string): Need {
  return { exact: text, all: [[text]] };
}

/** The set whose shortest string is longest (fewer strings on a tie), or null for none. */
function best(sets: readonly string[][]): string[] | null {
  let chosen: string[] | null = null;
  let score = -1;
  for (const set of sets) {
    const shortest = Math.min(...set.map((s) => s.length));
    if (shortest > score || (shortest === score && chosen !== null && set.length < chosen.length)) {
      chosen = set;
      score = shortest;
    }
  }
  return chosen;
}
