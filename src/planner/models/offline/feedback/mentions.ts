import type { Knowledge } from "../repository/knowledge.ts";
import { pathMentions } from "../task/terms.ts";
import type { Transcript } from "../transcript.ts";
import { resolveNamed } from "./names.ts";

/**
 * What the task and the feedback point at by name: the repository paths a text names, the
 * files a quoted passage comes from, the area an answer picks. steering.ts weighs them.
 */

/** Words that rule out what follows (a draft's and the task's own wording). */
export const NEGATION =
  /\b(not|don't|dont|do not|no need|never|leave|without|skip|exclude|remove|drop|instead of|rather than|avoid|untouched|keep out)\b/i;

/**
 * A path mention and whether the words just before it, in its own clause, rule it out. Code
 * spans are names, not words: "add a `skip` option in src/a.ts" does not skip src/a.ts.
 */
export function namedPaths(
  text: string,
  negation: RegExp = NEGATION,
): { mention: string; negated: boolean }[] {
  const out: { mention: string; negated: boolean }[] = [];
  for (const sentence of text.split(/[.!?;]\s+|\n/)) {
    for (const mention of pathMentions(sentence)) {
      const at = sentence.indexOf(mention);
      const clause =
        sentence
          .slice(0, at)
          .split(/[,:]\s/)
          .pop() ?? "";
      const before = clause.slice(-40).replace(/`[^`]*`/g, " ");
      out.push({ mention: mention.replace(/^repo\//, ""), negated: negation.test(before) });
    }
  }
  return out;
}

/**
 * The repository files a quoted passage of the plan is about: the paths it names, or — for a
 * passage cut from a file's line without its path — the file that line of the commented plan
 * is about (the first path on the line the passage comes from).
 */
export function passageFiles(quote: string, t: Transcript, k: Knowledge): string[] {
  const direct = pathMentions(quote)
    .map((m) => resolveMention(m.replace(/^repo\//, ""), k.known))
    .filter((p): p is string => p !== null);
  if (direct.length > 0) return direct;
  const needle = quote.trim().slice(0, 200);
  if (needle.length < 4) return [];
  const plans = t.calls.filter((c) => c.kind === "write" && typeof c.input.content === "string");
  const plan = plans.length > 0 ? String(plans[plans.length - 1]!.input.content) : "";
  const line = plan.split("\n").find((l) => l.includes(needle));
  if (line === undefined) return [];
  const first = pathMentions(line)
    .map((m) => resolveMention(m, k.known))
    .find((p): p is string => p !== null);
  return first ? [first] : [];
}

/**
 * A mentioned path resolved against the known paths: exact, else the one file it ends (a bare
 * `index.test.ts` among many resolves only beside a sibling path the same text names).
 *
 * @example
 * resolveMention("tax.ts", new Set(["src/billing/tax.ts"])) // "src/billing/tax.ts"
 * resolveMention("index.ts", new Set(["a/index.ts", "b/index.ts"])) // null
 */
export function resolveMention(
  mention: string,
  known: ReadonlySet<string>,
  siblings: readonly string[] = [],
): string | null {
  const found = resolveNamed(mention, known, siblings);
  return found.kind === "one" ? found.path : null;
}

/** The area a question answer picked (an option label like "src/" or "src"), if any. */
export function areaOf(answer: string, k: Knowledge): string | null {
  const name = answer.trim().replace(/\/$/, "");
  return k.areas.has(name) ? name : null;
}
