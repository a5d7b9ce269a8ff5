import { resolveMention } from "../feedback/mentions.ts";
import { pathMentions } from "../task/terms.ts";

/**
 * The draft a seeded session started from (`seed_plan`, the plan file's revision 1), as the
 * offline planner uses it. Pure. The draft is hostile text: it is only split into lines and
 * matched against fixed patterns here (never turned into a pattern), and its lines go into the
 * plan verbatim — the review page escapes what it renders.
 */

/** One heading of the draft and the steps under it, as written. */
export interface DraftSection {
  /** The heading's text without its `#` marks; null for steps before the first heading. */
  heading: string | null;
  /** The list lines under it, verbatim (marker and indentation kept), in order. */
  steps: string[];
}

export interface DraftOutline {
  /** The draft's own title: its first heading, else its first line (one line, trimmed). */
  title: string;
  /** Sections with at least one step, in the draft's order. */
  sections: DraftSection[];
  /** The draft's prose lines, kept when it has no list at all (so nothing it says is lost). */
  prose: string[];
  /** What the search reads of the draft: its headings and steps (or its prose). */
  digest: string;
  /** Steps beyond {@link MAX_DRAFT_STEPS}, left in revision 1 (counted, never lost silently). */
  dropped: number;
}

/** Characters of the draft the outline reads (the API allows 200,000). */
const MAX_DRAFT_CHARS = 200_000;
/** Longest line kept; a longer one is cut (a plan line, not a file). */
const MAX_LINE_CHARS = 2_000;
/** Steps kept from a draft; the rest are counted, not lost silently. */
export const MAX_DRAFT_STEPS = 200;
/** Paths of the draft asked about when the repository does not have them. */
const MAX_MISSING_PATHS = 5;

// Anchored, no nested or lazy quantifiers: each runs in linear time on any line.
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The draft's headings and steps.
 *
 * @example
 * draftOutline("# Add OAuth\n\n1. Add the route.\n2. Link users.\n").sections
 * // [{ heading: "Add OAuth", steps: ["1. Add the route.", "2. Link users."] }]
 */
export function draftOutline(seed: string): DraftOutline {
  const lines = seed.slice(0, MAX_DRAFT_CHARS).replace(/\r\n?/g, "\n").split("\n");
  const sections: DraftSection[] = [];
  const prose: string[] = [];
  let current: DraftSection = { heading: null, steps: [] };
  let title: string | null = null;
  let firstLine: string | null = null;
  let fence: string | null = null;
  let steps = 0;
  for (const raw of lines) {
    const line = raw.length > MAX_LINE_CHARS ? `${raw.slice(0, MAX_LINE_CHARS - 1)}…` : raw;
    const fenceMark = FENCE.exec(line)?.[1];
    if (fence !== null) {
      if (fenceMark !== undefined && fenceMark[0] === fence[0] && fenceMark.length >= fence.length)
        fence = null;
      continue;
    }
    if (fenceMark !== undefined) {
      fence = fenceMark;
      continue;
    }
    if (line.trim() === "") continue;
    if (firstLine === null) firstLine = line.trim();
    if (HEADING.test(line)) {
      const text = headingText(line);
      if (title === null && text !== "") title = text;
      if (current.steps.length > 0) sections.push(current);
      current = { heading: text || null, steps: [] };
      continue;
    }
    if (LIST_ITEM.test(line)) {
      if (steps < MAX_DRAFT_STEPS) current.steps.push(line.trimEnd());
      steps++;
      continue;
    }
    if (prose.length < MAX_DRAFT_STEPS) prose.push(line.trim());
  }
  if (current.steps.length > 0) sections.push(current);
  // The title says what the draft is about; the other headings are mostly its structure
  // ("Approach", "Rollout"), so the search reads the steps under them instead.
  const kept = sections.flatMap((s) => s.steps);
  const digest = [title ?? "", ...(sections.length > 0 ? kept : prose)].join("\n");
  return {
    title: oneLine(title ?? firstLine ?? ""),
    sections,
    prose: sections.length > 0 ? [] : prose,
    digest,
    dropped: Math.max(0, steps - MAX_DRAFT_STEPS),
  };
}

/**
 * The plan's section of the draft's steps: its headings (one level below the plan's) and its
 * list lines as written, in order; a draft without a list keeps its prose as a quote.
 *
 * @example
 * draftSection(draftOutline("# Add OAuth\n\n1. Add the route.\n"))
 * // "## Steps from your draft\n\nKept as you wrote them … \n\n### Add OAuth\n\n1. Add the route."
 */
export function draftSection(outline: DraftOutline): string {
  const { dropped } = outline;
  const out = [
    "## Steps from your draft",
    outline.sections.length > 0
      ? "Kept as you wrote them, in order (revision 1 of this plan file). The files above are the repository's evidence for them; the open questions say where the repository disagrees."
      : "Your draft has no list of steps; its text is kept here as you wrote it (revision 1 of this plan file).",
  ];
  for (const section of outline.sections) {
    if (section.heading !== null) out.push(`### ${section.heading}`);
    out.push(section.steps.join("\n"));
  }
  if (outline.sections.length === 0 && outline.prose.length > 0)
    out.push(outline.prose.map((l) => `> ${l}`).join("\n>\n"));
  if (dropped > 0)
    out.push(
      `(${dropped} more step${dropped === 1 ? "" : "s"} of your draft are in revision 1 of this plan file.)`,
    );
  return out.join("\n\n");
}

/**
 * Open questions about the paths the draft names that the repository snapshot does not have
 * (a new file, or a wrong path), at most a few.
 *
 * @example
 * missingPathQuestions("Edit src/auth/oauth.ts", new Set(["src/app.ts"]))
 * // ["Your draft names `src/auth/oauth.ts`, which is not in the repository: is it a new file, or does the change belong elsewhere?"]
 */
export function missingPathQuestions(digest: string, known: ReadonlySet<string>): string[] {
  const missing = pathMentions(digest)
    .map((m) => m.replace(/^repo\//, ""))
    .filter((m) => m.includes("/") && resolveMention(m, known) === null);
  return missing
    .slice(0, MAX_MISSING_PATHS)
    .map(
      (p) =>
        `Your draft names \`${p}\`, which is not in the repository: is it a new file, or does the change belong elsewhere?`,
    );
}

/** A heading line's text: without the leading `#`s and an optional closing run of `#`s. */
function headingText(line: string): string {
  let start = line.indexOf("#");
  while (line[start] === "#") start++;
  const text = line.slice(start).trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === "#") end--;
  // A closing run counts only after a space ("C#" stays C#).
  return end === 0 || text[end - 1] === " " || text[end - 1] === "\t"
    ? text.slice(0, end).trim()
    : text;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}
