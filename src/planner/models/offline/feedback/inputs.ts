import type { Knowledge } from "../repository/knowledge.ts";
import { searchOf } from "../repository/knowledge.ts";
import {
  identifierSpellings,
  MAX_ANALYSED_CHARS,
  splitIdentifier,
  type Term,
} from "../task/terms.ts";
import type { Transcript } from "../transcript.ts";
import { type Instructions, instructionsOf, type RepositoryView } from "./instructions.ts";
import { areaOf, passageFiles } from "./mentions.ts";
import type { FileKind } from "./targets.ts";

/**
 * The user's inputs after the task — rejections with feedback and inline comments, later
 * messages, answers to the clarifying question — applied in order, as instructions over the
 * repository's files (instructions.ts). Pure. A later input wins over an earlier one ("drop
 * the tests", then "add a test in F": F is listed). What no input could be acted on is kept,
 * to be said in the revision.
 */

/** What the inputs ask of the plan. */
export interface InputSteering {
  include: Set<string>;
  exclude: Set<string>;
  keep: Set<string>;
  only: string[] | null;
  /** Files the reviewer said already handle something: listed to check. */
  check: Set<string>;
  focus: Set<string>;
  unknownNamed: string[];
  ambiguous: string[];
  /** Kinds of files to leave out, to add, and never to leave out. */
  kinds: { drop: Set<FileKind>; add: Set<FileKind>; keep: Set<FileKind> };
  /** Names written as code whose defining files are looked up (searched, never ranked by). */
  lookups: Term[];
  /** Names whose definitions could not be looked up (searches cut, or too common a name). */
  unresolved: string[];
  /** Words not acted on, with why (quoted in the revision notes). */
  unread: { said: string; why: string }[];
  /** Why each file moved, in the reviewer's terms. */
  reasons: Map<string, string>;
  /** The area chosen in answer to the question. */
  scope: string | null;
  afk: boolean;
  notes: string[];
  feedbackTexts: string[];
  /** Words of the inputs that ask for something, for the migration rule. */
  asking: string[];
  /** Free-text answers, searched like the task (evidence, not instructions). */
  answerTexts: string[];
}

/** Names looked up per planning cycle at most (each is one count, one glob, one definitions search). */
const MAX_LOOKUPS = 6;

/**
 * Applies the inputs of a transcript.
 *
 * @example
 * applyInputs(t, k).exclude // Set { "src/flask/wrappers.py" }
 */
export function applyInputs(t: Transcript, k: Knowledge): InputSteering {
  const s: InputSteering = {
    include: new Set(),
    exclude: new Set(),
    keep: new Set(),
    only: null,
    check: new Set(),
    focus: new Set(),
    unknownNamed: [],
    ambiguous: [],
    kinds: { drop: new Set(), add: new Set(), keep: new Set() },
    lookups: [],
    unresolved: [],
    unread: [],
    reasons: new Map(),
    scope: null,
    afk: false,
    notes: [],
    feedbackTexts: [],
    asking: [],
    answerTexts: [],
  };
  const repo: RepositoryView = { known: k.known, definers: (name) => definersOf(name, k) };
  const apply = (i: Instructions) => {
    for (const path of i.exclude) {
      s.exclude.add(path);
      s.include.delete(path);
      s.keep.delete(path);
      s.check.delete(path);
      s.focus.delete(path);
      if (s.only !== null) s.only = s.only.filter((p) => p !== path);
    }
    for (const path of [...i.include, ...i.keep, ...i.tests]) {
      s.include.add(path);
      s.exclude.delete(path);
      if (s.only !== null && i.only === null && !s.only.includes(path)) s.only.push(path);
    }
    for (const path of i.keep) s.keep.add(path);
    for (const path of i.check) {
      s.check.add(path);
      s.exclude.delete(path);
    }
    if (i.only !== null) {
      s.only = [...i.only];
      for (const path of i.only) s.exclude.delete(path);
    }
    for (const kind of i.kinds.drop) {
      s.kinds.drop.add(kind);
      s.kinds.add.delete(kind);
      s.kinds.keep.delete(kind);
    }
    for (const kind of i.kinds.add) {
      s.kinds.add.add(kind);
      s.kinds.drop.delete(kind);
    }
    for (const kind of i.kinds.keep) {
      s.kinds.keep.add(kind);
      s.kinds.drop.delete(kind);
    }
    for (const mention of i.unknown)
      if (!s.unknownNamed.includes(mention)) s.unknownNamed.push(mention);
    for (const mention of i.ambiguous)
      if (!s.ambiguous.includes(mention)) s.ambiguous.push(mention);
    for (const [path, why] of i.reasons) s.reasons.set(path, why);
    for (const u of i.unread) if (!s.unread.some((x) => x.said === u.said)) s.unread.push(u);
    for (const name of i.lookups) lookUp(name);
    if (i.asking !== "") s.asking.push(i.asking);
  };
  const lookUp = (name: string) => {
    const text = splitIdentifier(name).join("");
    if (text.length < 3 || s.lookups.some((x) => x.text === text)) return;
    if (s.lookups.length >= MAX_LOOKUPS) {
      s.unresolved.push(name);
      return;
    }
    s.lookups.push({
      text,
      weight: 0,
      surface: name,
      code: true,
      spellings: identifierSpellings(name),
    });
  };

  for (const input of t.inputs) {
    if (input.kind === "text") {
      apply(instructionsOf(analysed(input.text), repo));
      s.feedbackTexts.push(analysed(input.text));
      s.notes.push(`You wrote: "${clip(input.text)}"`);
    } else if (input.kind === "rejection") {
      const { feedback, comments } = input.rejection;
      if (feedback.trim() !== "") apply(instructionsOf(analysed(feedback), repo));
      for (const c of comments) {
        // A comment on a passage: "drop this" rules its files out, "only this" makes them the
        // list, "this belongs in X" moves the change; a comment that instructs nothing about
        // the passage re-ranks around its files.
        const passage = passageFiles(c.quote, t, k);
        const i = instructionsOf(analysed(c.text), repo, passage);
        apply(i);
        const used = passage.some(
          (p) =>
            i.include.includes(p) ||
            i.exclude.includes(p) ||
            i.keep.includes(p) ||
            i.check.includes(p) ||
            (i.only ?? []).includes(p),
        );
        if (!used) for (const p of passage) if (!s.exclude.has(p)) s.focus.add(p);
      }
      s.feedbackTexts.push(analysed([feedback, ...comments.map((c) => c.text)].join("\n")));
      if (feedback) s.notes.push(`Feedback: "${clip(feedback)}"`);
      for (const c of comments)
        s.notes.push(`Comment on "${clip(c.quote, 60)}": "${clip(c.text)}"`);
    } else {
      const values = Object.values(input.answers);
      if (input.afk && values.length === 0) s.afk = true;
      for (const value of values) {
        const chosen = areaOf(value, k);
        if (chosen !== null) s.scope = chosen;
        else {
          // A free-text answer to "where should the plan look?" is evidence, like the task.
          s.answerTexts.push(value);
          apply(instructionsOf(analysed(value), repo));
        }
      }
      if (input.afk) s.afk = true;
    }
  }
  // A name counted but whose definitions no search found: which file defines it is unknown.
  for (const term of s.lookups)
    if (searchOf(k, term)?.hits != null && definersOf(term.surface ?? term.text, k) === undefined)
      s.unresolved.push(term.surface ?? term.text);
  return s;
}

/**
 * The files that define a name, from the definition searches: undefined until its
 * definitions were searched (or its search found no file at all: then none).
 */
function definersOf(name: string, k: Knowledge): readonly string[] | undefined {
  const whole = splitIdentifier(name).join("");
  const exact = [...k.defs]
    .filter(([, defs]) => defs.some((d) => splitIdentifier(d.name).join("") === whole))
    .map(([path]) => path)
    .sort();
  if (k.defsSearched.has(whole)) return exact;
  const found = searchOf(k, { text: whole });
  if (found?.hits == null) return undefined;
  if (found.hits.size === 0 && (found.pathMatches?.size ?? 0) === 0) return [];
  // Counted, but its definitions are not searched (yet, or it is too common a name to).
  return exact.length > 0 ? exact : undefined;
}

/** The part of an input the planner reads (task/terms.ts {@link MAX_ANALYSED_CHARS}). */
function analysed(text: string): string {
  return text.slice(0, MAX_ANALYSED_CHARS);
}

/** One line of at most `max` characters. */
export function clip(text: string, max = 160): string {
  const flat = text
    .slice(0, max * 8)
    .replace(/\s+/g, " ")
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
