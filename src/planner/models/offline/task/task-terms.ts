import { CODE_NOISE, isCodeLike, type NamePlace, type TaskEvidence } from "./evidence.ts";
import type { NameCensus } from "./probes.ts";
import {
  COMMON_WORD_WEIGHT,
  COMMON_WORDS,
  identifierSpellings,
  MAX_ANALYSED_CHARS,
  STOP_WORDS,
  splitIdentifier,
  stem,
  type Term,
} from "./terms.ts";

/**
 * The search terms of a task, chosen from what evidence.ts read in it: names before words, the
 * strongest place first, names the repository has (probes.ts) before names it lacks. Pure.
 */

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
    if (known === undefined) {
      out.set(c.text, c);
      return;
    }
    // A common word the task also writes as a name is a name.
    const common = known.common === true && c.common === true;
    if (c.priority > known.priority)
      out.set(c.text, { ...c, weight: Math.max(c.weight, known.weight) });
    else known.weight = Math.max(known.weight, c.weight);
    if (!common) delete out.get(c.text)!.common;
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
    const plain = w.inTitle ? 1.2 : 0.6 + Math.min(0.5, 0.15 * (mentions - 1));
    const common = COMMON_WORDS.has(s);
    put({
      text: s,
      weight: common ? plain * COMMON_WORD_WEIGHT : plain,
      ...(common && { common }),
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
