import { MANIFEST_NAMES, README_NAMES } from "./manifests.ts";
import { isGeneratedPath } from "./ranking.ts";
import { deriveTerms, MAX_ANALYSED_CHARS, pathMentions, type Term } from "./terms.ts";
import {
  type CallRecord,
  globPaths,
  grepCounts,
  lsEntries,
  readLines,
  type Transcript,
} from "./transcript.ts";

/**
 * Everything the offline planner's own tool calls have revealed, plus what the user's inputs
 * mean for the search (terms, named files, a chosen area). Pure: a transcript in, facts out.
 */

export interface SearchResult {
  hits: Map<string, number> | null;
  truncated: boolean;
  pathMatches: Set<string> | null;
}

export interface Knowledge {
  root: { dirs: string[]; files: string[] } | null;
  /** Reads made (including failed ones), by repository path. */
  attempted: Set<string>;
  /** Files read successfully: numbered lines. */
  texts: Map<string, [number, string][]>;
  /** Top-level folders counted: total files and the paths seen. */
  areas: Map<string, { total: number; paths: string[] }>;
  areaSurveyDone: boolean;
  searches: Map<string, SearchResult>;
  /** Every repository path any result mentioned. */
  known: Set<string>;
  question: CallRecord | null;
}

/** Folders at the root that are never an "area" of the code base. */
const NOT_AN_AREA =
  /^(\.|node_modules$|dist$|build$|out$|target$|vendor$|coverage$|__pycache__$|venv$)/;

/**
 * Collects what the offline planner's own earlier tool calls found (results read back by call kind).
 */
export function gatherKnowledge(t: Transcript): Knowledge {
  const k: Knowledge = {
    root: null,
    attempted: new Set(),
    texts: new Map(),
    areas: new Map(),
    areaSurveyDone: false,
    searches: new Map(),
    known: new Set(),
    question: null,
  };
  for (const call of t.calls) {
    if (call.kind === "ask") k.question = call;
    if (call.kind === "area") k.areaSurveyDone = true;
    const path = typeof call.input.file_path === "string" ? call.input.file_path : null;
    if ((call.kind === "read" || call.kind === "manifest") && path !== null) k.attempted.add(path);
    const result = call.result;
    if (result === null) continue;
    switch (call.kind) {
      case "ls":
        if (!result.isError) {
          k.root = lsEntries(result.text);
          for (const f of k.root.files) k.known.add(f);
        } else k.root = { dirs: [], files: [] };
        break;
      case "read":
      case "manifest":
        if (!result.isError && path !== null) {
          k.texts.set(path, readLines(result.text));
          k.known.add(path);
        }
        break;
      case "area": {
        const dir = String(call.input.pattern ?? "").replace(/\/\*\*.*$/, "");
        const { paths, total } = result.isError ? { paths: [], total: 0 } : globPaths(result.text);
        k.areas.set(dir, { total, paths });
        for (const p of paths) k.known.add(p);
        break;
      }
      case "grep":
      case "glob": {
        const term = call.term ?? "";
        const entry = k.searches.get(term) ?? { hits: null, truncated: false, pathMatches: null };
        if (call.kind === "grep") {
          const counts = result.isError
            ? { hits: new Map<string, number>(), truncated: false }
            : grepCounts(result.text);
          entry.hits = counts.hits;
          entry.truncated ||= counts.truncated;
          for (const p of counts.hits.keys()) k.known.add(p);
        } else {
          const { paths, total } = result.isError
            ? { paths: [], total: 0 }
            : globPaths(result.text);
          entry.pathMatches = new Set(paths);
          entry.truncated ||= total > paths.length;
          for (const p of paths) k.known.add(p);
        }
        k.searches.set(term, entry);
        break;
      }
      default:
        break;
    }
  }
  return k;
}

/**
 * Top-level manifests and the README present at the root, in reading order.
 *
 * @example
 * manifestsToRead(k) // ["package.json", "Makefile", "README.md"]
 */
export function manifestsToRead(k: Knowledge): string[] {
  const files = new Set(k.root?.files ?? []);
  const manifests: string[] = MANIFEST_NAMES.filter((n) => files.has(n));
  const readme = README_NAMES.find((n) => files.has(n));
  return readme ? [...manifests, readme] : manifests;
}

/**
 * Top-level folders worth counting as areas of the code base.
 *
 * @example
 * areaDirs(k) // ["docs", "src", "test"]
 */
export function areaDirs(k: Knowledge): string[] {
  return (k.root?.dirs ?? []).filter((d) => !NOT_AN_AREA.test(d)).slice(0, 12);
}

/** How the user's inputs steer the search. */
export interface Steering {
  terms: Term[];
  /** Known paths the user named (to include), and named paths not known yet (to try reading). */
  include: Set<string>;
  unknownNamed: string[];
  exclude: Set<string>;
  /** The area the user chose in answer to the clarifying question. */
  scope: string | null;
  /** The question went unanswered (AFK) or was answered in free text. */
  afk: boolean;
  /** Notes for the plan's revision section, one per input after the task. */
  notes: string[];
}

/** Feedback words that turn a named file into one to leave alone. */
const NEGATION =
  /\b(not|don't|dont|do not|no need|never|leave|without|skip|exclude|remove|drop|instead of|rather than|avoid|untouched)\b/i;

/**
 * Turns the task and every later input into search steering.
 *
 * @example
 * steer(transcript, knowledge).terms.map((t) => t.text) // ["invoice", "round", …]
 */
export function steer(t: Transcript, k: Knowledge): Steering {
  const terms = new Map<string, Term>();
  const addTerms = (text: string, boost: number, dropNegated = true) => {
    for (const term of deriveTerms(searchableText(analysed(text), dropNegated))) {
      const known = terms.get(term.text);
      if (known) known.weight = Math.max(known.weight, term.weight * boost);
      else if (terms.size < 16)
        terms.set(term.text, { text: term.text, weight: term.weight * boost });
    }
  };
  addTerms(t.task, 1, false);

  const include = new Set<string>();
  const exclude = new Set<string>();
  const unknownNamed: string[] = [];
  const notes: string[] = [];
  let scope: string | null = null;
  let afk = false;

  const named = (text: string) => {
    for (const { mention, negated } of namedPaths(analysed(text))) {
      const path = resolveMention(mention, k.known);
      if (negated) {
        if (path) {
          exclude.add(path);
          include.delete(path);
        }
      } else if (path) {
        include.add(path);
        exclude.delete(path);
      } else if (mention.includes("/") && !unknownNamed.includes(mention))
        unknownNamed.push(mention);
    }
  };

  named(t.task);
  for (const input of t.inputs) {
    if (input.kind === "text") {
      addTerms(input.text, 1.5);
      named(input.text);
      notes.push(`You wrote: "${clip(input.text)}"`);
    } else if (input.kind === "rejection") {
      const { feedback, comments } = input.rejection;
      const all = [feedback, ...comments.map((c) => c.text)].join("\n");
      addTerms(all, 1.5);
      named(all);
      for (const c of comments) {
        // A comment on a passage that names files: "drop this" rules them out, anything else
        // keeps them in.
        const negated = NEGATION.test(c.text);
        for (const mention of pathMentions(c.quote)) {
          const path = resolveMention(mention.replace(/^repo\//, ""), k.known);
          if (path === null) continue;
          if (negated) {
            exclude.add(path);
            include.delete(path);
          } else if (!exclude.has(path)) include.add(path);
        }
      }
      if (feedback) notes.push(`Feedback: "${clip(feedback)}"`);
      for (const c of comments) notes.push(`Comment on "${clip(c.quote, 60)}": "${clip(c.text)}"`);
    } else {
      const values = Object.values(input.answers);
      if (input.afk && values.length === 0) afk = true;
      for (const value of values) {
        const area = areaOf(value, k);
        if (area !== null) scope = area;
        else {
          addTerms(value, 1.5);
          named(value);
        }
      }
      if (input.afk) afk = true;
    }
  }
  return { terms: [...terms.values()], include, unknownNamed, exclude, scope, afk, notes };
}

/**
 * The words of an input worth searching for: file paths are taken out (they steer by name, and
 * their folder names would only add noise), and so are clauses that rule something out ("do
 * not touch the routes") — their nouns are what the user does NOT want.
 */
function searchableText(text: string, dropNegated: boolean): string {
  return text
    .split(/[.!?;]\s+|\n/)
    .filter((clause) => !dropNegated || !NEGATION.test(clause) || /\bforget\b/i.test(clause))
    .map((clause) =>
      pathMentions(clause).reduce((rest, path) => rest.split(path).join(" "), clause),
    )
    .join("\n");
}

/** A path mention and whether the words just before it rule it out. */
function namedPaths(text: string): { mention: string; negated: boolean }[] {
  const out: { mention: string; negated: boolean }[] = [];
  for (const sentence of text.split(/[.!?;]\s+|\n/)) {
    for (const mention of pathMentions(sentence)) {
      const at = sentence.indexOf(mention);
      const before = sentence.slice(Math.max(0, at - 40), at);
      out.push({ mention: mention.replace(/^repo\//, ""), negated: NEGATION.test(before) });
    }
  }
  return out;
}

/**
 * A mentioned path resolved against the known paths (exact, else a unique suffix match).
 *
 * @example
 * resolveMention("tax.ts", new Set(["src/billing/tax.ts"])) // "src/billing/tax.ts"
 */
export function resolveMention(mention: string, known: ReadonlySet<string>): string | null {
  if (known.has(mention)) return mention;
  const matches = [...known].filter((p) => p.endsWith(`/${mention}`) && !isGeneratedPath(p));
  return matches.length >= 1 ? matches.sort()[0]! : null;
}

/** The area a question answer picked (an option label like "src/" or "src"), if any. */
function areaOf(answer: string, k: Knowledge): string | null {
  const name = answer.trim().replace(/\/$/, "");
  return k.areas.has(name) ? name : null;
}

/** The part of an input the planner reads (terms.ts {@link MAX_ANALYSED_CHARS}). */
function analysed(text: string): string {
  return text.slice(0, MAX_ANALYSED_CHARS);
}

function clip(text: string, max = 160): string {
  const flat = text
    .slice(0, max * 8)
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
