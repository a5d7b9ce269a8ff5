import { dirOf, isGeneratedPath, namesModule, pathKind } from "../repository/paths.ts";
import { MAX_ANALYSED_CHARS, pathMentions, STOP_WORDS } from "../task/terms.ts";

/**
 * Feedback as instructions. Pure. A reviewer who writes "drop the cache and language files;
 * the change is only in src/middleware/logger/index.ts and its index.test.ts" is telling the
 * planner what the lists must be, not giving it more words to search: "drop X", "not X",
 * "leave X alone" rule X out; "only Y" makes Y the whole list; "also W" (or naming W) adds W.
 * The files an instruction means are the paths it names, and — for drop, only and also — the
 * modules its words name (`cache` is `src/middleware/cache/index.ts`). Prose words never pull
 * a file in on their own; names written as code (`formatMoney`) are searched, since they say
 * where something is.
 */

/** What one input (feedback, a comment, a message) instructs. */
export interface Instructions {
  /** Files to add (named, or "also" with a module's name). */
  include: string[];
  /** Files to rule out (named after "drop", "not", "leave … alone", or a module's name there). */
  exclude: string[];
  /** With "only": the files the lists must be, in the order named; null without "only". */
  only: string[] | null;
  /** Paths named that the repository does not have (with a folder: perhaps new files). */
  unknown: string[];
  /** Bare file names several files have (`index.ts`), none of which was taken. */
  ambiguous: string[];
  /** The input's names written as code, for the search. */
  code: string;
  /** Words of clauses that ask for something (not ruling it out), for migrations and notes. */
  asking: string;
}

/** Words that rule out what follows. */
export const NEGATION =
  /\b(not|don't|dont|do not|no need|never|leave|without|skip|exclude|remove|drop|instead of|rather than|avoid|untouched|keep out)\b/i;
/** Words that make what follows the whole list. */
const ONLY = /\b(only|solely|exclusively|just in|just the)\b/i;
/** Words that add what follows. */
const ALSO = /\b(also|as well|too|plus|include|add|in addition)\b/i;
/** Words of an instruction that name no module. */
const INSTRUCTION_WORDS = new Set(
  `drop dropping remove leave alone touch keep change changes changed only just also add include
exclude skip file files module modules folder folders code test tests its their the this that
these those and or but not don't dont never need needs should must plan part parts one ones
here there well too plus lists list instead rather than without avoid untouched`.split(/\s+/),
);

/**
 * Reads the instructions of one input against the repository's known paths.
 *
 * @example
 * readInstructions("Drop the cache files; the change is only in src/a/index.ts", known)
 * // { exclude: ["src/cache/index.ts"], only: ["src/a/index.ts"], … }
 */
export function readInstructions(text: string, known: ReadonlySet<string>): Instructions {
  const out: Instructions = {
    include: [],
    exclude: [],
    only: null,
    unknown: [],
    ambiguous: [],
    code: "",
    asking: "",
  };
  const analysed = text.slice(0, MAX_ANALYSED_CHARS);
  const code: string[] = [];
  const asking: string[] = [];
  for (const clause of analysed.split(/[.!?;]\s+|\n/)) {
    if (clause.trim() === "") continue;
    const mentions = pathMentions(clause);
    const here = mentions.filter((m) => m.includes("/"));
    // One entry per mention (undefined where it names no single known file).
    const paths: (string | undefined)[] = [];
    for (const mention of mentions) {
      const found = resolveNamed(mention.replace(/^repo\//, ""), known, here);
      paths.push(found.kind === "one" ? found.path : undefined);
      if (found.kind === "many") out.ambiguous.push(mention);
      else if (found.kind === "none" && mention.includes("/")) out.unknown.push(mention);
    }
    const named = paths.filter((p): p is string => p !== undefined);
    const negated = NEGATION.test(clause) && !/\bforget\b/i.test(clause);
    // Names written as code are searched (not those ruled out); the rest of the prose is not.
    if (!negated)
      for (const m of clause.matchAll(/`([^`\n]{1,200})`|\b[A-Za-z_]*[a-z][A-Z_][A-Za-z0-9_]*\b/g))
        code.push(m[1] ?? m[0]);
    const only = !negated && ONLY.test(clause) && !/\bnot only\b/i.test(clause);
    const also = !negated && !only && ALSO.test(clause);
    const modules = negated || only || also ? modulesNamed(clause, mentions, known) : [];
    if (negated) {
      // "leave X alone but change Y": what follows "but" is asked for, not ruled out.
      const but = /\b(but|instead)\b/i.exec(clause)?.index ?? clause.length;
      mentions.forEach((mention, i) => {
        const path = paths[i];
        if (path === undefined) return;
        if (clause.indexOf(mention) < but) out.exclude.push(path);
        else out.include.push(path);
      });
      for (const p of modulesNamed(clause.slice(0, but), mentions, known)) out.exclude.push(p);
      if (but < clause.length) asking.push(clause.slice(but));
    } else if (only) {
      out.only = [...(out.only ?? []), ...named, ...modules];
      asking.push(clause);
    } else {
      out.include.push(...named, ...modules);
      asking.push(clause);
    }
  }
  out.include = unique(out.include).filter((p) => !out.exclude.includes(p));
  out.exclude = unique(out.exclude);
  if (out.only !== null) out.only = unique(out.only).filter((p) => !out.exclude.includes(p));
  out.unknown = unique(out.unknown);
  out.ambiguous = unique(out.ambiguous);
  out.code = code.join("\n");
  out.asking = asking.join("\n");
  return out;
}

/**
 * What a named path means: the known path itself; else the one known file of that name beside
 * another path the same clause names (`…/logger/index.ts and its index.test.ts`); else the
 * only known file ending so; several candidates are ambiguous, none is unknown.
 */
export function resolveNamed(
  mention: string,
  known: ReadonlySet<string>,
  siblings: readonly string[] = [],
): { kind: "one"; path: string } | { kind: "many" } | { kind: "none" } {
  if (known.has(mention)) return { kind: "one", path: mention };
  const matches = [...known].filter((p) => p.endsWith(`/${mention}`) && !isGeneratedPath(p)).sort();
  if (matches.length === 0) return { kind: "none" };
  if (matches.length === 1) return { kind: "one", path: matches[0]! };
  for (const sibling of siblings) {
    const beside = matches.find((p) => dirOf(p) === dirOf(sibling.replace(/^repo\//, "")));
    if (beside !== undefined) return { kind: "one", path: beside };
  }
  return { kind: "many" };
}

/**
 * Known files whose module the clause's words name: `cache` → `src/middleware/cache/index.ts`,
 * `trailing-slash` → `src/middleware/trailing-slash/index.ts`, `billing` → the files of a
 * `billing/` folder. Words that belong to the instruction ("drop", "files", "only") name none.
 */
function modulesNamed(
  clause: string,
  mentions: readonly string[],
  known: ReadonlySet<string>,
): string[] {
  let rest = clause;
  for (const m of mentions) rest = rest.split(m).join(" ");
  const words = (rest.match(/[A-Za-z][A-Za-z0-9_-]*/g) ?? [])
    .map((w) => w.toLowerCase().replace(/^-+|-+$/g, ""))
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w) && !INSTRUCTION_WORDS.has(w));
  if (words.length === 0) return [];
  const out: string[] = [];
  for (const path of [...known].sort()) {
    const kind = pathKind(path);
    if (kind !== "source" && kind !== "test") continue;
    if (words.some((w) => namesModule(path, w))) out.push(path);
  }
  return out;
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}
