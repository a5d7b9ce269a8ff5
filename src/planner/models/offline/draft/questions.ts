import type { Steering } from "../feedback/steering.ts";
import { resolvePath } from "../rank/pointers.ts";
import type { RankedFile } from "../rank/ranking.ts";
import type { Chosen } from "../rank/selection.ts";
import { testsOf } from "../rank/test-choice.ts";
import type { Existing } from "../repository/existing.ts";
import type { Knowledge } from "../repository/knowledge.ts";
import { pathKind } from "../repository/paths.ts";
import type { TaskIntent } from "../task/intent.ts";
import { words } from "./file-notes.ts";

/**
 * The plan's open questions, each raised by this task's evidence: a name nothing in the
 * repository has, an option that already exists, two files that rank alike, a file name
 * several files share, a message or frame the repository does not hold, a file to change
 * with no test. Pure. A question the evidence does not raise is not asked.
 */

export interface QuestionFacts {
  k: Knowledge;
  s: Steering;
  intent: TaskIntent;
  ranking: readonly RankedFile[];
  chosen: Chosen;
  changes: readonly string[];
  tests: readonly string[];
  existing: readonly Existing[];
  /** Words of the task no file mentions or is named after. */
  missing: readonly string[];
}

/** The second file ranks "alike" when within this share of the first. */
const ALIKE_SHARE = 0.9;

/**
 * The open questions.
 *
 * @example
 * openQuestions(facts)
 * // ["`maxAge` already exists (`maxAge?: number` in `CORSOptions`, line 19 of `src/middleware/cors/index.ts`): …"]
 */
export function openQuestions(q: QuestionFacts): string[] {
  const out: string[] = [];
  const { k, s } = q;
  if (q.missing.length > 0)
    out.push(
      `Nothing in the repository mentions ${words(q.missing.map((x) => `"${x}"`))}: is that new code (the plan assumes so), or does it go by another name here?`,
    );
  for (const e of q.existing) {
    const first = e.places[0]!;
    const where = `${first.text ? `\`${first.text}\`` : `line ${first.line}`}${first.within ? ` in \`${first.within}\`` : ""}, line ${first.line} of \`${first.path}\``;
    if (e.asOption && q.intent.kind === "add" && q.changes.includes(first.path))
      out.push(
        `\`${e.name}\` already exists (${where}): is the task about ${q.intent.treatment === "validate" ? "validating" : "changing"} it — and what should happen to a value that fails?`,
      );
    else if (e.asOption && q.intent.kind === "add")
      out.push(
        `\`${e.name}\` exists elsewhere (${where}${e.more > 0 ? ` and ${e.more} more` : ""}) but not in \`${q.changes[0] ?? "the file to change"}\`: should the new one take the same shape?`,
      );
  }
  const [a, b] = q.ranking.filter((f) => !f.isTest);
  if (
    a !== undefined &&
    b !== undefined &&
    q.chosen.note === null &&
    s.only === null &&
    // Two files the user named both belong to the plan: no question which one.
    !(a.named && b.named) &&
    // A file the reviewer asked for is no rival of the task's own.
    !s.include.has(a.path) &&
    !s.include.has(b.path) &&
    b.score >= ALIKE_SHARE * a.score &&
    !a.imports.includes(b.path) &&
    !a.importedBy.includes(b.path)
  )
    out.push(
      `\`${a.path}\` and \`${b.path}\` rank almost alike and neither imports the other: which one does the task mean (or both)?`,
    );
  const known = [...k.known].sort();
  for (const p of s.evidence.paths) {
    if (p.text.includes("/")) continue;
    const match = resolvePath(p.text, known);
    if (match !== null && match.paths.length > 1)
      out.push(
        `The task mentions \`${p.text}\`; ${match.paths.length} files have that name (${match.paths
          .slice(0, 3)
          .map((x) => `\`${x}\``)
          .join(
            ", ",
          )}${match.paths.length > 3 ? ", …" : ""}), so none was taken as the one meant: which is it?`,
      );
  }
  for (const mention of s.ambiguous)
    out.push(
      `Your feedback names \`${mention}\`, which several files are called: which one did you mean?`,
    );
  s.evidence.messages.forEach((message, i) => {
    if ((k.messages.get(i) ?? []).length === 0 && k.messages.has(i))
      out.push(
        `The message "${message}" is in no file of the repository: it may come from a dependency, or be put together at run time.`,
      );
  });
  const outside = s.evidence.paths.filter(
    (p) => p.via === "frame" && p.text.includes("/") && resolvePath(p.text, known) === null,
  );
  if (
    outside.length > 0 &&
    s.evidence.paths.some((p) => p.via === "frame" && resolvePath(p.text, known) !== null)
  )
    out.push(
      `The traceback also runs through ${outside.length} file${outside.length === 1 ? "" : "s"} outside this repository (\`${outside[0]!.text}\`${outside.length > 1 ? ", …" : ""}): the plan starts from the frames inside it.`,
    );
  const first = q.changes[0];
  if (
    first !== undefined &&
    pathKind(first) === "source" &&
    !s.kinds.drop.has("tests") &&
    testsOf(q.chosen, first).length === 0 &&
    s.only === null
  )
    out.push(`No test is paired with \`${first}\`: where should the change be tested?`);
  if (s.afk)
    out.push(
      "The clarifying question went unanswered (the user may be away); the plan uses its best judgment. Confirm the area before carrying it out.",
    );
  if (k.root !== null && k.root.dirs.length === 0 && k.root.files.length === 0)
    out.push(
      "No repository snapshot was attached to this session, so no code was read. Start a session from the repository to get a grounded plan.",
    );
  if (q.chosen.note !== null && s.scope === null)
    out.push(
      "Which part of the code base does the task concern? Naming a file or folder in feedback focuses the next revision.",
    );
  if (s.area !== null && !q.ranking.some((f) => f.inArea))
    out.push(
      `The area hint \`${s.area}\` names no folder or file here; the plan ranks without it.`,
    );
  return out;
}
