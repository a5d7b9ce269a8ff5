import { MAX_TOKEN_CHARS, pathMentions } from "../task/terms.ts";

/**
 * What a reviewer's words point at, before any verb is read: the paths they name, the names
 * they write as code (`getCookie`, `Config.from_file`, `FlaskClient`), and the kinds of files
 * they speak of ("the tests", "the docs", "a changelog entry", "the configuration", "the
 * types"). Pure. The reader (reader.ts) sees a clause with each of these replaced by a
 * placeholder (`§0§`), so its patterns read the verbs around them and never a name's words.
 */

/** Kinds of files a reviewer speaks of without naming one. */
export type FileKind = "tests" | "docs" | "changelog" | "config" | "types";

export type Target =
  /** A file path as written (`src/flask/testing.py`, `wrappers.py`); `symbol` qualifies it. */
  | { type: "path"; text: string; symbol?: string }
  /** A name written as code: the file that defines it is meant. */
  | { type: "symbol"; text: string }
  /** Every file of a kind the plan lists (or should list). */
  | { type: "kind"; kind: FileKind; text: string }
  /** Plain words after an explicit verb: the modules they name ("the cache and language files"). */
  | { type: "words"; text: string }
  /** "this", "it": the passage a comment quotes. */
  | { type: "passage"; text: string };

/** A clause with its targets taken out: `masked` holds `§i§` where `targets[i]` was. */
export interface MaskedClause {
  masked: string;
  targets: Target[];
  /** Targets folded into another (the `FlaskClient` of `testing.py (FlaskClient)`). */
  absorbed: Set<number>;
}

/** The placeholder of target `i`. */
export const slot = (i: number) => `§${i}§`;

// Each kind's phrases, longest first; matched on lower-case text outside code spans and paths.
// A test noun followed by what it qualifies ("the test client", "test helpers") is no test.
const NOT_TESTS =
  "(?!\\s+(?:client|clients|helper|helpers|app|apps|runner|utils?|data|server|fixtures?|mode|env|environment|doubles?|stubs?|mocks?|this|it|that|them|these|those|passes|pass|fails?|failing|passing|runs?)\\b)";
const KIND_PATTERNS: [FileKind, RegExp][] = [
  [
    "changelog",
    /\b(?:(?:a|an|the)\s+)?(?:change\s?log|changes file|release notes?|news (?:entry|fragment|file)|history (?:entry|file)|whats?\s?new)(?:\s+(?:entry|entries|file|note|notes|line))?\b/g,
  ],
  [
    "docs",
    /\b(?:(?:the|a|an)\s+)?(?:api\s+|user\s+|reference\s+)?(?:documentation|docs?(?:\s+(?:page|pages|site|folder|entry|entries|files?))?|readme(?!\.)|user guide|guides?)\b(?![-./])/g,
  ],
  [
    "tests",
    new RegExp(
      `\\b(?:(?:a|an|the|some|any|more|new|additional|extra)\\s+)?(?:unit\\s+|integration\\s+|regression\\s+|e2e\\s+|end-to-end\\s+|functional\\s+)?(?:test\\s?cases?|test\\s+files?|test\\s+suites?|test\\s+coverage|tests?|specs|coverage)\\b(?![-./_])${NOT_TESTS}`,
      "g",
    ),
  ],
  [
    "config",
    /\b(?:(?:the|a|an)\s+)?(?:configuration|config|settings|ci)\s+files?\b|\b(?:the\s+)?configuration\b(?![-./])/g,
  ],
  [
    "types",
    /\b(?:(?:the|a|an)\s+)?(?:type\s+(?:definitions?|declarations?|hints?|stubs?|annotations?)|typings|types(?:\s+files?)?)\b(?![-./])/g,
  ],
];

/** Words that start a sentence or are English, never a name written as code. */
const NOT_CODE =
  /^(?:I|A|OK|TODO|FIXME|NB|PR|PRs|CI|API|APIs|URL|URLs|HTTP|JSON|IMO|IMHO|LGTM|TL;DR)$/;

/**
 * A clause with its targets masked.
 *
 * @example
 * maskTargets("leave the tests out; it belongs in src/a.py (Client)")
 * // { masked: "leave §0§ out; it belongs in §1§", targets: [{ type: "kind", kind: "tests", … }, { type: "path", text: "src/a.py", symbol: "Client" }] }
 */
export function maskTargets(clause: string): MaskedClause {
  const targets: Target[] = [];
  const absorbed = new Set<number>();
  const put = (target: Target) => {
    targets.push(target);
    return ` ${slot(targets.length - 1)} `;
  };
  // Links and images are references, never targets: `github.com` is no name of this code.
  const plain = clause.replace(
    /!?\[[^\]\n]*\]\([^)\s]*\)|<img\b[^>]*>?|\bhttps?:\/\/\S+|\bwww\.\S+/g,
    " ",
  );
  // Code spans first: what is in backticks is a path or a name, whatever its words.
  let text = plain.replace(/`([^`\n]{1,200})`/g, (_, inner: string) => {
    const code = inner.trim();
    const path = pathMentions(code)[0];
    if (path !== undefined && path.length >= code.length - 2)
      return put({ type: "path", text: path });
    const name = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*/.exec(code)?.[0];
    return name !== undefined && name.length <= MAX_TOKEN_CHARS
      ? put({ type: "symbol", text: name })
      : " ";
  });
  // Paths: a run of path characters that names a file.
  for (const path of pathMentions(text).sort((a, b) => b.length - a.length)) {
    const at = new RegExp(`(^|[^\\w./-])${escapeRegExp(path)}(?![\\w/-]|\\.[A-Za-z])`, "g");
    text = text.replace(at, (_, before: string) => `${before}${put({ type: "path", text: path })}`);
  }
  // Names written as code: dotted names, camelCase, PascalCase with an inner capital,
  // snake_case, and calls (`parse()`).
  text = text.replace(
    /(?<![\w§$])(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:\(\))?|(?<![\w§$])[A-Za-z_$][\w$]*\(\)|(?<![\w§$])(?:[a-z_$][a-z0-9_$]*[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*|[A-Za-z][A-Za-z0-9]*_[\w$]+)(?![\w$])/g,
    (m: string) => {
      const name = m.replace(/\(\)$/, "");
      if (name.length > MAX_TOKEN_CHARS || NOT_CODE.test(name) || /^e\.g|^i\.e/i.test(name))
        return m;
      return put({ type: "symbol", text: name });
    },
  );
  // "src/flask/testing.py (FlaskClient)": the name says where in the file, it is the same target.
  text = text.replace(/§(\d+)§\s*\(\s*§(\d+)§\s*\)/g, (m, a: string, b: string) => {
    const path = targets[Number(a)];
    const name = targets[Number(b)];
    if (path?.type !== "path" || name?.type !== "symbol") return m;
    path.symbol = name.text;
    absorbed.add(Number(b));
    return slot(Number(a));
  });
  // Kinds, on the lower-case rest.
  let lower = text.toLowerCase();
  for (const [kind, pattern] of KIND_PATTERNS)
    lower = lower.replace(pattern, (m: string) => put({ type: "kind", kind, text: m.trim() }));
  return { masked: lower.replace(/\s+/g, " ").trim(), targets, absorbed };
}

/** The target indices a stretch of masked text holds, in order. */
export function slotsIn(text: string): number[] {
  return [...text.matchAll(/§(\d+)§/g)].map((m) => Number(m[1]));
}

/** The masked text with targets written back as they were said (for quoting). */
export function unmask(masked: string, targets: readonly Target[]): string {
  return masked.replace(/§(\d+)§/g, (_, i: string) => said(targets[Number(i)]!));
}

/** A target as the reviewer wrote it. */
export function said(target: Target): string {
  switch (target.type) {
    case "path":
      return target.symbol !== undefined ? `${target.text} (${target.symbol})` : target.text;
    case "symbol":
      return `\`${target.text}\``;
    default:
      return target.text;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
