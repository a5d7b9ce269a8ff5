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
const STOP_WORDS = new Set(
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
test tests testing tested spec specs one two three four five first second show shows display`.split(
    /\s+/,
  ),
);

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
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase());
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
  const add = (raw: string, weight: number) => {
    const lower = raw.toLowerCase();
    if (STOP_WORDS.has(lower) || /^\d+$/.test(lower)) return;
    const t = stem(lower);
    if (t.length < MIN_TERM_CHARS || STOP_WORDS.has(t)) return;
    const known = terms.get(t);
    if (known) known.weight = Math.max(known.weight, weight);
    else terms.set(t, { text: t, weight });
  };
  const withoutUrls = text.slice(0, MAX_ANALYSED_CHARS).replace(/https?:\/\/\S+/g, " ");
  for (const token of withoutUrls.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
    if (token.length > MAX_TOKEN_CHARS) continue;
    const parts = splitIdentifier(token);
    const codeLike = parts.length > 1 || /_/.test(token) || /[a-z][A-Z]/.test(token);
    if (codeLike) {
      const whole = parts.join("");
      if (whole.length >= MIN_TERM_CHARS && !terms.has(whole))
        terms.set(whole, { text: whole, weight: 2 });
    }
    // Parts of code-like tokens shorter than a stem ("Git" and "Hub" of GitHub) are noise.
    for (const part of parts)
      if (!codeLike || part.length >= MIN_STEM_CHARS) add(part, codeLike ? 1.5 : 1);
  }
  return [...terms.values()].slice(0, limit);
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
    found.push(...(run.match(/(?:[\w.-]+\/)*[\w-]+\.[A-Za-z][\w]{0,9}\b/g) ?? []));
    if (found.length >= MAX_PATH_MENTIONS) break;
  }
  return [...new Set(found.map((p) => p.replace(/^\.\//, "").replace(/^\/repo\//, "")))]
    .filter((p) => !/^\d+(\.\d+)+$/.test(p) && !/^(e\.g|i\.e|etc)\b/i.test(p))
    .slice(0, MAX_PATH_MENTIONS);
}

/**
 * A regular expression source matching `term` where a word or an identifier part starts:
 * after a non-letter (`port_id`, `max-port`, `PORT`) or as a capitalised camelCase part
 * (`listenPort`), in any letter case otherwise — but never inside a word, so the stem `port`
 * does not find `report`, `support` or `import`. Match it case-sensitively. It tells whether a
 * line matches (the character before the term is part of the match), and it needs no
 * lookbehind, so Grep's linear-time engine runs it as well as JavaScript does.
 *
 * @example new RegExp(wordStartPattern("port")).test("const listenPort = 1") // true
 * @example new RegExp(wordStartPattern("port")).test("await report()")       // false
 */
export function wordStartPattern(term: string): string {
  const chars = [...term.toLowerCase()];
  const first = chars[0] ?? "";
  const rest = chars
    .slice(1)
    .map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : escapeChar(c)))
    .join("");
  if (!/[a-z]/.test(first)) return `(?:^|[^A-Za-z0-9])${escapeChar(first)}${rest}`;
  return `(?:(?:^|[^A-Za-z])[${first}${first.toUpperCase()}]|${first.toUpperCase()})${rest}`;
}

function escapeChar(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
