import type { Steering } from "./feedback/steering.ts";
import type { RankedFile } from "./rank/ranking.ts";
import { type Chosen, caseless, MAX_LISTED, moduleNames } from "./rank/selection.ts";
import { definitionSearch } from "./repository/definitions.ts";
import { importersSearch } from "./repository/imports.ts";
import { fileCount, type Knowledge, searchOf } from "./repository/knowledge.ts";
import { testGlobs, testPairing } from "./repository/tests.ts";
import { probeNames, probePatterns } from "./task/probes.ts";
import { escapeRegExp, type Term } from "./task/terms.ts";

/**
 * The searches and reads the offline planner asks for (index.ts decides which step is next):
 * the evidence searches for the task's terms, the definition searches, and the focus reads of
 * the top candidates, with the bounds each call keeps.
 */

/**
 * Terms whose definitions are still to be searched, in groups of a few: those some file
 * mentions or is named after, and not so common that definitions would say nothing.
 */
export function definitionGroups(terms: readonly Term[], k: Knowledge): Term[][] {
  const total = Math.max(1, fileCount(k));
  const dfOf = (term: Term) => {
    const found = searchOf(k, term);
    return new Set([...(found?.hits?.keys() ?? []), ...(found?.pathMatches ?? [])]).size;
  };
  const eligible = terms
    .filter((term) => {
      // A term the probe counted whole has its definitions among the probe's lines already.
      if (k.defsSearched.has(term.text) || term.counted !== undefined) return false;
      const df = dfOf(term);
      return df > 0 && !searchOf(k, term)?.truncated && df / total <= DEFINITIONS_MAX_SHARE;
    })
    // Rare terms together, common ones after: a group's output is cut at Grep's cap, and a
    // common word's definition lines would crowd out a rare identifier's.
    .sort((a, b) => dfOf(a) - dfOf(b) || (a.text < b.text ? -1 : 1));
  const groups: Term[][] = [];
  for (const term of eligible) {
    const last = groups[groups.length - 1];
    if (
      last !== undefined &&
      last.length < TERMS_PER_DEFINITION_SEARCH &&
      definitionSearch([...last, term]).length <= MAX_PATTERN_CHARS
    )
      last.push(term);
    else groups.push([term]);
  }
  // A single identifier too long for one pattern is not searched for its definitions.
  return groups.filter((g) => definitionSearch(g).length <= MAX_PATTERN_CHARS);
}

export const FOCUS_KINDS: ReadonlySet<string> = new Set(["read", "callers", "pairs"]);

export type EvidenceCall = [
  kind: string,
  detail: string | number,
  tool: string,
  input: Record<string, unknown>,
];

/**
 * The first questions the task's text asks of the repository: one probe (Grep, content) for
 * every name it writes as code, one Glob for the file names it mentions (and short literals
 * that may name a file: `locale('sv')`), one Grep per quoted message.
 */
export function evidenceCalls(s: Steering): EvidenceCall[] {
  const out: EvidenceCall[] = [];
  probePatterns(probeNames(s.evidence)).forEach((pattern, i) => {
    out.push([
      "probe",
      i,
      "Grep",
      { pattern, output_mode: "content", head_limit: MAX_SEARCH_HITS },
    ]);
  });
  const names = [
    ...s.evidence.paths.map((p) => p.text.slice(p.text.lastIndexOf("/") + 1)),
    ...s.evidence.literals.flatMap((l) => [`${l}.*`, `${l}`]),
  ].filter(
    (n, i, all) => n !== "" && !/[{},\\[\]*?]/.test(n.replace(/\.\*$/, "")) && all.indexOf(n) === i,
  );
  let pattern = "";
  for (const n of names) {
    const next = pattern === "" ? n : `${pattern},${n}`;
    if (next.length + 5 > MAX_GLOB_CHARS) break;
    pattern = next;
  }
  if (pattern !== "") out.push(["named", 0, "Glob", { pattern: `**/{${pattern}}` }]);
  s.evidence.messages.forEach((message, i) => {
    out.push([
      "message",
      i,
      "Grep",
      { pattern: escapeRegExp(message), output_mode: "count", head_limit: MAX_SEARCH_HITS },
    ]);
  });
  return out;
}

export type FocusCall = [kind: string, tool: string, input: Record<string, unknown>];

/**
 * The first round: read the listed candidates and a few behind them, search for whoever
 * imports the strongest, and look for tests named after them. A later round reads only what
 * the imports promoted into the lists.
 */
export function focusCalls(
  ranking: readonly RankedFile[],
  chosen: Chosen,
  k: Knowledge,
  s: Steering,
  first: boolean,
): FocusCall[] {
  const { changes, checks } = chosen;
  const tests = chosen.tests.filter((t) => changes.slice(0, 2).some((c) => testPairing(t, c) >= 2));
  const listed = [...changes, ...checks];
  const sources = ranking.filter((f) => !f.isTest).map((f) => f.path);
  // The second round also reads the tests of the first files to change: the steps name the
  // case to put a new one beside.
  const toRead = (
    first ? [...listed, ...sources].slice(0, READ_FIRST_ROUND) : [...listed, ...tests]
  )
    .concat(first ? s.unknownNamed : [])
    .filter((p, i, all) => all.indexOf(p) === i && !k.attempted.has(p));
  const out: FocusCall[] = toRead.map((p) => [
    "read",
    "Read",
    { file_path: p, limit: READ_LIMIT_LINES },
  ]);
  if (!first) return out;
  const modules = moduleNames(listed.slice(0, IMPORTERS_OF));
  if (modules.length > 0)
    out.push([
      "callers",
      "Grep",
      { pattern: importersSearch(modules), output_mode: "content", head_limit: MAX_SEARCH_HITS },
    ]);
  const globs: string[] = [];
  for (const p of listed) for (const g of testGlobs(p)) if (!globs.includes(g)) globs.push(g);
  let pattern = "";
  for (const g of globs) {
    const next = pattern === "" ? g : `${pattern},${g}`;
    if (next.length + 2 > MAX_GLOB_CHARS) break;
    pattern = next;
  }
  if (pattern !== "") out.push(["pairs", "Glob", { pattern: `{${pattern}}` }]);
  return out;
}

/** A Glob for paths whose name contains the term, in any letter case. */
export function pathGlob(term: Term): string {
  const c = caseless(term.text);
  return `{**/*${c}*,**/*${c}*/**}`;
}

/** Lines read from each candidate (line references and imports come from these). */
export const READ_LIMIT_LINES = 1_500;

/** Candidates read in the first round: the listed files and a few behind them. */
export const READ_FIRST_ROUND = MAX_LISTED + 2;

/** Grep's entry cap, the most one call may ask for. */
export const MAX_SEARCH_HITS = 1_000;

/** Terms one definitions search covers (three spellings each stay within Grep's literal prefilter). */
export const TERMS_PER_DEFINITION_SEARCH = 5;

/** A term in more than this share of files is too common for its definitions to say much. */
export const DEFINITIONS_MAX_SHARE = 0.5;

/** Longest pattern Grep accepts. */
export const MAX_PATTERN_CHARS = 1_000;

/** Candidates whose importers are searched for. */
export const IMPORTERS_OF = 6;

/** Longest Glob pattern the pairs search builds (Glob accepts 1,000 characters). */
export const MAX_GLOB_CHARS = 950;
