import { MAX_ANALYSED_CHARS } from "../task/terms.ts";
import { type FileKind, maskTargets, slotsIn, type Target } from "./targets.ts";

/**
 * The feedback reader: what a reviewer's words ask of the next revision. Pure, and blind to
 * the repository (resolution.ts ties its targets to files). It reads the constructions
 * reviewers write — "X, not Y", "belongs in X not Y", "don't touch Y", "leave Y alone/out",
 * "no tests needed", "skip the docs for now", "not only X", "forget X", "don't forget X",
 * "also / and / plus", "only / just", "instead of X use Y", "X is already handled in Y",
 * "move X to Y", "add a test in F" — and knows a statement from an instruction: "X only calls
 * Y" says how the code is, it restricts nothing.
 *
 * Two rules hold whatever the words: a target named with a keeping verb (keep, also, only,
 * belongs in, move to, use, add) is never ruled out, and words it cannot read with confidence
 * are returned as unread — doing nothing and saying so beats doing the opposite.
 */

/** What an instruction does to its targets. */
export type Verb =
  /** Keep in the plan (and add when missing); never drop. */
  | "keep"
  /** Rule out of the plan. */
  | "drop"
  /** The plan's lists are these and nothing else. */
  | "only"
  /** Add to the plan. */
  | "also"
  /** The change goes to `to` (from `targets`, which stay: something changes there too). */
  | "move"
  /** Use `to` instead of `targets`: `to` is added, named files of `targets` are ruled out. */
  | "use"
  /** `targets` is already handled in `to`: `to` is a file to check, nothing new for it. */
  | "handled"
  /** Add or extend a test in `to`. */
  | "test-in";

/** How a drop was said, for the reason the revision gives. */
export type DropHow = "alone" | "out" | "drop" | "elsewhere";

export interface Instruction {
  verb: Verb;
  /** For drop: how it was said ("leave it alone", "leave it out", "drop it", "not in X"). */
  how?: DropHow;
  targets: Target[];
  /** The destination of move, use, handled and test-in. */
  to: Target[];
  /** The words it was read from, as written. */
  said: string;
}

export interface Reading {
  instructions: Instruction[];
  /** Words read as no instruction, each with why. */
  unread: { said: string; why: string }[];
  /** Clauses that ask for something (not ruling it out), for the words that ask for a migration. */
  asking: string[];
}

/** Why words were not acted on. */
export const WHY = {
  none: "no file, kind of file or instruction I can act on",
  question: "a question, not an instruction",
  statement: "a statement about the code, not an instruction",
  ambiguous: "it can be read both ways",
  remove:
    "“remove” may mean deleting code there or leaving the file out of the plan; the file stays — say “drop it from the plan” to leave it out",
} as const;

/** Words that ask for a schema change (a table, a column, a migration). */
const SCHEMA = /\b(?:migrations?|migrate|schema|tables?|columns?|foreign keys?|indexe?s)\b/;

/** Words a reviewer adds that ask nothing (never reported as unread). */
const COURTESY =
  /^(?:thanks?(?: you)?|thx|ty|please|pls|lgtm|nice|great|cool|ok(?:ay)?|good|sounds good|looks good(?: otherwise| to me)?|makes sense|agreed|sure|yes|no|nit)[\s!.,:)]*$/i;

/**
 * Reads one input: feedback, an inline comment (`passage: true`: "this" and "it" mean the
 * quoted passage) or a message.
 *
 * @example
 * readFeedback("leave the tests out; the change belongs in src/flask/testing.py, not wrappers.py")
 * // instructions: drop [tests], also [src/flask/testing.py], drop [wrappers.py]
 */
export function readFeedback(text: string, passage = false): Reading {
  const out: Reading = { instructions: [], unread: [], asking: [] };
  for (const sentence of sentences(text.slice(0, MAX_ANALYSED_CHARS))) {
    const question = /\?\s*$/.test(sentence);
    for (const clause of clauses(sentence)) readClause(clause, question, passage, out);
  }
  return out;
}

/** Sentences, split where a sentence ends (never inside a code span or a file name). */
function sentences(text: string): string[] {
  const spans: string[] = [];
  const held = text.replace(/`[^`\n]{1,200}`/g, (m) => {
    spans.push(m);
    return `\u27E6${spans.length - 1}\u27E7`;
  });
  return held
    .split(/(?<=[.!?;])\s+|\n+|(?<=\?)(?=\S)/)
    .map((s) => s.replace(/\u27E6(\d+)\u27E7/g, (_, i: string) => spans[Number(i)]!).trim())
    .filter((s) => s !== "");
}

/**
 * The clauses of a sentence: split at contrast ("but", "however", "whereas") and where "and"
 * or a comma starts a new instruction ("drop the tests and update the docs").
 */
function clauses(sentence: string): string[] {
  return sentence
    .split(
      /\s*,?\s+(?:but|however|whereas|though|although|while)\s+|\s*[,;:]?\s+(?:and|,)\s+(?=(?:also\s+|then\s+|please\s+)?(?:drop|add|remove|leave|keep|update|change|include|skip|move|use|document|write|don't|do not|never|make|put|only|just|forget|ignore|omit|exclude|mention)\b)|\s*[;:]\s+|\s+[-–—]\s+/i,
    )
    .map((c) => c.trim())
    .filter((c) => c !== "");
}

// Pieces of the patterns below, on masked lower-case text.
const ART =
  "(?:(?:the|its|their|his|her|a|an|any|some|all|all the|these|those|my|our|your|new|existing|current|same|other)\\s+)*";
const SLOT = "§\\d+§";
const JOIN =
  "(?:\\s*,\\s*(?:and\\s+|or\\s+|&\\s+|plus\\s+)?|\\s+(?:and|or|&|plus|as well as)\\s+|\\s*/\\s*)";
const LIST = `${ART}${SLOT}(?:${JOIN}${ART}${SLOT})*`;
const PRONOUN =
  "(?:this|that|it|these|those|them)(?:\\s+(?:file|files|one|ones|module|part|change|step|line|bit|function|method|class))?";
const NEG =
  "(?:don't|dont|do not|doesn't|does not|didn't|did not|never|shouldn't|should not|mustn't|must not|needn't|need not|no need to|not need to|won't|will not|cannot|can't|can not|not)";
const EDIT =
  "(?:touch|change|modify|edit|update|alter|include|add|list|plan|mention|bother with|refactor|rewrite|mess with|move)";
const STAY =
  "(?:alone|out|as is|as-is|untouched|unchanged|the same|be|out of (?:it|this|the plan|the change|scope))";
const STATEMENT_VERB =
  "(?:calls?|uses?|wraps?|returns?|reads?|forwards?|delegates?|passes?|sets?|checks?|does|imports?|re-?exports?|proxies|handles?|contains?|has|holds?|defines?|exports?|affects?|applies|matters?|works?|runs?|happens?|touches?|takes?|accepts?|logs?|raises?|throws?|validates?|parses?|builds?|creates?|renders?|is|are|was)";

interface Construction {
  verb: Verb | "statement" | "unread";
  /** Group 1: the targets (or their words); group 2, when present: the destination. */
  pattern: RegExp;
  /** The object may be plain words naming modules (drop/only/also/keep after an explicit verb). */
  words?: boolean;
  /** With no destination: what group 1 holds is the destination (test-in). */
  toOnly?: boolean;
  /** Group 1 is the destination and group 2 the targets ("Y already handles X"). */
  toFirst?: boolean;
  /** The kind of file meant when the words name none ("document it", "test this"). */
  kind?: FileKind;
  /** The first target of the match must be this kind ("add a test in F"). */
  needs?: FileKind;
  /** How a drop was said, when the pattern alone tells. */
  how?: DropHow;
  why?: keyof typeof WHY;
}

/**
 * The constructions, tried in order on each clause; each claims the targets it matched. The
 * order is the point: "not only" before "only", "don't forget" before "don't", "X only calls
 * Y" before "only", "leave X in" before "leave X".
 */
const CONSTRUCTIONS: Construction[] = [
  // "X only calls Y", "X just wraps Y": a statement about X.
  {
    verb: "statement",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:only|just|merely|simply)\\s+${STATEMENT_VERB}\\b(.*)$`,
    ),
    why: "statement",
  },
  // Not only X / not just X: X is added, nothing is restricted.
  {
    verb: "also",
    pattern: new RegExp(`\\bnot (?:only|just|merely)(?: in| to| change| touch)? (${LIST})`),
  },
  // Don't forget X: X is asked for.
  {
    verb: "also",
    pattern: new RegExp(
      `\\b(?:don't|dont|do not|never) forget (?:about |to (?:add|update|write|include|change|touch|cover|mention|document) )?(${LIST})`,
    ),
  },
  // Don't drop X: X stays.
  {
    verb: "keep",
    pattern: new RegExp(
      `\\b${NEG} (?:drop|remove|delete|exclude|skip|omit|lose|leave out|forget|take out) (${LIST}|${PRONOUN})`,
    ),
  },
  // X is already handled in Y / Y already handles X.
  {
    verb: "handled",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN}|[a-z][\\w\\s-]{0,40}?)\\s+(?:is|are|'s|'re|gets?|got)\\s+already\\s+(?:being\\s+)?(?:handled|done|covered|implemented|supported|taken care of|dealt with|validated|checked|tested|there|present|included|defined|set|parsed|available)\\s+(?:in|by|at|inside|within|through|via)\\s+(${LIST})`,
    ),
  },
  {
    verb: "handled",
    pattern: new RegExp(
      `(${LIST})\\s+already\\s+(?:handles|does|covers|implements|supports|validates|checks|tests|takes care of|deals with|has|takes|accepts|provides|calls|uses|sets|reads|parses)\\b(.*)$`,
    ),
    toFirst: true,
  },
  // Instead of X, use Y / use Y instead of X / Y rather than X.
  {
    verb: "use",
    pattern: new RegExp(
      `\\b(?:instead of|rather than|in place of)\\s+(${LIST}|${PRONOUN})\\s*,?\\s*(?:(?:please\\s+)?(?:use|change|edit|modify|touch|call|extend|go with|put it in|do it in|do this in|in)\\s+)?(${LIST})`,
    ),
  },
  {
    verb: "use",
    pattern: new RegExp(
      `(${LIST})\\s*,?\\s+(?:instead of|rather than|in place of)\\s+(${LIST}|${PRONOUN})`,
    ),
    toFirst: true,
  },
  {
    verb: "also",
    pattern: new RegExp(`\\b(?:use|call|go with|extend)\\s+(${LIST})\\s+instead\\b`),
  },
  // Move X to Y / X should live in Y / put X in Y / X belongs in Y.
  {
    verb: "move",
    pattern: new RegExp(
      `\\b(?:move|moving|put|place|relocate|extract|split)\\s+(${LIST}|${PRONOUN})(?:\\s+(?:out\\s+)?(?:from|of)\\s+${LIST})?\\s+(?:over\\s+)?(?:to|into|in|inside|under)\\s+(${LIST})`,
    ),
  },
  {
    verb: "move",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:should|could|would|can|must|needs to|has to|ought to)?\\s*(?:belongs?|go|goes|live|lives|be|sit|move)\\s+(?:in|into|to|inside|under)\\s+(${LIST})`,
    ),
  },
  // The change belongs in Y / this goes in Y (no named subject): Y is where the change goes.
  {
    verb: "also",
    pattern: new RegExp(
      `\\b(?:belongs?|goes|go|should be|should live|is needed|is)\\s+(?:in|into|inside|under)\\s+(${LIST})`,
    ),
  },
  // Add a test in F / test it in F / cover it in F / F should have a test.
  {
    verb: "test-in",
    pattern: new RegExp(
      `\\b(?:add|write|put|create|extend|need|needs|want|include|have)\\s+(?:${ART})?(?:§\\d+§|(?:a |an |some |new |unit )?cases?)(?:\\s+for\\s+(?:${LIST}|${PRONOUN}))?\\s+(?:in|to|into|under|inside)\\s+(${LIST})`,
    ),
    toOnly: true,
    needs: "tests",
  },
  {
    verb: "test-in",
    pattern: new RegExp(
      `\\b(?:test|cover)\\s+(?:${PRONOUN}|${LIST})\\s+(?:in|with|from)\\s+(${LIST})`,
    ),
    toOnly: true,
  },
  // X and Y, not Z / not Z but X: Z is ruled out (the rest of the clause is read on its own).
  {
    verb: "drop",
    how: "elsewhere",
    pattern: new RegExp(
      `(?:^|,\\s*|\\s)not\\s+(?:in\\s+|from\\s+|to\\s+|for\\s+|on\\s+|with\\s+)?(${LIST})(?!\\s+(?:only|just)\\b)`,
    ),
  },
  // Leave X in / keep X (in the plan): X stays.
  {
    verb: "keep",
    pattern: new RegExp(
      `\\b(?:leave|keep)\\s+(${LIST}|${PRONOUN})\\s+in\\b(?!\\s+(?:place|peace))`,
    ),
  },
  // Leave X alone / out / as is; leave out X; keep X out.
  {
    verb: "drop",
    pattern: new RegExp(`\\bleave\\s+(?:out\\s+)?(${LIST}|${PRONOUN}|[^§]{1,80}?)\\s+${STAY}\\b`),
    words: true,
  },
  { verb: "drop", pattern: new RegExp(`\\bleave\\s+out\\s+(${LIST}|[^§]{1,80})$`), words: true },
  {
    verb: "drop",
    pattern: new RegExp(
      `\\bkeep\\s+(${LIST}|${PRONOUN}|[^§]{1,80}?)\\s+(?:out|as is|as-is|untouched|unchanged|separate)\\b`,
    ),
    words: true,
  },
  // Don't touch / change / add X.
  {
    verb: "drop",
    pattern: new RegExp(
      `\\b${NEG}\\s+(?:\\w+\\s+)?${EDIT}\\s+(?:anything\\s+in\\s+)?(${LIST}|${PRONOUN}|[^§]{1,80})$`,
    ),
    words: true,
  },
  {
    verb: "drop",
    pattern: new RegExp(
      `\\b(?:don't|do not|doesn't|does not|won't|will not)\\s+(?:think\\s+(?:we|you|i|it|this|that)\\s+)?(?:really\\s+)?(?:need|needs|want|require|requires)\\s+(?:to\\s+${EDIT}\\s+)?(?:any\\s+)?(${LIST}|${PRONOUN})`,
    ),
  },
  // Drop / skip / exclude / forget X (from the plan).
  {
    verb: "drop",
    how: "drop",
    pattern: new RegExp(
      `\\b(?:drop|skip|omit|exclude|ignore|forget(?:\\s+about)?|take out|cut|strike|scrap|lose)\\s+(${LIST}|${PRONOUN}|[^§]{1,80}?)(?:\\s+(?:from|out of)\\s+(?:the\\s+)?(?:plan|list|lists|change|pr))?(?:\\s+for now|\\s+entirely|\\s+altogether)?\\s*$`,
    ),
    words: true,
  },
  // Remove / delete X from the plan: ruled out. Remove X (alone): unread — deleting code there
  // and leaving it out of the plan are opposites.
  {
    verb: "drop",
    pattern: new RegExp(
      `\\b(?:remove|delete|get rid of)\\s+(${LIST}|${PRONOUN}|[^§]{1,80}?)\\s+(?:from|out of)\\s+(?:the\\s+)?(?:plan|list|lists|files to change|change set)\\b`,
    ),
    words: true,
  },
  // No tests (needed) / no need for docs / no changes to X / nothing in X / without X.
  {
    verb: "drop",
    pattern: new RegExp(
      `\\b(?:no|without|zero)\\s+(?:need\\s+(?:for|of|to\\s+${EDIT})\\s+|changes?\\s+(?:to|in)\\s+|edits?\\s+(?:to|in)\\s+|updates?\\s+(?:to|in)\\s+)?(${LIST})`,
    ),
  },
  { verb: "drop", pattern: new RegExp(`\\bnothing\\s+(?:in|to|for)\\s+(${LIST})`) },
  // X is not needed / X doesn't need changes / X can stay as is / X should not change.
  {
    verb: "drop",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:(?:is|are|'s|'re|seems?|looks?)\\s+)?(?:(?:not|n't|no longer)\\s+(?:needed|necessary|required|relevant|affected|involved|in scope|part of (?:this|the change|the plan)|the right (?:place|file|module))|(?:unrelated|irrelevant|out of scope|unaffected|unnecessary|not needed)|(?:isn't|aren't|wasn't)\\s+(?:needed|necessary|required|relevant|affected|involved|the right (?:place|file|module)))`,
    ),
  },
  {
    verb: "drop",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:does not|doesn't|do not|don't|shouldn't|should not|must not|mustn't|need not|needn't|won't)\\s+(?:need\\s+(?:to\\s+)?)?(?:be\\s+)?(?:change|changed|changes|changing|touch|touched|touching|modified|modify|updated|update|updating|edited|included|listed|in the plan)\\b`,
    ),
  },
  {
    verb: "drop",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:can|should|must|may|could|will)\\s+(?:stay|remain|be left|be kept)\\s+(?:as is|as-is|untouched|unchanged|the same|alone|out)\\b`,
    ),
  },
  {
    verb: "drop",
    pattern: new RegExp(
      `\\b(?:i\\s+)?(?:don't|do not)\\s+think\\s+(${LIST}|${PRONOUN})\\s+(?:needs?|should|has to|have to|must)\\s+(?:to\\s+)?(?:be\\s+)?(?:change|changed|touched|updated|modified|included)\\b`,
    ),
  },
  // Questions that could mean either ("do we need X?", "why is X here?"): unread.
  {
    verb: "unread",
    pattern: new RegExp(
      `\\b(?:why|do we (?:really )?need|is there a need|are there|is it|is this|are these|does this|does it|not sure|unsure|i wonder|wonder if|maybe|perhaps)\\b.*?(${LIST}|${PRONOUN})`,
    ),
    why: "ambiguous",
  },
  // Keep X / X is fine / X should stay / we need X.
  {
    verb: "keep",
    pattern: new RegExp(
      `\\bkeep(?:ing)?\\s+(${LIST}|${PRONOUN})(?!\\s+(?:out|as is|as-is|untouched|unchanged|separate|simple)\\b)`,
    ),
  },
  {
    verb: "keep",
    pattern: new RegExp(
      `(${LIST})\\s+(?:is|are|'s|'re|looks?|seems?)\\s+(?:still\\s+)?(?:fine|good|ok|okay|right|correct|needed|required|necessary|relevant|important|essential|in scope|part of (?:this|the change|the plan))\\b`,
    ),
  },
  {
    verb: "keep",
    pattern: new RegExp(
      `(${LIST})\\s+(?:should|must|has to|needs to)\\s+stay\\b(?!\\s+(?:as is|as-is|untouched|unchanged|the same|alone|out))`,
    ),
  },
  // Only X / just X / the change is only in X / limit it to X / X only / nothing but X.
  {
    verb: "only",
    pattern: new RegExp(
      `\\b(?:only|just|solely|exclusively|purely)\\s+(?:(?:in|to|touch|touches|change|changes|modify|edit|update|need|needs|needed|needs to change|the change in|the changes in)\\s+){0,3}(${LIST}|${PRONOUN}$)`,
    ),
    words: false,
  },
  {
    verb: "only",
    pattern: new RegExp(
      `\\b(?:limit|restrict|scope|narrow)\\s+(?:it|this|the change|the changes|the plan|the scope|yourself)\\s+(?:down\\s+)?to\\s+(${LIST})`,
    ),
  },
  {
    verb: "only",
    pattern: new RegExp(`\\bnothing\\s+(?:else\\s+)?(?:but|except|other than|beyond)\\s+(${LIST})`),
  },
  {
    verb: "only",
    pattern: new RegExp(
      `\\bthe\\s+(?:only|single|one)\\s+(?:file|place|module|change)s?\\s+(?:to change\\s+|that needs?\\s+(?:to\\s+)?(?:change|changes|changing)\\s+|needed\\s+)?(?:is|are|should be)\\s+(?:in\\s+)?(${LIST})`,
    ),
  },
  { verb: "only", pattern: new RegExp(`(${LIST})\\s+only\\b(?!\\s+${STATEMENT_VERB})`) },
  {
    verb: "only",
    pattern:
      /\b(?:only|just)\s+(?:in|touch|change|modify|edit)\s+(?:the\s+)?([a-z][a-z0-9 _-]{2,40}?)(?:\s+(?:middleware|module|package|folder|files?|code|helper|component|handler|plugin|command))?$/,
    words: true,
  },
  // Also X / X too / X as well / plus X / don't forget X.
  {
    verb: "also",
    pattern: new RegExp(
      `\\b(?:also|plus|additionally|in addition(?: to)?|as well as|besides)\\s+(?:\\w+\\s+){0,3}?(${LIST})`,
    ),
  },
  { verb: "also", pattern: new RegExp(`(${LIST})\\s+(?:too|as well)\\b`) },
  {
    verb: "also",
    pattern:
      /\b(?:also\s+(?:(?:change|update|touch|include|edit|extend|fix)\s+)?|(?:change|update|touch|include|edit|extend|fix)\s+)(?:the\s+)?([a-z][a-z0-9 _-]{2,40}?)\s+(?:middleware|module|package|folder|helper|component|handler|plugin|command)s?\b/,
    words: true,
  },
  // Test it / test this: tests of the change.
  {
    verb: "also",
    pattern: /\b(?:test|unit-test|unit test)\s+(?:this|it|that|them)\b/,
    kind: "tests",
  },
  // Document it: the docs of the change.
  {
    verb: "also",
    pattern:
      /\b(?:document|documenting|documented)\b(?:\s+(?:it|this|that|them|the change|the new \w+|the option|the behaviou?r))?/,
    kind: "docs",
  },
  // Add / update / include / change X; this needs X; missing X; what about X?
  {
    verb: "also",
    pattern: new RegExp(
      `\\b(?:add|adding|include|including|update|updating|change|changing|touch|touching|modify|modifying|edit|editing|extend|extending|cover|covering|check|consider|look at|handle|adjust|fix|mention|write|writing|bump|needs?|requires?|wants?|missing|lacks?|lacking|what about|how about|plan for)\\s+(?:(?:also|too|the|a|an|some|any|more|new|its|their|this|that|these|those|proper|corresponding|matching|relevant)\\s+)*(${LIST})`,
    ),
  },
];

/** Reads one clause into `out`. */
function readClause(clause: string, question: boolean, passage: boolean, out: Reading): void {
  const said = clause.replace(/\s+/g, " ").trim();
  const { masked, targets, absorbed } = maskTargets(said.replace(/[\s.!?;:,]+$/, ""));
  const claimed = new Set<number>(absorbed);
  let rest = masked;
  let acted = false;
  let asking = false;
  const take = (group: string | undefined, words: boolean): Target[] => {
    if (group === undefined) return [];
    const slots = slotsIn(group).filter((i) => !claimed.has(i));
    if (slots.length > 0) return slots.map((i) => targets[i]!);
    const bare = group.trim();
    if (new RegExp(`^${PRONOUN}$`).test(bare))
      return passage ? [{ type: "passage", text: bare }] : [];
    return words && /[a-z]{3}/.test(bare) && !bare.includes("§")
      ? [{ type: "words", text: bare }]
      : [];
  };
  const claim = (text: string) => {
    for (const i of slotsIn(text)) claimed.add(i);
    rest = rest.replace(text, " ");
    acted = true;
  };
  for (const c of CONSTRUCTIONS) {
    const m = c.pattern.exec(rest);
    if (m === null) continue;
    if (c.verb === "statement" || c.verb === "unread") {
      if (c.verb === "unread" && !question && !/\b(?:not sure|unsure|maybe|perhaps)\b/.test(m[0]))
        continue;
      out.unread.push({ said, why: WHY[c.why ?? "none"] });
      claim(m[0]);
      continue;
    }
    if (c.needs !== undefined) {
      const first = targets[slotsIn(m[0])[0] ?? -1];
      if (first?.type !== "kind" || first.kind !== c.needs) continue;
    }
    let subject = take(c.toFirst === true ? m[2] : m[1], c.words === true);
    let to = take(c.toFirst === true ? m[1] : m[2], false);
    if (c.toOnly === true && to.length === 0) [subject, to] = [[], subject];
    if (subject.length === 0 && c.kind !== undefined)
      subject = [{ type: "kind", kind: c.kind, text: m[0].trim() }];
    if (subject.length === 0 && to.length === 0) continue;
    // A question proposes: only a question that asks to add or keep something is read.
    if (question && c.verb !== "also" && c.verb !== "keep") {
      out.unread.push({ said, why: WHY.question });
      claim(m[0]);
      break;
    }
    const how: DropHow =
      c.how ??
      (/\b(?:alone|as is|as-is|untouched|unchanged|the same|touch|change|changed|modify|modified|edit|alter)\b/.test(
        m[0],
      )
        ? "alone"
        : "out");
    out.instructions.push({
      verb: c.verb,
      targets: subject,
      to,
      said,
      ...(c.verb === "drop" && { how }),
    });
    if (c.verb !== "drop") asking = true;
    claim(m[0]);
  }
  // "remove X" alone: deleting code there and leaving X out are opposites — the file stays.
  const removal = /\b(?:remove|delete|get rid of)\s+(.+)$/.exec(rest);
  if (removal !== null) {
    const named = slotsIn(removal[1]!).filter((i) => !claimed.has(i));
    const kinds = named.filter((i) => targets[i]!.type === "kind");
    const others = named.filter((i) => targets[i]!.type !== "kind");
    // A kind of file removed is a kind left out ("remove the docs changes").
    if (kinds.length > 0)
      out.instructions.push({
        verb: "drop",
        how: "drop",
        targets: kinds.map((i) => targets[i]!),
        to: [],
        said,
      });
    if (others.length > 0) {
      out.instructions.push({
        verb: "keep",
        targets: others.map((i) => targets[i]!),
        to: [],
        said,
      });
      out.unread.push({ said, why: WHY.remove });
    }
    if (named.length > 0) claim(removal[0]);
  }
  // Paths and names no construction claimed, in a clause that neither asks nor negates: named
  // to be added, as a path in feedback always was. Kinds alone ("tests.") are too vague.
  const left = targets
    .map((t, i) => ({ t, i }))
    .filter(({ t, i }) => !claimed.has(i) && (t.type === "path" || t.type === "symbol"));
  if (left.length > 0) {
    if (!question && !/\b(?:not|no|never|without|nor)\b|n't\b/.test(rest)) {
      out.instructions.push({ verb: "also", targets: left.map((x) => x.t), to: [], said });
      asking = true;
    } else out.unread.push({ said, why: question ? WHY.question : WHY.ambiguous });
    acted = true;
  }
  // Words that ask for a schema change are read by the migration rule (feedback/steering.ts).
  const negated = /\b(?:not|no|never|without|nor)\b|n't\b/.test(masked);
  if (!acted && !negated && SCHEMA.test(masked)) {
    asking = true;
    acted = true;
  }
  if (asking) out.asking.push(said);
  if (!acted && !COURTESY.test(said))
    out.unread.push({ said, why: question ? WHY.question : WHY.none });
}
