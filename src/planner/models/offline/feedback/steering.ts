import type { Knowledge } from "../repository/knowledge.ts";
import { readTask, type TaskEvidence } from "../task/evidence.ts";
import { nameCensus, probeNames } from "../task/probes.ts";
import { type TermSource, taskTerms } from "../task/task-terms.ts";
import {
  deriveTerms,
  MAX_ANALYSED_CHARS,
  parseTask,
  pathMentions,
  splitIdentifier,
  stem,
  type Term,
} from "../task/terms.ts";
import type { Transcript } from "../transcript.ts";
import { applyInputs } from "./inputs.ts";
import { NEGATION, namedPaths, resolveMention } from "./mentions.ts";
import type { FileKind } from "./targets.ts";

/**
 * The third stage, the reviewer's inputs (feedback/): reader.ts reads what a reviewer's words
 * ask (targets.ts: what they point at), instructions.ts ties that to the repository's files,
 * inputs.ts applies the inputs in order, mentions.ts finds the paths and passages a text
 * names, and this module joins them with the task's terms into the steering that the
 * searches, the ranking (rank/) and the plan (draft/) follow.
 *
 * What the task and the user's later inputs mean for the plan. Pure. Feedback and comments
 * are instructions, not more search words: the files they name are pulled in, kept, made the
 * whole list or ruled out as their verbs say, kinds of files (tests, docs, changelog) are
 * added or left out, a name written as code means the one file that defines it, a comment
 * that instructs nothing focuses the ranking on the files its passage is about, and words
 * that ask for a new table or a migration make the plan follow the repository's migrations.
 */

/** Why a term or file is in the search: the task, or a later input. */
export type Source = "task" | "feedback";

export interface Steering {
  /** The task without its `area:` hint. */
  task: string;
  /** A one-line task (a subject, a request typed at the terminal) rather than an issue. */
  oneLine: boolean;
  /** The `area:` hint of the task, if any. */
  area: string | null;
  /** What the task's text points at: paths, frames, names, messages (task/evidence.ts). */
  evidence: TaskEvidence;
  terms: Term[];
  /** How each of the task's terms was chosen (a name in a code span, a title word, …). */
  termSources: Map<string, TermSource>;
  /** Terms that only later inputs brought in (names looked up, free-text answers). */
  feedbackTerms: Set<string>;
  /** Known paths the user named (to include), and named paths not known yet (to try reading). */
  include: Set<string>;
  /** The known paths of `include` that a seeded session's draft named (draft/seed.ts). */
  drafted: Set<string>;
  unknownNamed: string[];
  exclude: Set<string>;
  /** Files the reviewer asked to keep: never dropped. */
  keep: Set<string>;
  /** Files the reviewer said already handle something: listed to check, not to change. */
  check: Set<string>;
  /** Kinds of files the reviewer asked to leave out, to add, and to keep. */
  kinds: { drop: Set<FileKind>; add: Set<FileKind>; keep: Set<FileKind> };
  /** Words of the inputs not acted on, with why (the revision says so). */
  unread: { said: string; why: string }[];
  /** Names written as code whose defining file could not be told. */
  unresolved: string[];
  /** Why each file moved, in the reviewer's terms. */
  reasons: Map<string, string>;
  /**
   * The files the lists must be, when feedback said "only …" (in the order named); null when
   * no input restricted them.
   */
  only: string[] | null;
  /** Bare file names the inputs mention that several files have (none was taken). */
  ambiguous: string[];
  /** Files a comment was about: the ranking moves towards them and their neighbours. */
  focus: Set<string>;
  /** The area the user chose in answer to the clarifying question. */
  scope: string | null;
  /** The question went unanswered (AFK) or was answered in free text. */
  afk: boolean;
  /** The inputs after the task, in order, as the plan's revision notes quote them. */
  notes: string[];
  /** The words of those inputs (feedback, comments, messages), as written. */
  feedbackTexts: string[];
  /** The task or feedback asks for a schema change (a table, a column, a migration). */
  wantsMigration: boolean;
  /** Feedback asked for a migration (so the revision notes can say why one appeared). */
  migrationFromFeedback: boolean;
}

/** Words that ask for a schema change. */
const MIGRATION_WORDS =
  /\b(migrations?|migrate|schema|tables?|columns?|database|db|foreign keys?|indexe?s?)\b/i;

/** Most terms one planning cycle searches for (the task's, its area's, a draft's, feedback's). */
const MAX_STEERING_TERMS = 16;

/**
 * Turns the task and every later input into search steering. `draft` is what the search reads
 * of a seeded session's draft (draft/seed.ts): a few of its words after the task's, and the
 * repository files it names.
 *
 * @example
 * steer(transcript, knowledge).terms.map((t) => t.text) // ["invoice", "round", …]
 */
export function steer(t: Transcript, k: Knowledge, draft: string | null = null): Steering {
  const { text: task, area } = parseTask(t.task);
  const terms = new Map<string, Term>();
  const feedbackTerms = new Set<string>();
  const addTerms = (text: string, boost: number, source: Source) => {
    const { kept } = clauses(analysed(text), source === "feedback");
    for (const term of deriveTerms(kept)) {
      const known = terms.get(term.text);
      if (known) known.weight = Math.max(known.weight, term.weight * boost);
      else if (terms.size < MAX_STEERING_TERMS) {
        terms.set(term.text, { ...term, weight: term.weight * boost });
        if (source === "feedback") feedbackTerms.add(term.text);
      }
    }
  };
  // The task's terms are chosen by what kind of evidence each word is (task/evidence.ts); its path
  // mentions are evidence too, weighed by how surely they name a file — never "named" files.
  // A one-line task (a commit subject, a request typed at the terminal) keeps every word in
  // its own order, as before.
  const evidence = readTask(task);
  const termSources = new Map<string, TermSource>();
  if (isOneLine(task)) {
    addTerms(task, 1, "task");
    dropPartsOfKnownNames(terms, task, evidence, k);
    lessenReplaced(terms, task);
  } else
    for (const term of taskTerms(evidence, censusOf(evidence, k))) {
      const { via, ...plain } = term;
      terms.set(term.text, plain);
      termSources.set(term.text, via);
    }
  // A hint that names a thing rather than a folder ("router", "bash-v2") is searched for too.
  if (area !== null && !area.includes("/") && !/^(repository )?root$/i.test(area.trim()))
    for (const term of deriveTerms(area.replace(/[-_]/g, " ")))
      if (!terms.has(term.text) && terms.size < MAX_STEERING_TERMS) terms.set(term.text, term);

  const inputs = applyInputs(t, k);
  const drafted =
    draft === null ? new Set<string>() : steerByDraft(draft, k, terms, inputs.include);
  // What the reviewer ruled out stays out, whatever the draft named.
  for (const path of inputs.exclude) {
    inputs.include.delete(path);
    drafted.delete(path);
  }
  // Free-text answers are evidence like the task; names written as code in any input are
  // looked up (searched for where they are defined) and never rank files by their words.
  for (const text of inputs.answerTexts) addTerms(text, 1.5, "feedback");
  for (const lookup of inputs.lookups)
    if (!terms.has(lookup.text)) {
      terms.set(lookup.text, lookup);
      feedbackTerms.add(lookup.text);
    }
  // An issue's prose mentions tables and columns for many reasons; its title asks for a schema change.
  let wantsMigration = MIGRATION_WORDS.test(evidence.title);
  let migrationFromFeedback = false;
  if (inputs.asking.some((text) => MIGRATION_WORDS.test(text))) {
    migrationFromFeedback = !wantsMigration;
    wantsMigration = true;
  }
  // A schema change is planned with the repository's migrations: find them by name.
  if (wantsMigration && !terms.has("migr")) terms.set("migr", { text: "migr", weight: 0.5 });
  return {
    task,
    oneLine: isOneLine(task),
    area,
    evidence,
    terms: [...terms.values()],
    termSources,
    feedbackTerms,
    include: inputs.include,
    drafted,
    unknownNamed: inputs.unknownNamed,
    exclude: inputs.exclude,
    keep: inputs.keep,
    check: inputs.check,
    kinds: inputs.kinds,
    unread: inputs.unread,
    unresolved: inputs.unresolved,
    reasons: inputs.reasons,
    only: inputs.only,
    ambiguous: inputs.ambiguous,
    focus: inputs.focus,
    scope: inputs.scope,
    afk: inputs.afk,
    notes: inputs.notes,
    feedbackTexts: inputs.feedbackTexts,
    wantsMigration,
    migrationFromFeedback,
  };
}

/** Search terms a draft adds at most (the rest of the budget stays for feedback). */
const MAX_DRAFT_TERMS = 5;
/** A draft's words count for less than the task's: a draft can be wrong about the code. */
const DRAFT_TERM_WEIGHT = 0.8;

/**
 * A draft written elsewhere steers like the task, only less: a few of its words become terms
 * after the task's, and the repository files it names are pulled in (returned, so their
 * evidence says "named in your draft"). Paths it names that the repository lacks are not
 * searched for: the plan asks about them (draft/seed.ts).
 */
function steerByDraft(
  draft: string,
  k: Knowledge,
  terms: Map<string, Term>,
  include: Set<string>,
): Set<string> {
  const { kept } = clauses(analysed(draft), false);
  let added = 0;
  for (const term of deriveTerms(kept)) {
    if (added >= MAX_DRAFT_TERMS || terms.size >= MAX_STEERING_TERMS) break;
    if (terms.has(term.text)) continue;
    terms.set(term.text, { ...term, weight: term.weight * DRAFT_TERM_WEIGHT });
    added++;
  }
  const drafted = new Set<string>();
  const named = namedPaths(analysed(draft), DRAFT_NEGATION);
  // A bare name that many files have (`index.test.ts`) is the one beside a path the draft names.
  const siblings = named.map((n) => n.mention).filter((m) => k.known.has(m));
  for (const { mention, negated } of named) {
    const path = negated ? null : resolveMention(mention, k.known, siblings);
    if (path !== null) {
      include.add(path);
      drafted.add(path);
    }
  }
  return drafted;
}

/**
 * The clauses of an input worth searching for, and the ones that rule something out ("do not
 * touch the routes": its nouns are what the user does NOT want). File paths are taken out of
 * both: they steer by name, and their folder names would only add noise.
 */
function clauses(text: string, splitNegated: boolean): { kept: string; dropped: string } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const clause of text.split(/[.!?;]\s+|\n/)) {
    const bare = pathMentions(clause).reduce((rest, path) => rest.split(path).join(" "), clause);
    if (splitNegated && NEGATION.test(clause) && !/\bforget\b/i.test(clause)) dropped.push(bare);
    else kept.push(bare);
  }
  return { kept: kept.join("\n"), dropped: dropped.join("\n") };
}

/**
 * What rules a file out in a draft: "leave", "not", "never" — not "remove" or "skip", which
 * in a plan's step say what to do in the file ("Remove the fallback in src/a.ts").
 */
const DRAFT_NEGATION =
  /\b(not|don't|dont|do not|no need|never|leave|untouched|keep out|instead of|rather than|avoid)\b/i;

/**
 * A name the repository holds (`decodeURIComponent`) is evidence whole: its parts ("decode",
 * "component") count for little on their own, or they would pull in every file that says
 * "component". The parts of a name it does not hold keep their weight — they are all there is
 * to go on for something new (`retryJitter`).
 */
function dropPartsOfKnownNames(
  terms: Map<string, Term>,
  task: string,
  evidence: TaskEvidence,
  k: Knowledge,
): void {
  const census = censusOf(evidence, k);
  const names = evidence.names.filter((n) => splitIdentifier(n.name).length > 1);
  if (names.length === 0) return;
  let plain = task;
  for (const n of names) plain = plain.split(n.name).join(" ");
  const spoken = new Set(deriveTerms(plain).map((t) => t.text));
  for (const n of names) {
    const whole = splitIdentifier(n.name).join("");
    const held = (census?.files.get(n.name)?.size ?? 0) > 0;
    for (const part of splitIdentifier(n.name)) {
      const t = stem(part);
      const term = terms.get(t);
      if (t === whole || spoken.has(t) || term === undefined || term.code === true) continue;
      term.partOf = whole;
      if (held) term.weight *= HELD_PART_WEIGHT;
    }
  }
}

/**
 * What a task replaces ("… instead of `decodeURIComponent`", "rather than X") is where the
 * change comes from, not where it goes: its words count half, unless the rest says them too.
 */
function lessenReplaced(terms: Map<string, Term>, task: string): void {
  const at = task.search(/\b(?:instead of|rather than|in place of)\b/i);
  if (at === -1) return;
  const head = new Set(deriveTerms(task.slice(0, at)).map((t) => t.text));
  for (const t of deriveTerms(task.slice(at))) {
    const term = terms.get(t.text);
    if (term !== undefined && !head.has(t.text)) term.weight *= REPLACED_WEIGHT;
  }
}

/** The share of its weight a word of what the task replaces keeps. */
const REPLACED_WEIGHT = 0.5;

/** The share of its weight a part of a held name keeps. */
const HELD_PART_WEIGHT = 0.4;

/** What the task's probe found for its names (null before it ran). */
function censusOf(evidence: TaskEvidence, k: Knowledge) {
  return k.probe === null ? null : nameCensus(probeNames(evidence), k.probe.rows, k.probe.cut);
}

/** Longest task read as one line (a subject, a request typed at the terminal). */
const ONE_LINE_CHARS = 200;

/** A task of one short line: its words are all its evidence. */
function isOneLine(task: string): boolean {
  const trimmed = task.trim();
  return trimmed.length <= ONE_LINE_CHARS && !trimmed.includes("\n");
}

/** The part of an input the planner reads (task/terms.ts {@link MAX_ANALYSED_CHARS}). */
function analysed(text: string): string {
  return text.slice(0, MAX_ANALYSED_CHARS);
}
