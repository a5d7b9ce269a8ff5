import {
  escapeRegExp,
  identifierSpellings,
  MAX_ANALYSED_CHARS,
  MAX_TOKEN_CHARS,
  pathMentions,
  STOP_WORDS,
  splitIdentifier,
  stem,
  type Term,
} from "./terms.ts";
import type { GrepLine } from "./transcript.ts";

/**
 * What a task's text points at, read the way an engineer skims an issue. Pure.
 *
 * An issue is not a commit subject: it has a title, prose, code spans, pasted code, logs and
 * tracebacks, links to the repository's files. Each says something different about where the
 * change goes, and not equally: a traceback frame or a link names a file; a dotted name
 * (`Config.from_file`) names a class and its method; an identifier in a code span is a name
 * the code defines; a quoted error message is a string some file holds; the title's words say
 * what the issue is about; the rest of the prose says the least. This module reads each kind
 * apart and chooses the search terms by that order — not the first words that come — so a
 * long issue's `ZSTDMT_compressCCtx` in its third paragraph is searched and its template's
 * "Describe the bug" is not.
 */

/** A path the text names, and how. */
export interface PathEvidence {
  /** As written (`src/flask/config.py`, `cover.c`, `com/x/Parser.java`). */
  text: string;
  /** The line it names, when it does (a frame, a `#L611` link, `file.c:12`). */
  line: number | null;
  /** A traceback frame or a link to the repository is surer than a mention in prose. */
  via: "frame" | "link" | "mention";
}

/** A name written as code, with where the text writes it. */
export interface NameEvidence {
  /** The identifier as written (`from_file`, `Config`, `ZSTDMT_compressCCtx`). */
  name: string;
  /** The name it is qualified by, when written `Qualifier.name` or `Qualifier::name`. */
  qualifier: string | null;
  /** Where it was found, strongest first. */
  where: NamePlace;
  /** Times the text writes it. */
  count: number;
  /** Offset of its first appearance. */
  first: number;
}

/** Places a name can come from, strongest first. */
export type NamePlace = "title" | "frame" | "span" | "prose" | "block";

/** Everything the text points at. */
export interface TaskEvidence {
  /** The first line: what the issue is about. */
  title: string;
  paths: PathEvidence[];
  names: NameEvidence[];
  /** Qualified names (`Config.from_file` → `Config`, `from_file`): a class and its member. */
  qualified: { owner: string; member: string }[];
  /** Error messages quoted in the text, cut to the words a source file would hold. */
  messages: string[];
  /** Short literal arguments written in code (`locale('sv')`): they may name a file. */
  literals: string[];
  /** Plain words, lower-case, with how often they appear and whether the title has them. */
  words: WordEvidence[];
  /**
   * Neighbouring words of the title (`logger middleware`, `cookie helper`): a pair may name a
   * module and its kind, as a path does (`middleware/logger/`).
   */
  phrases: [string, string][];
}

/** A plain word of the text. */
export interface WordEvidence {
  word: string;
  /** Times in the prose (title included). */
  count: number;
  /** Times in pasted code and logs. */
  blockCount: number;
  inTitle: boolean;
  /** Offset of its first appearance. */
  first: number;
}

/** Most messages searched literally. */
const MAX_MESSAGES = 2;
/** Shortest message worth a literal search (characters). */
const MIN_MESSAGE_CHARS = 12;
/** Longest literal searched: the beginning of a message is what a source's format string keeps. */
const MAX_MESSAGE_CHARS = 60;

/**
 * Identifiers that belong to every language or to the user's own code rather than to the
 * repository: keywords, standard types, test and print calls, placeholder names. A name of
 * these in an issue says nothing about which file of the repository it means.
 */
const CODE_NOISE = new Set(
  `if else for while do switch case break continue return function func fn def class struct enum
trait impl interface type typedef let var const static final public private protected pub mut ref
new delete this self super null nil none true false undefined void int uint long short char bool
boolean float double byte string str usize isize u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 size_t
auto std vec map list dict set array object error err ok some option result box rc arc string
import export from require module package use mod crate extern include define ifdef ifndef endif
main args argv argc test tests assert assert_eq expect expected actual println printf print puts
console log fmt sprintf cout cerr endl echo await async yield try catch throw throws except finally
raise with as is in not and or foo bar baz qux hello world example sample my your value values data
item items key keys name names id tmp temp res req resp ctx cfg val obj arr idx len num count
get set put post run call apply then done init test_case require_eq check unwrap expect_err
describe it before after beforeeach aftereach setup teardown tobe toequal mock mocks when verify
override todo fixme xxx http https www com org io net github`.split(/\s+/),
);

/**
 * Words of issue templates' headings and of the conversation around a report ("Describe the
 * bug", "Steps to reproduce", "thanks"): every issue of a tracker has them. Left out of the
 * prose below the title (a title's words all count).
 */
const TEMPLATE_WORDS = new Set(
  `describe description bug bugs report reported reproduce reproduction reproducible steps
behavior behaviour expected actual environment information additional context screenshot
screenshots version versions browser platform issue issues problem problems feature solution
alternative alternatives considered related summary thank thanks hello regards minimal
following happens happened seems think currently really just something anything everything
nothing someone anyone would could should maybe perhaps`.split(/\s+/),
);

/**
 * Reads a task's text.
 *
 * @example
 * readTask("Config.from_file cannot load TOML\n\nCalling `Config.from_file(\"a.toml\")` fails").qualified
 * // [{ owner: "Config", member: "from_file" }]
 */
export function readTask(text: string): TaskEvidence {
  const analysed = text.slice(0, MAX_ANALYSED_CHARS).replace(/\r\n?/g, "\n");
  const newline = analysed.indexOf("\n");
  const title = (newline === -1 ? analysed : analysed.slice(0, newline)).trim();
  const names = new Map<string, NameEvidence>();
  const qualified: { owner: string; member: string }[] = [];
  const paths: PathEvidence[] = [];
  const messages: string[] = [];
  const literals: string[] = [];
  const words = new Map<string, WordEvidence>();
  /** Plain words of `text` (at `offset` in the task); the title's count in full. */
  const readWords = (text: string, offset: number, titled: boolean, inBlock: boolean) => {
    for (const m of text.matchAll(/[A-Za-z][A-Za-z']*/g)) {
      if (/n't$/i.test(m[0])) continue; // doesn't, can't: never the subject
      const token = m[0].replace(/'.*$/, "");
      if (token.length > MAX_TOKEN_CHARS || isCodeLike(token)) continue;
      const lower = token.toLowerCase();
      const at = offset + m.index;
      const inTitle = titled && at < title.length;
      if (lower.length < 3 || STOP_WORDS.has(lower) || (!inTitle && TEMPLATE_WORDS.has(lower)))
        continue;
      const known = words.get(lower);
      if (known) {
        if (inBlock) known.blockCount++;
        else known.count++;
        known.inTitle ||= inTitle;
      } else
        words.set(lower, {
          word: lower,
          count: inBlock ? 0 : 1,
          blockCount: inBlock ? 1 : 0,
          inTitle,
          first: at,
        });
    }
  };

  const addName = (name: string, where: NamePlace, at: number, qualifier: string | null) => {
    if (name.length < 2 || name.length > MAX_TOKEN_CHARS || /^\d/.test(name)) return;
    if (CODE_NOISE.has(name.toLowerCase())) return;
    const known = names.get(name);
    if (known) {
      known.count++;
      if (PLACE_RANK[where] < PLACE_RANK[known.where]) known.where = where;
      known.qualifier ??= qualifier;
      return;
    }
    names.set(name, { name, qualifier, where, count: 1, first: at });
  };
  const addPath = (p: PathEvidence) => {
    const clean = p.text.replace(/^\.?\//, "");
    if (clean === "" || paths.some((x) => x.text === clean && x.line === p.line)) return;
    paths.push({ ...p, text: clean });
  };

  // Links to a file of a repository: the path after `blob|blame|tree/<ref>/`, and its line.
  const withoutLinks = analysed.replace(/https?:\/\/[^\s)\]>"'`]+/g, (url) => {
    const m =
      /github\.com\/[^/\s]+\/[^/\s]+\/(?:blob|blame|tree|raw)\/[^/\s]+\/([^\s#?]+)(?:#L(\d+))?/.exec(
        url,
      );
    if (m?.[1]) addPath({ text: decodeURIComponentSafe(m[1]), line: lineOf(m[2]), via: "link" });
    return blank(url);
  });

  // Fenced code blocks: pasted code, logs, tracebacks.
  const blocks: { text: string; at: number }[] = [];
  const prose = withoutLinks.replace(
    /^ {0,3}(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:^ {0,3}\1[^\n]*$|(?![\s\S]))/gm,
    (whole, _fence, body: string, at: number) => {
      blocks.push({ text: body, at });
      return blank(whole);
    },
  );

  for (const block of blocks) {
    readFrames(block.text, addPath, (n, q) => addName(n, "frame", block.at, q));
    for (const m of readMessages(block.text)) if (!messages.includes(m)) messages.push(m);
    readCode(block.text, block.at, (n, at, q) => addName(n, "block", at, q), literals);
    // A pasted log speaks prose too ("Mockito is configured to create inlined mocks").
    readWords(block.text, block.at, false, true);
  }
  // Frames and messages pasted without a fence.
  readFrames(prose, addPath, (n, q) => addName(n, "frame", 0, q));
  for (const m of readMessages(prose)) if (!messages.includes(m)) messages.push(m);

  // Inline code spans: names the user wrote as code.
  const outsideSpans = prose.replace(
    /(`+)([^`\n]{1,300}?)\1(?!`)/g,
    (all, _ticks, span: string, at: number) => {
      const place: NamePlace = at < title.length ? "title" : "span";
      readCode(span, at, (n, where, q) => addName(n, place, where, q), literals);
      for (const p of pathMentions(span)) addPath({ text: p, line: null, via: "mention" });
      return blank(all);
    },
  );

  // Prose: code-like identifiers, dotted names, path mentions and plain words.
  const mentioned = pathMentions(outsideSpans);
  for (const p of mentioned) addPath({ text: p, line: null, via: "mention" });
  readCode(
    outsideSpans,
    0,
    (n, at, q) => {
      if (isCodeLike(n) || q !== null) addName(n, at < title.length ? "title" : "prose", at, q);
    },
    null,
  );
  // A path's folder and file names are path evidence, not words of the prose.
  const plain = mentioned.reduce((rest, p) => rest.split(p).join(blank(p)), outsideSpans);
  readWords(plain, 0, true, false);

  for (const n of names.values())
    if (n.qualifier !== null && !CODE_NOISE.has(n.qualifier.toLowerCase()))
      if (!qualified.some((q) => q.owner === n.qualifier && q.member === n.name))
        qualified.push({ owner: n.qualifier, member: n.name });

  const titleWords = (title.match(/[A-Za-z][A-Za-z0-9]*/g) ?? [])
    .map((w) => w.toLowerCase())
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
  const phrases: [string, string][] = [];
  for (let i = 0; i + 1 < titleWords.length; i++)
    phrases.push([titleWords[i]!, titleWords[i + 1]!]);

  return {
    title,
    phrases,
    paths,
    names: [...names.values()],
    qualified,
    messages: messages.slice(0, MAX_MESSAGES),
    literals: [...new Set(literals)].slice(0, 8),
    words: [...words.values()],
  };
}

/** Text of the same length with every character but newlines made a space (offsets stay). */
function blank(text: string): string {
  return text.replace(/[^\n]/g, " ");
}

const PLACE_RANK: Record<NamePlace, number> = { title: 0, frame: 1, span: 2, prose: 3, block: 4 };

/** A token that reads as code: camelCase, snake_case, two capitals, a digit inside. */
export function isCodeLike(token: string): boolean {
  if (/^[A-Z]{2,}s$/.test(token)) return false; // "APIs", "URLs": plural acronyms
  return (
    /[a-z][A-Z]/.test(token) ||
    /[A-Za-z0-9]_[A-Za-z0-9]/.test(token) ||
    /^_+[A-Za-z]/.test(token) ||
    /^[A-Z]{2,}[a-z]/.test(token) ||
    (/^[A-Z][A-Z0-9_]{2,}$/.test(token) && /_/.test(token))
  );
}

/**
 * Identifiers of a piece of code, with qualifiers (`a.b`, `a::b`, `a->b`), and short quoted
 * literals (into `literals`, when given).
 */
function readCode(
  code: string,
  offset: number,
  add: (name: string, at: number, qualifier: string | null) => void,
  literals: string[] | null,
): void {
  if (literals !== null)
    for (const m of code.matchAll(/\(\s*['"]([A-Za-z][\w-]{1,19})['"]\s*[,)]/g))
      literals.push(m[1]!);
  // What a string says is not a name of the code (`format('dddd Do MMMM')`).
  const bare = code.replace(/"[^"\n]*"|'[^'\n]*'/g, blank);
  for (const m of bare.matchAll(/[A-Za-z_$][\w$]*(?:(?:\.|::|->|#)[A-Za-z_$][\w$]*)*/g)) {
    const separators = m[0].match(/\.|::|->|#/g) ?? [];
    const parts = m[0].split(/\.|::|->|#/).map((p) => p.replace(/\$.*$/, ""));
    // A package path (`com.alibaba.fastjson2.writer.X`): its lower-case segments are folders.
    let from = 0;
    if (parts.length >= 3)
      while (from < parts.length - 1 && /^[a-z][a-z0-9_]*$/.test(parts[from]!)) from++;
    for (let i = from; i < parts.length; i++) {
      const part = parts[i]!;
      if (part === "") continue;
      const owner = i > from ? parts[i - 1]! : from > 0 ? parts[from - 1]! : null;
      add(
        part,
        offset + m.index,
        owner !== null && isQualifier(owner, part, separators[i - 1] ?? ".") ? owner : null,
      );
    }
  }
}

/**
 * Whether `owner.member` names a member of a class or module the code defines, rather than a
 * variable's (`piece.getPiece`, `e.kind`): the owner is a type (`Config.from_file`), the path
 * is a module path (`tracing::instrument`), or the member is exported (`grpc.WithBalancerName`).
 */
function isQualifier(owner: string, member: string, separator: string): boolean {
  if (owner === "" || CODE_NOISE.has(owner.toLowerCase())) return false;
  return /^[A-Z]/.test(owner) || separator === "::" || /^[A-Z]/.test(member);
}

/**
 * Traceback frames: Python `File "x.py", line 3, in f`, Java `at a.b.C.m(C.java:12)`, Go
 * `/x/y.go:12`, Rust `src/x.rs:12:5`, JavaScript `at f (src/x.js:3:9)`, compilers
 * `include/x.h:12:5: error:` — their paths, lines and functions.
 */
function readFrames(
  text: string,
  addPath: (p: PathEvidence) => void,
  addName: (name: string, qualifier: string | null) => void,
): void {
  for (const m of text.matchAll(/File "([^"\n]{1,300})", line (\d+)(?:, in ([\w<>.]+))?/g)) {
    addPath({ text: m[1]!, line: lineOf(m[2]), via: "frame" });
    if (m[3] && !m[3].startsWith("<")) addName(m[3], null);
  }
  for (const m of text.matchAll(
    /\bat\s+((?:[\w$]+\.)+)([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)/g,
  )) {
    const owner = m[1]!.slice(0, -1);
    const segments = owner.split(".");
    const cls = segments[segments.length - 1]!.replace(/\$.*$/, "");
    const pkg = segments.slice(0, -1).join("/");
    addPath({ text: pkg === "" ? m[3]! : `${pkg}/${m[3]!}`, line: lineOf(m[4]), via: "frame" });
    addName(cls, null);
    if (!m[2]!.startsWith("<")) addName(m[2]!, cls);
  }
  for (const m of text.matchAll(
    /(?:^|[\s(])((?:[\w.@+-]+\/)*[\w.@+-]+\.(?:go|rs|js|mjs|cjs|ts|tsx|jsx|py|rb|c|cc|cpp|cxx|h|hh|hpp|java|kt|cs|swift|php|ex|exs)):(\d+)(?::\d+)?/gm,
  ))
    addPath({ text: m[1]!, line: lineOf(m[2]), via: "frame" });
}

/**
 * Error messages a source file may hold: what follows `Error:`, `panicked at`, an exception's
 * name; cut at the first part a program fills in (a number, a quoted value, a path).
 */
function readMessages(text: string): string[] {
  const out: string[] = [];
  const add = (raw: string) => {
    const cut = raw
      .split(/["'`{}[\]<>()]|\b\d|\s[/\\~]|:\s|\s-{1,2}\w|\s=\s/)[0]!
      .replace(/\s+/g, " ")
      .trim()
      .replace(/[.,;:]+$/, "");
    if (cut.length < MIN_MESSAGE_CHARS || !/[a-z]{3,}\s+[a-z]{2,}/i.test(cut)) return;
    const message = cut
      .slice(0, MAX_MESSAGE_CHARS)
      .replace(/\s\S*$/, (tail) => (cut.length > MAX_MESSAGE_CHARS ? "" : tail));
    if (!out.includes(message)) out.push(message);
  };
  for (const m of text.matchAll(/panicked at '([^'\n]{1,300})'/g)) add(m[1]!);
  for (const m of text.matchAll(/panicked at [^\n]*?:\d+:\d+:\n([^\n]{1,300})/g)) add(m[1]!);
  for (const m of text.matchAll(
    /(?:^|[\s.])(?:[A-Z]\w*(?:Error|Exception)|[Ee]rror|ERROR|[Ff]atal|FATAL|panic)(?:\[\w+\])?:[ \t]*\n?[ \t]*([A-Za-z][^\n]{0,299})/gm,
  ))
    add(m[1]!);
  return out;
}

function lineOf(digits: string | undefined): number | null {
  if (digits === undefined) return null;
  const n = Number(digits);
  return Number.isInteger(n) && n > 0 ? n : null;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** How a term was chosen (for the plan's account of what it searched and why). */
export type TermSource = NamePlace | "qualified" | "title word" | "word";

/** Terms one task contributes at most (the rest of a planning cycle's room is feedback's). */
export const MAX_TASK_TERMS = 12;

/** Names this strong are searched first (a title's, a frame's, a code span's, a prose identifier). */
const STRONG_NAME_PRIORITY = 5;
/** Most strong names taken before the title's words. */
const MAX_STRONG_NAMES = 7;
/** Most title words taken before the rest compete by priority. */
const MAX_TITLE_WORDS = 5;

/** Priority a name gains when the repository holds it, and loses when it holds it nowhere. */
const PRESENT_BONUS = 3;
const ABSENT_PENALTY = 4;

/** Weight of a name by where the text writes it. */
const NAME_WEIGHT: Record<NamePlace, number> = {
  title: 2.4,
  frame: 2.4,
  span: 2.2,
  prose: 2,
  block: 1.4,
};
/** Priority of a candidate term (which terms get searched when there are too many). */
const NAME_PRIORITY: Record<NamePlace, number> = {
  title: 10,
  frame: 9,
  span: 8,
  prose: 6,
  block: 3,
};

/**
 * The search terms of a task, best first, at most {@link MAX_TASK_TERMS}: names (qualified
 * ones and the title's first, then frames, code spans, prose, pasted code — a name pasted
 * often counts more), then the title's words, then the words the prose repeats. With the
 * probe's `census`, a name the repository holds goes before one it does not, and pasted names
 * it does not hold are not searched at all (the user's own code).
 *
 * @example
 * taskTerms(readTask("let `Config.from_file` load toml files")).map((t) => t.text)
 * // ["fromfile", "config", "load", "toml"]
 */
export function taskTerms(
  e: TaskEvidence,
  census: NameCensus | null = null,
  limit = MAX_TASK_TERMS,
): (Term & { via: TermSource })[] {
  type Candidate = Term & { via: TermSource; priority: number; order: number };
  const out = new Map<string, Candidate>();
  const put = (c: Candidate) => {
    const known = out.get(c.text);
    if (known === undefined) out.set(c.text, c);
    else if (c.priority > known.priority)
      out.set(c.text, { ...c, weight: Math.max(c.weight, known.weight) });
    else known.weight = Math.max(known.weight, c.weight);
  };
  const members = new Set(e.qualified.map((q) => q.member));
  const owners = new Set(e.qualified.map((q) => q.owner));
  for (const n of e.names) {
    const parts = splitIdentifier(n.name);
    const whole = parts.join("");
    if (whole.length < 3 || STOP_WORDS.has(whole) || CODE_NOISE.has(whole)) continue;
    const isQualified = members.has(n.name) || owners.has(n.name);
    const counted = census?.files.get(n.name);
    const present = counted !== undefined && counted.size > 0;
    const absent = census?.complete === true && counted !== undefined && !present;
    // Pasted code or a frame the repository does not hold is the user's own, or a library's.
    if (absent && (n.where === "block" || n.where === "frame")) continue;
    const repeated = Math.min(2, Math.log2(n.count));
    // Pasted code is mostly the user's own; its names that read as code (`ZSTDMT_compressCCtx`)
    // are likelier the repository's than its plain ones (`Board`, `piece`).
    const pasted = n.where === "block" && (isCodeLike(n.name) || isQualified) ? 1.5 : 0;
    const priority =
      NAME_PRIORITY[n.where] +
      pasted +
      (isQualified && n.where !== "block" ? 1.5 : 0) +
      (present ? PRESENT_BONUS : absent ? -ABSENT_PENALTY : 0) +
      repeated -
      n.first / MAX_ANALYSED_CHARS;
    const weight = NAME_WEIGHT[n.where] + (isQualified ? 0.3 : 0);
    const codeLike = isCodeLike(n.name) || parts.length > 1;
    const known = out.get(whole);
    const merged =
      census?.complete && counted !== undefined ? mergeCounts(known?.counted, counted) : undefined;
    put({
      text: whole,
      weight,
      surface: whole,
      code: true,
      ...(codeLike && { spellings: identifierSpellings(n.name) }),
      ...(merged !== undefined && { counted: merged }),
      ...(absent && { absent: true }),
      via: isQualified ? "qualified" : n.where,
      priority,
      order: n.first,
    });
    const stored = out.get(whole)!;
    if (merged !== undefined) stored.counted = merged;
    if (present) delete stored.absent;
  }
  for (const w of e.words) {
    const s = stem(w.word);
    if (s.length < 3 || STOP_WORDS.has(s)) continue;
    // A word pasted logs repeat counts half as much as one the prose repeats.
    const mentions = w.count + w.blockCount / 2;
    const priority = w.inTitle
      ? 5 + Math.min(1, (mentions - 1) / 4)
      : Math.min(4.5, 0.5 + mentions);
    const weight = w.inTitle ? 1.2 : 0.6 + Math.min(0.5, 0.15 * (mentions - 1));
    put({
      text: s,
      weight,
      surface: w.word,
      via: w.inTitle ? "title word" : "word",
      priority,
      order: w.first,
    });
  }
  const all = [...out.values()];
  if (all.length <= limit) {
    const chosen = all.sort((a, b) => a.order - b.order);
    return chosen.map(({ priority: _p, order: _o, ...term }) => term);
  }
  // Too many to search: the strongest names first, then the title's words, then the rest by
  // priority — so neither pasted code nor a long title can take every place.
  const byPriority = all.sort(
    (a, b) => b.priority - a.priority || a.order - b.order || (a.text < b.text ? -1 : 1),
  );
  const chosen: Candidate[] = [];
  const take = (c: Candidate) => {
    if (chosen.length < limit && !chosen.includes(c)) chosen.push(c);
  };
  for (const c of byPriority
    .filter((x) => x.code && x.priority >= STRONG_NAME_PRIORITY)
    .slice(0, MAX_STRONG_NAMES))
    take(c);
  for (const c of byPriority.filter((x) => x.via === "title word").slice(0, MAX_TITLE_WORDS))
    take(c);
  for (const c of byPriority) take(c);
  return chosen.map(({ priority: _p, order: _o, ...term }) => term);
}

/** Two spellings' file counts as one (`Config` and `config` are the term `config`). */
function mergeCounts(
  a: ReadonlyMap<string, number> | undefined,
  b: ReadonlyMap<string, number>,
): Map<string, number> {
  const out = new Map(a ?? []);
  for (const [path, n] of b) out.set(path, Math.max(out.get(path) ?? 0, n));
  return out;
}

/** Most names one probe looks for. */
const MAX_PROBED_NAMES = 40;
/** Longest probe pattern (Grep accepts 1,000 characters). */
const MAX_PROBE_PATTERN_CHARS = 980;

/**
 * The names worth asking the repository about before choosing the terms: every name written as
 * code, strongest place first. An issue pastes the user's own code as often as the library's;
 * one search for all of them at once (`probePatterns`) tells which the repository has.
 *
 * @example
 * probeNames(readTask("`Config.from_file` fails\n\n```\nboard = Board()\n```")) // ["Config", "from_file", "Board", "board"]
 */
export function probeNames(e: TaskEvidence): string[] {
  return e.names
    .filter((n) => n.name.length >= 3 && /^[A-Za-z_$][\w$]*$/.test(n.name))
    .filter((n) => !STOP_WORDS.has(n.name.toLowerCase()))
    .sort(
      (a, b) =>
        PLACE_RANK[a.where] - PLACE_RANK[b.where] ||
        b.count - a.count ||
        a.first - b.first ||
        (a.name < b.name ? -1 : 1),
    )
    .slice(0, MAX_PROBED_NAMES)
    .map((n) => n.name);
}

/**
 * Grep patterns (content mode) that find the lines holding any of `names` as a whole
 * identifier, as written or with its first letter's case flipped; as few patterns as fit.
 *
 * @example
 * probePatterns(["from_file"]) // ["(?:^|[^\\w$])(?:from_file|From_file)(?:[^\\w$]|$)"]
 */
export function probePatterns(names: readonly string[]): string[] {
  const wrap = (alternatives: string[]) =>
    `(?:^|[^\\w$])(?:${alternatives.join("|")})(?:[^\\w$]|$)`;
  const patterns: string[] = [];
  let current: string[] = [];
  for (const name of names) {
    const spelled = [...new Set([name, flipFirst(name)])].map(escapeRegExp);
    const next = [...current, ...spelled];
    if (current.length > 0 && wrap(next).length > MAX_PROBE_PATTERN_CHARS) {
      patterns.push(wrap(current));
      current = spelled;
    } else current = next;
  }
  if (current.length > 0) patterns.push(wrap(current));
  return patterns;
}

function flipFirst(name: string): string {
  const first = name.charAt(0);
  const flipped = first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase();
  return flipped + name.slice(1);
}

/**
 * What a probe found: for each probed name, the files holding it and how many of their lines
 * do; `complete` when the probe's output was not cut (then a name it did not find is in no
 * file, and the counts are whole).
 */
export interface NameCensus {
  files: Map<string, Map<string, number>>;
  complete: boolean;
}

/**
 * Sorts a probe's lines by the names they hold.
 *
 * @example
 * nameCensus(["from_file"], [{ path: "src/flask/config.py", line: 3, text: "def from_file(self):" }], false)
 * // { files: Map { "from_file" => Map { "src/flask/config.py" => 1 } }, complete: true }
 */
export function nameCensus(
  names: readonly string[],
  rows: readonly GrepLine[],
  cut: boolean,
): NameCensus {
  const files = new Map<string, Map<string, number>>();
  const tests = names.map((name) => {
    const spelled = [...new Set([name, flipFirst(name)])].map(escapeRegExp).join("|");
    return { name, re: new RegExp(`(?:^|[^\\w$])(?:${spelled})(?:[^\\w$]|$)`) };
  });
  for (const name of names) files.set(name, new Map());
  for (const row of rows)
    for (const { name, re } of tests)
      if (re.test(row.text)) {
        const counts = files.get(name)!;
        counts.set(row.path, (counts.get(row.path) ?? 0) + 1);
      }
  return { files, complete: !cut };
}
