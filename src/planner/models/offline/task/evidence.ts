import {
  decodeURIComponentSafe,
  lineOf,
  MAX_MESSAGES,
  type PathEvidence,
  readFrames,
  readMessages,
} from "./frames.ts";
import { MAX_ANALYSED_CHARS, MAX_TOKEN_CHARS, pathMentions, STOP_WORDS } from "./terms.ts";

/**
 * The first stage, reading the task (task/): what its words say before any file is read. This
 * module reads the evidence, frames.ts the tracebacks and messages, terms.ts and task-terms.ts
 * turn words into search terms, intent.ts reads what the first line asks for, and probes.ts
 * asks the repository which of the task's names it holds: the one answer of the repository's
 * that task/ reads. It reads no file of the repository and none of the reviewer's inputs.
 *
 * What a task's text points at, read the way an engineer skims an issue. Pure.
 *
 * An issue is not a commit subject: it has a title, prose, code spans, pasted code, logs and
 * tracebacks, links to the repository's files. Each says something different about where the
 * change goes, and not equally: a traceback frame or a link names a file; a dotted name
 * (`Config.from_file`) names a class and its method; an identifier in a code span is a name
 * the code defines; a quoted error message is a string some file holds; the title's words say
 * what the issue is about; the rest of the prose says the least. This module reads each kind
 * apart (frames and messages in frames.ts), and task-terms.ts chooses the search terms by that
 * order — not the first words that come — so a long issue's `ZSTDMT_compressCCtx` in its third
 * paragraph is searched and its template's "Describe the bug" is not.
 */

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

/**
 * Identifiers that belong to every language or to the user's own code rather than to the
 * repository: keywords, standard types, test and print calls, placeholder names. A name of
 * these in an issue says nothing about which file of the repository it means.
 */
export const CODE_NOISE = new Set(
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

export const PLACE_RANK: Record<NamePlace, number> = {
  title: 0,
  frame: 1,
  span: 2,
  prose: 3,
  block: 4,
};

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
