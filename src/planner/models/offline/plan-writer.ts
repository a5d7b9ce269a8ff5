import { formatLines, type LineRef } from "./line-refs.ts";
import type { ProjectFacts } from "./manifests.ts";

/**
 * The offline planner's plan as markdown. Pure: a draft in, the plan file's text out. The plan
 * says plainly that it was drafted without a model, and why each file is in it.
 */

export interface FileChange {
  path: string;
  refs: LineRef[];
  /** Evidence, e.g. "matches `invoice` ×4; path mentions `billing`". */
  why: string;
  /** Not in the repository yet. */
  isNew?: boolean;
}

export interface PlanDraft {
  task: string;
  /** 1 for the first plan, +1 per revision. */
  revision: number;
  project: ProjectFacts;
  readme: string | null;
  /** Files in the repository, as far as the survey could count them. */
  fileCount: number;
  terms: { term: string; files: number; common: boolean }[];
  changes: FileChange[];
  tests: FileChange[];
  /** Why the files were chosen when no term matched (the user's chosen area, entry points). */
  selectionNote: string | null;
  openQuestions: string[];
  /** What this revision changed in answer to the user, newest input last. */
  revisionNotes: string[];
  commands: { command: string; source: string }[];
}

/** Sorts files into the order they are usually changed in: data first, tests and docs last. */
const LAYERS: [RegExp, number][] = [
  [/(migration|schema|\.sql$|(^|\/)(db|database|models?|entities|prisma)\/)/i, 0],
  [/(config|settings|\.env|constants?)/i, 1],
  [/(^|\/)(routes?|api|handlers?|controllers?|endpoints?|server|cli|cmd|commands?)(\/|\.|$)/i, 3],
  [/(^|\/)(ui|views?|components?|pages?|templates?|web|frontend|public)\//i, 4],
  [/\.(md|rst|txt)$|(^|\/)docs?\//i, 6],
];

function layerOf(path: string): number {
  for (const [re, layer] of LAYERS) if (re.test(path)) return layer;
  return 2;
}

/**
 * The plan's markdown, from a draft (the Write call then puts it in the plan file).
 *
 * @example
 * const markdown = planMarkdown(draft); // "# Plan: …\n\n> Drafted by the **offline planner** …"
 */
export function planMarkdown(d: PlanDraft): string {
  const out: string[] = [];
  out.push(`# Plan: ${title(d.task)}`);
  out.push(
    `> Drafted by the **offline planner** (deterministic, no language model)${d.revision > 1 ? `, revision ${d.revision}` : ""}. It surveyed the repository snapshot, searched it for terms from the task, ranked files by evidence (term hits, path names, imports between candidates) and read the top candidates. Check the steps before carrying them out: the offline planner cannot execute plans itself — send the plan to your terminal.`,
  );

  out.push("## Context");
  const context = [`- Task: ${oneLine(d.task)}`];
  const project = [d.project.name, d.project.ecosystems.join(" + ")].filter(Boolean).join(" — ");
  context.push(
    `- Repository: ${project || "unnamed"} (${d.fileCount} file${d.fileCount === 1 ? "" : "s"} surveyed)`,
  );
  if (d.project.description) context.push(`- Description: ${oneLine(d.project.description)}`);
  if (d.readme) context.push(`- README: ${d.readme}`);
  if (d.terms.length > 0) {
    const terms = d.terms.map(
      (t) =>
        `\`${t.term}\` (${t.files} file${t.files === 1 ? "" : "s"}${t.common ? ", common" : ""})`,
    );
    context.push(`- Searched for: ${terms.join(", ")}`);
  }
  if (d.selectionNote) context.push(`- ${d.selectionNote}`);
  out.push(context.join("\n"));

  if (d.revisionNotes.length > 0) {
    out.push(
      `## Revision notes\nThis revision takes into account:\n${d.revisionNotes.map((n) => `- ${n}`).join("\n")}`,
    );
  }

  const ordered = [...d.changes].sort(
    (a, b) => layerOf(a.path) - layerOf(b.path) || (a.path < b.path ? -1 : 1),
  );
  out.push("## Files to change");
  if (ordered.length === 0) out.push("No file could be tied to the task; see the open questions.");
  else out.push(ordered.map((c, i) => `${i + 1}. ${describe(c)}`).join("\n"));
  if (d.tests.length > 0) {
    out.push(`### Tests to update\n${d.tests.map((c) => `- ${describe(c)}`).join("\n")}`);
  }

  out.push("## Steps");
  const steps = ordered.map((c, i) => stepFor(c, i, d.task));
  if (d.tests.length > 0) {
    steps.push(
      `Extend the tests (${d.tests.map((t) => `\`${t.path}\``).join(", ")}) to cover the new behaviour, and add a test for each edge case the task implies.`,
    );
  } else if (ordered.length > 0) {
    steps.push(
      "Add tests for the new behaviour next to the existing ones (no test file matched the task).",
    );
  }
  steps.push(
    d.commands.length > 0
      ? "Run the verification commands below and fix what fails."
      : "Verify the change by hand (no test command was found in the repository).",
  );
  out.push(steps.map((s, i) => `${i + 1}. ${s}`).join("\n"));

  out.push("## Verification");
  out.push(
    d.commands.length > 0
      ? d.commands.map((c) => `- \`${c.command}\` — ${c.source}`).join("\n")
      : "- No test, lint or build command was found in package.json, Makefile, pyproject.toml, go.mod or Cargo.toml.",
  );

  out.push("## Open questions");
  out.push(
    d.openQuestions.length > 0
      ? d.openQuestions.map((q) => `- ${q}`).join("\n")
      : "- None found by the offline planner; review the file list above.",
  );
  return `${out.join("\n\n")}\n`;
}

function describe(c: FileChange): string {
  const refs = c.refs
    .map((r) => (r.symbol ? `\`${r.symbol}\` (${formatLines(r.lines)})` : formatLines(r.lines)))
    .join("; ");
  const where = c.isNew ? " — new file" : refs ? ` — ${refs}` : "";
  return `\`${c.path}\`${where}. Why: ${c.why}.`;
}

/** What a file in each layer usually contributes to a change. */
const LAYER_ROLES = [
  "add the schema or storage changes the task needs",
  "add the configuration the task needs",
  "implement the core of the change",
  "wire the change into the API and entry points",
  "surface the change in the user interface",
  "",
  "document the change",
];

function stepFor(c: FileChange, index: number, task: string): string {
  const lead = index === 0 ? `To ${lowerFirst(title(task))}: ` : "";
  if (c.isNew) return `${lead}Create \`${c.path}\` — ${c.why}.`;
  const symbols = c.refs.flatMap((r) => (r.symbol ? [`\`${r.symbol}\``] : []));
  const at =
    symbols.length > 0
      ? ` (around ${symbols.join(", ")})`
      : c.refs.length > 0
        ? ` (around ${formatLines(c.refs[0]!.lines)})`
        : "";
  return `${lead}In \`${c.path}\`${at}, ${LAYER_ROLES[layerOf(c.path)] || "make the matching change"}.`;
}

function title(task: string): string {
  // Only the beginning can show (90 characters), and `[.!?]+$` backtracks on a long line.
  const first = (task.trim().split("\n", 1)[0] ?? "").slice(0, 400);
  const clean = first.replace(/\s+/g, " ").replace(/[.!?]+$/, "");
  return clean.length > 90 ? `${clean.slice(0, 89)}…` : clean || "untitled task";
}

function oneLine(text: string): string {
  const flat = text.slice(0, 4_000).replace(/\s+/g, " ").trim();
  return flat.length > 400 ? `${flat.slice(0, 399)}…` : flat;
}

function lowerFirst(text: string): string {
  return text.length > 0 && !/^[A-Z]{2}/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text;
}
