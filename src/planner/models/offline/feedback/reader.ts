import { MAX_ANALYSED_CHARS } from "../task/terms.ts";
import { CONSTRUCTIONS, PRONOUN } from "./constructions.ts";
import { maskTargets, slotsIn, type Target } from "./targets.ts";

/**
 * The feedback reader: what a reviewer's words ask of the next revision. Pure, and blind to
 * the repository (instructions.ts ties its targets to files). It reads the constructions
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
  /** Named in passing (no construction claimed it): a path that does not exist is no new file. */
  passing?: boolean;
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
  retracted: "you took it back",
  passing:
    "it names code in passing but asks no change of it — say “change `x`” or “also `x`” to add its file",
  narrative: "it says what was done, not what to do",
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
    // "Nvm", "never mind", "ignore that": what was asked before is taken back.
    if (RETRACTION.test(sentence)) {
      for (const i of out.instructions.splice(0))
        out.unread.push({ said: i.said, why: WHY.retracted });
      out.asking.splice(0);
      continue;
    }
    const question = /\?\s*$/.test(sentence);
    const asks = question && REQUEST.test(sentence.replace(/\s+/g, " ").trim());
    for (const clause of clauses(sentence)) readClause(clause, question, asks, passage, out);
  }
  return out;
}

/** A clause that tells what someone did (past tense): a report, not an instruction. */
const NARRATIVE =
  /\b(?:you|we|i|they|he|she)\s+(?:\w+\s+)?(?:updated|changed|did|added|removed|wrote|made|fixed|modified|touched|tested|moved|used|implemented|renamed|dropped|left)\b/;

/** Words that doubt what follows them. */
const DOUBT =
  /\b(?:(?:don't|do not|doesn't|does not|didn't|did not)\s+(?:really\s+)?(?:think|believe|feel)|not sure|not convinced|unsure|doubt)\b/;

/** A sentence that takes back what the reviewer asked before it. */
const RETRACTION =
  /^(?:nvm|never\s?mind|nevermind|ignore (?:this|that|me|my (?:last |previous )?comment)|scratch that|disregard (?:this|that))\b/i;

/**
 * A question that asks for something ("can you add a test?", "should we also update the
 * docs?", "what about the changelog?"); any other question proposes or wonders, and is not
 * acted on ("is this documented anywhere?", "do you have opinions about the changelog?").
 */
const REQUEST =
  /^(?:(?:nit|nitpick|optional nit|minor)\s*:\s*)?(?:(?:can|could|would|will)\s+(?:you|we)\s+(?:please\s+)?(?:also\s+)?(?:add|update|include|document|write|extend|cover|mention|test|keep|drop|remove|leave|skip|move|put|use|change)\b|(?:should|shall|shouldn't)\s+we\s+(?:not\s+)?(?:also\s+)?(?:add|update|include|document|write|extend|cover|mention|test|keep)\b|(?:what|how)\s+about\b|(?:please\s+)?(?:add|update|include|document|write|extend|keep)\b)/i;

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

/** Reads one clause into `out`. */
function readClause(
  clause: string,
  question: boolean,
  asks: boolean,
  passage: boolean,
  out: Reading,
): void {
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
    // "You updated the handler, not tests": what was done, not what to leave out.
    if (c.verb === "drop" && NARRATIVE.test(rest)) {
      out.unread.push({ said, why: WHY.narrative });
      claim(m[0]);
      continue;
    }
    // "I don't think this test is necessary": a doubt over the words that would keep it.
    if (c.verb === "keep" && DOUBT.test(rest.slice(0, m.index))) {
      out.unread.push({ said, why: WHY.ambiguous });
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
    if (question && (!asks || (c.verb !== "also" && c.verb !== "keep"))) {
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
      out.instructions.push({
        verb: "also",
        targets: left.map((x) => x.t),
        to: [],
        said,
        passing: true,
      });
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
