/**
 * Search terms from free text (the task, feedback, answers). Pure.
 *
 * Identifiers are split (`createSession` → `create`, `session`; `user_id` → `user`, `id`) and
 * also kept whole when they look like code, words are lower-cased, stop words and generic
 * developer verbs dropped, and each word lightly stemmed to a prefix that still matches its
 * family as a substring (`invoices` → `invoice`, `rounding` → `round`, `migrations` →
 * `migrat`). Terms are searched case-insensitively as substrings, so a prefix is all we need.
 */

export interface Term {
  /** Lower-case, [a-z0-9], at least {@link MIN_TERM_CHARS} characters. */
  text: string;
  /** 2 for identifiers written as code (`createSession`, `user_id`), 1 for plain words. */
  weight: number;
  /** The word as the input wrote it, lower-case (`identities` for the stem `identit`). */
  surface?: string;
  /** Written as code (in backticks, camelCase, snake_case): a name to look for whole. */
  code?: boolean;
  /** For a whole identifier (`URLFormat`, `user_id`): the ways code spells it, searched as written. */
  spellings?: string[];
  /**
   * The files holding it and their matching lines, when the task's probe counted them whole
   * (evidence.ts): no search of its own is needed.
   */
  counted?: ReadonlyMap<string, number>;
  /** Written as code in the task, yet in no file of the repository (new, or the user's own). */
  absent?: boolean;
  /** A part of this whole identifier's term, and not a word of the task of its own. */
  partOf?: string;
  /**
   * A common word of the task's prose ("check", "accept", "option"): it says how the task is
   * put, not where the change goes, so a file that defines or mentions it is no evidence by
   * that alone ({@link COMMON_WORDS}).
   */
  common?: boolean;
}

export const MIN_TERM_CHARS = 3;
export const MAX_TERMS = 10;
const MIN_STEM_CHARS = 4;
/**
 * Characters of one input (the task, feedback, an answer) the planner reads for terms and
 * file names: the words that steer a search come early, and the rest of a pasted log or blob
 * must not cost more time.
 */
export const MAX_ANALYSED_CHARS = 20_000;
/**
 * Longest token treated as a word or identifier. Longer ones are hashes, base64 or minified
 * code — never a search term (and each would be a 100,000-character "term" otherwise).
 */
export const MAX_TOKEN_CHARS = 64;
/** Longest run of path characters considered as a file name mention. */
export const MAX_PATH_MENTION_CHARS = 256;
/** Most path mentions taken from one input. */
export const MAX_PATH_MENTIONS = 32;

/** English function words plus words every task contains that say nothing about *where*. */
export const STOP_WORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else etc even ever every
few for from further had has have having he her here hers him his how i if in into is it its itself
just least less let like made make makes making many may me might more most much must my need needs no
nor not now of off on once only or other our ours out over own per please rather really same she should
so some still such than that the their theirs them then there these they this those through to too
under until up upon us use used uses using very via want wants was we well were what when where which
while who whom whose why will with within without would yet you your yours
add adds added adding implement implements implemented implementation change changes changed
update updates updated fix fixes fixed fixing create creates new existing current make
support supports code file files function functions method methods class feature features
ensure able instead way ways thing things something someone task plan plans work works also
correct correctly properly proper simple simply better good bad current currently existing
reuse reuses reused reusing keep keeps include includes included
touch touches alone only sure okay thanks forget
test tests testing tested spec specs one two three four five first second show shows display
allow allows allowed allowing avoid avoids handle handles handled handling prevent prevents
explicit explicitly always never again instead properly improve improves improved improvement
optimize optimise optimized optimization simplify simplified simplifies refactor refactored
rework reworked cleanup clean cleans cleaned tweak tweaks follow followup possible possibly
actually already anymore whether`.split(/\s+/),
);

/**
 * Words a task uses in prose that are also names in code: "check that X is set" is not about a
 * `check()` method (Flask's `json/tag.py` defines one per tag), "should accept an option" is
 * not about the `Accept` header nor an `…Options` type. Written as code (in backticks, in an
 * identifier) they are names again.
 */
export const COMMON_WORDS = new Set(["check", "accept", "option", "raise"]);
/** What a common word of the prose weighs, against 1 for a plain word. */
export const COMMON_WORD_WEIGHT = 0.2;

/** Suffixes stripped (longest first) when the rest keeps at least {@link MIN_STEM_CHARS} characters. */
const SUFFIXES = [
  "ations",
  "ation",
  "ments",
  "ment",
  "ings",
  "ing",
  "ies",
  "ied",
  "ers",
  "ed",
  "es",
  "er",
  "ly",
  "s",
];

/**
 * Splits an identifier into lower-case words.
 *
 * @example
 * splitIdentifier("parseHTTPResponse_v2") // ["parse", "http", "response", "v2"]
 */
export function splitIdentifier(identifier: string): string[] {
  const parts = identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
  // A lone capital is part of a brand, not a word of its own: OAuth is "oauth", not "o auth".
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    if (part.length === 1 && /[a-z]/.test(part) && next !== undefined && /^[a-z]/.test(next)) {
      out.push(part + next);
      i++;
    } else out.push(part);
  }
  return out;
}

/**
 * Strips one common suffix, then undoubles a final consonant (`logging` → `logg` → `log`).
 *
 * @example
 * stem("invoices") // "invoice"   stem("rounding") // "round"   stem("user") // "user"
 */
export function stem(word: string): string {
  let out = word;
  for (const suffix of SUFFIXES) {
    // "-es" is a plural ending only after a sibilant (matches, taxes); "invoices" loses just "s".
    if (suffix === "es" && !/(s|x|z|ch|sh)es$/.test(out)) continue;
    if (out.endsWith(suffix) && out.length - suffix.length >= MIN_STEM_CHARS) {
      out = out.slice(0, -suffix.length);
      break;
    }
  }
  // Undouble a consonant the suffix doubled (logging → log, planned → plan), but not the natural
  // doubles of pass, call, buzz, off.
  if (out !== word && out.length > MIN_TERM_CHARS && /([b-df-hj-kmnp-rtv-y])\1$/.test(out))
    out = out.slice(0, -1);
  return out;
}

/**
 * Derives up to {@link MAX_TERMS} search terms from text, in order of first appearance.
 *
 * @example
 * deriveTerms("Add GitHub OAuth login that reuses the existing session")
 * // [{ text: "github", weight: 1 }, { text: "oauth", … }, { text: "login", … }, { text: "reus", … }, { text: "session", … }]
 */
export function deriveTerms(text: string, limit = MAX_TERMS): Term[] {
  const terms = new Map<string, Term>();
  const add = (raw: string, weight: number, code: boolean) => {
    const lower = raw.toLowerCase();
    if ((STOP_WORDS.has(lower) && !code) || /^\d+$/.test(lower)) return;
    const t = stem(lower);
    if (t.length < MIN_TERM_CHARS || (STOP_WORDS.has(t) && !code)) return;
    const common = COMMON_WORDS.has(t) && weight === 1;
    const known = terms.get(t);
    if (known) {
      known.weight = Math.max(known.weight, common ? COMMON_WORD_WEIGHT : weight);
      if (code) known.code = true;
      if (!common) delete known.common;
    } else
      terms.set(t, {
        text: t,
        weight: common ? COMMON_WORD_WEIGHT : weight,
        surface: lower,
        ...(code && { code }),
        ...(common && { common }),
      });
  };
  const analysed = text.slice(0, MAX_ANALYSED_CHARS).replace(/https?:\/\/\S+/g, " ");
  // Words in backticks are names written as code, whatever their shape (`Find`, `extend()`).
  const quoted = new Set<string>();
  for (const span of analysed.match(/`[^`\n]{1,200}`/g) ?? [])
    for (const token of span.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) quoted.add(token);
  for (const token of analysed.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
    if (token.length > MAX_TOKEN_CHARS) continue;
    const parts = splitIdentifier(token);
    const codeLike = parts.length > 1 || /_/.test(token) || /[a-z][A-Z]/.test(token);
    const inQuotes = quoted.has(token);
    if (codeLike) {
      const whole = parts.join("");
      if (whole.length >= MIN_TERM_CHARS && !terms.has(whole))
        terms.set(whole, {
          text: whole,
          weight: 2,
          surface: whole,
          code: true,
          spellings: identifierSpellings(token),
        });
    }
    // Parts of code-like tokens shorter than a stem ("Git" and "Hub" of GitHub) are noise.
    for (const part of parts)
      if (!codeLike || part.length >= MIN_STEM_CHARS)
        add(part, codeLike ? 1.5 : inQuotes ? 2 : 1, inQuotes && !codeLike);
  }
  return [...terms.values()].slice(0, limit);
}

/**
 * The spellings of an identifier that code may use for the same name: as written, with the
 * first letter in the other case, and in snake case (`ReplacePairs`, `replacePairs`,
 * `replace_pairs`).
 *
 * @example
 * identifierSpellings("URLFormat") // ["URLFormat", "uRLFormat", "url_format"]
 */
export function identifierSpellings(token: string): string[] {
  const first = token.charAt(0);
  const flipped =
    (first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase()) + token.slice(1);
  const snake = splitIdentifier(token).join("_");
  return [...new Set([token, flipped, snake, snake.toUpperCase()])].filter((s) => s.length >= 3);
}

/**
 * A regular expression source that finds a term in code: a whole identifier in any of its
 * spellings, or a word where a word or identifier part starts ({@link wordStartPattern}).
 *
 * @example
 * searchPattern({ text: "urlformat", weight: 2, spellings: ["URLFormat", "url_format"] })
 * // "(?:^|[^A-Za-z0-9_])(?:URLFormat|url_format)"
 */
export function searchPattern(term: Term): string {
  if (term.spellings && term.spellings.length > 0)
    return `(?:^|[^A-Za-z0-9_])(?:${term.spellings.map(escapeRegExp).join("|")})`;
  return wordStartPattern(term.text);
}

/** A task with its area hint taken out: `"Fix X (area: router)"` → `"Fix X"`, `"router"`. */
export interface TaskText {
  text: string;
  area: string | null;
}

/**
 * Splits an `area:` hint off a task (`(area: router)`, `[area: src/db]`, or a trailing
 * `area: cli`); the hint steers the search by folder and file names, not as words.
 *
 * @example
 * parseTask("Add retry jitter (area: source/utils)") // { text: "Add retry jitter", area: "source/utils" }
 */
export function parseTask(task: string): TaskText {
  const head = task.slice(0, MAX_ANALYSED_CHARS);
  const m =
    /[([]\s*area\s*:\s*([^)\]\n]{1,200})[)\]]|(?:^|[\s;,.])area\s*:\s*([^\s()[\]]{1,200})\s*$/i.exec(
      head,
    );
  if (!m) return { text: task, area: null };
  const area = (m[1] ?? m[2] ?? "").trim();
  const text = `${task.slice(0, m.index)} ${task.slice(m.index + m[0].length)}`.trim();
  return { text, area: area === "" ? null : area };
}

/**
 * Path-like mentions in text (`src/auth/login.ts`, `login.ts`), for feedback that names files.
 *
 * @example
 * pathMentions("Also touch src/db/schema.sql, not tax.ts") // ["src/db/schema.sql", "tax.ts"]
 */
export function pathMentions(text: string): string[] {
  // A mention consists of path characters only, so it lies inside one run of them: matching
  // run by run finds the same mentions, and a cap on the run's length keeps the backtracking
  // regex below from going quadratic on one enormous run.
  const found: string[] = [];
  for (const run of text.slice(0, MAX_ANALYSED_CHARS).match(/[\w./-]+/g) ?? []) {
    if (run.length > MAX_PATH_MENTION_CHARS) continue;
    // A name may have several dots (`index.test.ts`, `README.zh-CN.md`): all of them are kept.
    found.push(...(run.match(/(?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][\w]{0,9}\b/g) ?? []));
    if (found.length >= MAX_PATH_MENTIONS) break;
  }
  return [...new Set(found.map((p) => p.replace(/^\.\//, "").replace(/^\/repo\//, "")))]
    .filter((p) => !/^\d+(\.\d+)+$/.test(p) && !/^(e\.g|i\.e|etc)\b/i.test(p))
    .filter((p) => p.includes("/") || FILE_EXTENSION.test(p))
    .slice(0, MAX_PATH_MENTIONS);
}

/**
 * Extensions a bare file name (no folder) must end in to count as a path: `Config.from_file`,
 * `app.run` and `fmt.Println` are dotted names of code, `config.py` and `README.md` are files.
 */
const FILE_EXTENSION =
  /\.(?:[cm]?[jt]sx?|py|pyi|go|rs|rb|java|kts?|scala|c|h|cc|cpp|cxx|hh|hpp|cs|php|swift|vue|svelte|sql|html?|erb|css|scss|sass|less|sh|bash|zsh|proto|graphql|md|mdx|rst|txt|adoc|json|jsonc|ya?ml|toml|ini|cfg|conf|properties|xml|env|lock|gradle|cmake|mk|ex|exs|erl|hs|ml|lua|pl|r|dart|zig|nim|tf|dockerfile|gemspec|rake)$/i;

/**
 * A regular expression source matching `term` where a word or an identifier part starts:
 * after a non-letter (`port_id`, `max-port`, `PORT`) or as a capitalised camelCase part
 * (`listenPort`), in lower, Capitalised or UPPER case — but never inside a word, so the stem
 * `port` does not find `report`, `support` or `import`. Match it case-sensitively. It needs
 * no lookbehind, so Grep's linear-time engine runs it, and its spellings are plain literals,
 * so Grep rules out a file without any of them at `indexOf` speed before running it.
 *
 * @example new RegExp(wordStartPattern("port")).test("const listenPort = 1") // true
 * @example new RegExp(wordStartPattern("port")).test("await report()")       // false
 */
export function wordStartPattern(term: string): string {
  const lower = term.toLowerCase();
  if (!/^[a-z]/.test(lower)) return `(?:^|[^A-Za-z0-9])${escapeRegExp(lower)}`;
  const [plain, capital, upper] = caseVariants(lower).map(escapeRegExp);
  return `(?:^|[^A-Za-z])(?:${plain}|${capital}|${upper})|${capital}|${upper}`;
}

/**
 * The three spellings a term is searched in: `session`, `Session`, `SESSION`.
 *
 * @example
 * caseVariants("oauth") // ["oauth", "Oauth", "OAUTH"]
 */
export function caseVariants(term: string): [string, string, string] {
  const lower = term.toLowerCase();
  return [lower, lower.charAt(0).toUpperCase() + lower.slice(1), lower.toUpperCase()];
}

/**
 * A string with the characters that mean something in a regular expression escaped.
 *
 * @example
 * escapeRegExp("v2.x") // "v2\\.x"
 */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
