import { caseVariants, escapeRegExp, splitIdentifier, stem } from "../task/terms.ts";
import { type Language, languageOf } from "./paths.ts";

/**
 * The definitions index: which file defines which names — functions, classes, methods,
 * types, exported constants, routes and configuration keys — for JS/TS, Python, Go, Rust,
 * Java/Kotlin and Ruby (C and PHP roughly). Two halves, both pure:
 *
 * - {@link definitionSearch}: one Grep pattern (RE2: linear time, no lookaround) that finds
 *   the lines defining a name that contains one of a few terms, in any of these languages;
 *   its spellings are literals, so Grep rules out most files at `indexOf` speed;
 * - {@link parseDefinition}: what such a line defines, read precisely per language, so the
 *   loose search never decides on its own. A file that *defines* a term outranks files that
 *   only mention it.
 */

export type DefinitionKind =
  | "function"
  | "method"
  | "class"
  | "type"
  | "module"
  | "constant"
  | "field"
  | "route"
  | "key";

export interface Definition {
  name: string;
  kind: DefinitionKind;
  /** 1-based line number. */
  line: number;
}

/** Longest line read for a definition (Grep shows at most 500 characters of one). */
const MAX_LINE_CHARS = 500;

/** Words that open a statement, never a definition, where a method would stand. */
const NOT_A_NAME = new Set(
  "if for while switch catch return function new else do try with elif except finally typeof await yield throw case import export from require super this self print puts raise assert defer go select match loop unless until when".split(
    " ",
  ),
);

type Rule = [RegExp, DefinitionKind];

const JS_RULES: Rule[] = [
  [
    /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)/,
    "function",
  ],
  [
    /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)/,
    "class",
  ],
  [
    /^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/,
    "type",
  ],
  [/^(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)/, "constant"],
  [
    /^\s*(?:[\w$]+\.)*([A-Za-z_$][\w$]*)\s*[=:]\s*(?:async\s+)?(?:function\b|\([^)]{0,200}\)\s*(?::[^=]{0,100})?=>|[A-Za-z_$][\w$]*\s*=>)/,
    "function",
  ],
  [
    /^\s+(?:(?:public|private|protected|static|async|override|abstract|readonly|get|set|declare)\s+)*\*?\s*([A-Za-z_$][\w$]*)\s*(?:<[^>]{0,100}>)?\s*\([^;]{0,300}\{\s*$/,
    "method",
  ],
  [
    /^\s+(?:(?:public|private|protected|static|abstract|readonly|declare)\s+)*([A-Za-z_$][\w$]*)\s*\??\s*(?:\([^)]{0,200}\)\s*)?:\s*[^,]{1,300};?\s*$/,
    "field",
  ],
  [/\.(?:get|post|put|patch|delete|all|route|use)\s*\(\s*['"`](\/[^'"`]{0,200})/, "route"],
];

const PY_RULES: Rule[] = [
  [/^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)/, "function"],
  [/^\s*class\s+([A-Za-z_]\w*)/, "class"],
  [/^([A-Za-z_]\w*)\s*(?::[^=]{0,100})?=(?!=)/, "constant"],
  [/^\s*@[\w.]*\.(?:route|get|post|put|patch|delete)\(\s*['"]([^'"]{1,200})/, "route"],
];

const GO_RULES: Rule[] = [
  [/^func\s+(?:\([^)]{0,200}\)\s*)?([A-Za-z_]\w*)/, "function"],
  [/^type\s+([A-Za-z_]\w*)/, "type"],
  [/^\s+([A-Z]\w*)\s+(?:struct|interface)\s*\{/, "type"],
  [/^(?:var|const)\s+([A-Za-z_]\w*)/, "constant"],
  [/^\s+([A-Z]\w*)\s+[*[\]\w.]+(?:\s+`[^`]{0,200}`)?\s*(?:\/\/.*)?$/, "field"],
  [
    /\.(?:Get|Post|Put|Patch|Delete|Handle|HandleFunc|Method|Route|Mount)\(\s*"([^"]{1,200})"/,
    "route",
  ],
];

const RS_RULES: Rule[] = [
  [
    /^\s*(?:pub(?:\([^)]{0,40}\))?\s+)?(?:(?:async|const|unsafe|extern(?:\s+"[^"]*")?)\s+)*fn\s+([A-Za-z_]\w*)/,
    "function",
  ],
  [/^\s*(?:pub(?:\([^)]{0,40}\))?\s+)?(?:struct|enum|trait|type|union)\s+([A-Za-z_]\w*)/, "type"],
  [/^\s*(?:pub(?:\([^)]{0,40}\))?\s+)?mod\s+([A-Za-z_]\w*)/, "module"],
  [/^\s*(?:pub(?:\([^)]{0,40}\))?\s+)?(?:const|static)\s+([A-Za-z_]\w*)/, "constant"],
  [/^\s*impl(?:<[^>]{0,100}>)?\s+(?:[\w:]+(?:<[^>]{0,100}>)?\s+for\s+)?([A-Za-z_]\w*)/, "type"],
  [/^\s*macro_rules!\s*([A-Za-z_]\w*)/, "function"],
  [/^\s*(?:pub(?:\([^)]{0,40}\))?\s+)?([a-z_]\w*)\s*:\s*[^,=]{1,200},?\s*$/, "field"],
];

const JAVA_RULES: Rule[] = [
  [
    /^\s*(?:(?:public|private|protected|static|final|abstract|sealed|open|data|internal|inline|enum|annotation)\s+)*(?:class|interface|enum|record|object|@interface)\s+([A-Za-z_]\w*)/,
    "class",
  ],
  [
    /^\s*(?:(?:public|private|protected|internal|override|suspend|inline|open)\s+)*fun\s+(?:<[^>]{0,100}>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)/,
    "method",
  ],
  [
    /^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|default)\s+)*(?:<[^>]{0,100}>\s*)?[\w.$]+(?:<[^()]{0,200}>)?(?:\[\])*\s+([A-Za-z_]\w*)\s*\([^;]{0,300}$/,
    "method",
  ],
  [/\bstatic\s+final\s+[\w.<>[\]]+\s+([A-Z_][A-Z0-9_]*)\s*=/, "constant"],
];

const RB_RULES: Rule[] = [
  [/^\s*def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)/, "method"],
  [/^\s*(?:class|module)\s+(?:[A-Z]\w*::)*([A-Z]\w*)/, "class"],
  [/^\s*attr_(?:reader|writer|accessor)\s+:(\w+)/, "field"],
  [/^\s*([A-Z][A-Z0-9_]*)\s*=(?!=)/, "constant"],
  [/^\s*(?:set|option|enable|disable)\s+:(\w+)/, "key"],
  [/^\s*(?:get|post|put|patch|delete)\s+['"]([^'"]{1,200})/, "route"],
];

const C_RULES: Rule[] = [
  [
    /^\s*(?:static\s+|inline\s+|extern\s+)*[A-Za-z_][\w\s*]{0,80}?\b([A-Za-z_]\w*)\s*\([^;]{0,300}$/,
    "function",
  ],
  [/^\s*(?:typedef\s+)?(?:struct|enum|union|class)\s+([A-Za-z_]\w*)/, "type"],
  [/^\s*#define\s+([A-Za-z_]\w*)/, "constant"],
];

const PHP_RULES: Rule[] = [
  [
    /^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*function\s+&?([A-Za-z_]\w*)/,
    "function",
  ],
  [/^\s*(?:(?:final|abstract)\s+)?(?:class|interface|trait|enum)\s+([A-Za-z_]\w*)/, "class"],
];

const CONFIG_RULES: Rule[] = [[/^\s*["']?([A-Za-z_][\w.-]{0,100})["']?\s*[:=]/, "key"]];

const RULES: Record<Language, Rule[]> = {
  js: JS_RULES,
  py: PY_RULES,
  go: GO_RULES,
  rs: RS_RULES,
  java: JAVA_RULES,
  rb: RB_RULES,
  c: C_RULES,
  php: PHP_RULES,
};

const CONFIG_FILE = /\.(json|ya?ml|toml|ini|cfg|conf|properties)$/i;

/**
 * What one line of `path` defines, or null. The rules are per language (from the extension);
 * configuration files define keys.
 *
 * @example
 * parseDefinition("src/a.ts", "export async function getQueryString(url) {") // { name: "getQueryString", kind: "function" }
 * parseDefinition("mux.go", "func (mx *Mux) Find(rctx *Context) string {") // { name: "Find", kind: "function" }
 * parseDefinition("src/a.ts", "  if (x) {") // null
 */
export function parseDefinition(
  path: string,
  line: string,
): { name: string; kind: DefinitionKind } | null {
  const language = languageOf(path);
  const rules = language !== null ? RULES[language] : CONFIG_FILE.test(path) ? CONFIG_RULES : null;
  if (rules === null) return null;
  const text = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
  if (/^\s*(?:\/\/|#(?!define)|\/?\*|--)/.test(text)) return null;
  for (const [re, kind] of rules) {
    const m = re.exec(text);
    const name = m?.[1];
    if (name === undefined || NOT_A_NAME.has(name)) continue;
    // A JS field rule also matches `case x:` and labels: only type members and keys count.
    if (kind === "field" && language === "js" && /^\s*(?:case|default)\b/.test(text)) continue;
    return { name, kind };
  }
  return null;
}

/**
 * Every definition in a file's numbered lines (the outline of a file the planner read).
 *
 * @example
 * outline("a.py", [[1, "class A:"], [2, "    def run(self):"]]) // [{ name: "A", kind: "class", line: 1 }, { name: "run", kind: "function", line: 2 }]
 */
export function outline(path: string, lines: readonly [number, string][]): Definition[] {
  const out: Definition[] = [];
  for (const [line, text] of lines) {
    const d = parseDefinition(path, text);
    if (d !== null && d.kind !== "field" && d.kind !== "route") out.push({ ...d, line });
    else if (d !== null) out.push({ ...d, line });
  }
  return out;
}

/**
 * How well a defined name matches a search term: 2 when the name *is* the term (a whole
 * identifier from the task: `getQueryString`), 1 when one of its words or a run of them is
 * the term (`createSession` for `session`, `getQueryString` for `querystring`), 0 otherwise. Words are compared by stem, so `Sessions`
 * matches `session`; a longer word the term only begins (`sessionless`) does not count.
 *
 * @example
 * nameMatch("createSession", "session") // 1
 * nameMatch("getQueryString", "getquerystring") // 2
 * nameMatch("obsession", "session") // 0
 */
export function nameMatch(name: string, term: string): number {
  const parts = splitIdentifier(name);
  if (parts.join("") === term) return 2;
  for (const part of parts) {
    if (part === term || stem(part) === term) return 1;
    if (part.startsWith(term) && part.length - term.length <= 2) return 1;
  }
  // A run of its words: `getQueryString` holds the identifier `QueryString`.
  for (let from = 0; from < parts.length; from++) {
    let run = parts[from]!;
    for (let to = from + 1; to < parts.length && run.length < term.length; to++) {
      run += parts[to];
      if (run === term) return 1;
    }
  }
  return 0;
}

/** Definition keywords across the languages (the name follows them). */
const KEYWORDS =
  "def|class|module|function|func|fn|struct|enum|trait|interface|type|impl|mod|const|let|var|static|record|object|fun|namespace|macro_rules!|attr_\\w+";
/** Modifiers that open a method or field declaration (Java, Kotlin, TypeScript, C#). */
const MODIFIERS =
  "public|private|protected|static|final|abstract|synchronized|async|override|readonly|export|default|internal|open|suspend";

/**
 * One Grep pattern (under Grep's 1,000 characters for up to five terms) that finds lines
 * defining a name that contains any of `terms` (lower-case stems, in their three spellings),
 * in any supported language. Two halves share one name alternation each:
 *
 * - a definition keyword (`def`, `class`, `func` with a Go receiver, `fn`, `function`, `type`,
 *   `const`, Ruby `attr_*` …), modifiers (Java, Kotlin, TypeScript methods), or a route or
 *   setting (`.get("/login"`, Sinatra `get '/x'`, `set :server`) before the name;
 * - a name at the start of a line (or after a dot) followed by what makes it a definition: `= function` / `: () =>`, a
 *   parameter list opening a body (`run(x) {`), a typed member or key (`retry?: number;`,
 *   YAML `retry:`), a Go struct field with a tag.
 *
 * Precision comes afterwards, from {@link parseDefinition}.
 *
 * @example
 * new RegExp(definitionSearch(["session"])).test("export function createSession(id) {") // true
 */
export function definitionSearch(
  terms: readonly (string | { text: string; spellings?: readonly string[] })[],
): string {
  const spelled = terms
    .flatMap((t) =>
      typeof t === "string" ? caseVariants(t) : (t.spellings ?? caseVariants(t.text)),
    )
    .map(escapeRegExp);
  const name = `[\\w$]*(?:${[...new Set(spelled)].join("|")})[\\w$]*`;
  const before = [
    `(?:^|[^\\w$.])(?:${KEYWORDS})\\s+(?:\\*\\s*)?(?:\\([^)]*\\)\\s*)?(?:self\\.|:)?`,
    `^\\s*(?:(?:${MODIFIERS})\\s+)+[^=;(]*`,
    `(?:^|[.\\s])(?:[Gg]et|[Pp]ost|[Pp]ut|[Pp]atch|[Dd]elete|[Rr]oute|[Hh]andle\\w*|set|option)\\s*\\(?\\s*[:'"\`][^'"\`]*`,
  ];
  const after = [
    `\\s*[:=]\\s*(?:async\\s+)?(?:function|\\()`,
    `\\s*\\([^;]*\\{\\s*$`,
    `["']?\\??:\\s*[^,]*$`,
    `\\s+[\\[\\]*\\w.]+\\s+\``,
  ];
  return `(?:${before.join("|")})${name}|(?:^\\s*(?:async\\s+|readonly\\s+)?["']?|[.\\s])${name}(?:${after.join("|")})`;
}
