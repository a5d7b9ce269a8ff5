import type { DropHow, Verb, WHY } from "./reader.ts";
import type { FileKind } from "./targets.ts";

/**
 * The constructions the feedback reader (reader.ts) knows, as patterns on a clause whose
 * paths, names and kinds of files are masked (`§0§`, targets.ts): "X only calls Y", "not
 * only X", "don't forget X", "X is already handled in Y", "instead of X use Y", "move X to
 * Y", "add a test in F", "X, not Y", "leave X alone/out", "don't touch X", "no tests",
 * "skip X", "keep X", "only X", "also X", "document it", "add X". Data, no logic.
 */

// Pieces of the patterns below, on masked lower-case text.
const ART =
  "(?:(?:the|its|their|his|her|a|an|any|some|all|all the|these|those|my|our|your|new|existing|current|same|other)\\s+)*";
const SLOT = "§\\d+§";
const JOIN =
  "(?:\\s*,\\s*(?:and\\s+|or\\s+|&\\s+|plus\\s+)?|\\s+(?:and|or|&|plus|as well as)\\s+|\\s*/\\s*)";
export const LIST = `${ART}${SLOT}(?:${JOIN}${ART}${SLOT})*`;
export const PRONOUN =
  "(?:this|that|it|these|those|them)(?:\\s+(?:file|files|one|ones|module|part|change|step|line|bit|function|method|class))?";
const NEG =
  "(?:don't|dont|do not|doesn't|does not|didn't|did not|never|shouldn't|should not|mustn't|must not|needn't|need not|no need to|not need to|won't|will not|cannot|can't|can not|not)";
const EDIT =
  "(?:touch|change|modify|edit|update|alter|include|add|list|plan|mention|bother with|refactor|rewrite|mess with|move)";
const STAY =
  "(?:alone|out|as is|as-is|untouched|unchanged|the same|be|out of (?:it|this|the plan|the change|scope))";
const STATEMENT_VERB =
  "(?:calls?|uses?|wraps?|returns?|reads?|forwards?|delegates?|passes?|sets?|checks?|does|imports?|re-?exports?|proxies|handles?|contains?|has|holds?|defines?|exports?|affects?|applies|matters?|works?|runs?|happens?|touches?|takes?|accepts?|logs?|raises?|throws?|validates?|parses?|builds?|creates?|renders?|is|are|was)";

export interface Construction {
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
export const CONSTRUCTIONS: Construction[] = [
  // "X only calls Y", "X just wraps Y": a statement about X.
  {
    verb: "statement",
    pattern: new RegExp(
      `(${LIST}|${PRONOUN})\\s+(?:only|just|merely|simply)\\s+${STATEMENT_VERB}\\b(.*)$`,
    ),
    why: "statement",
  },
  // "in cases where only the docs change", "if just X is set": a condition, not an instruction.
  {
    verb: "statement",
    pattern: new RegExp(
      `\\b(?:where|when|whenever|if|unless|once|in case)\\s+(?:\\w+\\s+){0,4}?(?:only|just)\\s+(${LIST}|\\w+)(.*)$`,
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
  // "There is no test file in this PR", "it has no docs": a fact, not "leave them out".
  {
    verb: "statement",
    pattern: new RegExp(
      `\\b(?:there\\s+(?:is|are|was|were)|there's|(?:has|have|had|with)|(?:is|are)\\s+(?:still\\s+)?)\\s*no\\s+(${LIST})`,
    ),
    why: "statement",
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
      /(?:^|\b(?:please|pls|also|and|then|should|must|need to|needs to|have to|has to|to|can you|could you)\s+)(?:also\s+)?document\b(?:\s+(?:it|this|that|them|the change|the new \w+|the option|the behaviou?r))?|\b(?:should|must|needs? to|has to|have to)\s+(?:also\s+)?be\s+documented\b/,
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
