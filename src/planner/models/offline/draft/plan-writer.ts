import type { Variant } from "../../../../protocol/session.ts";
import type { ListedFile, PlanDraft } from "./draft.ts";
import type { ChangeGraph } from "./graph.ts";
import { type DraftOutline, draftSection } from "./seed.ts";

/**
 * The offline planner's plan as markdown. Pure: a draft in, the plan file's text out. The plan
 * says plainly that it was drafted without a model, by matching code rather than meaning. The
 * files to change come first and in rank order, so the first files the plan names are its
 * ranking; each line cites only files the lists hold.
 */

/**
 * The plan's markdown, from a draft (the Write call then puts it in the plan file).
 *
 * @example
 * const markdown = planMarkdown(draft); // "# Plan: …\n\n> Drafted by the **offline planner** …"
 */
export function planMarkdown(
  d: PlanDraft,
  variant: Variant = "simple",
  seed: DraftOutline | null = null,
): string {
  const out: string[] = [];
  out.push(`# Plan: ${seed !== null && seed.title !== "" ? seed.title : title(d.task)}`);
  out.push(
    `> ${seed === null ? "Drafted" : "Refined from your draft"} by the **offline planner** (deterministic, no language model)${d.revision > 1 ? `, revision ${d.revision}` : ""}. It matched the task's words against the code — definitions, file and folder names, mentions and imports — not their meaning, so check the files and steps before carrying them out. It cannot execute plans itself: send the plan to your terminal.`,
  );

  out.push("## Files to change");
  if (d.changes.length === 0 && d.newFiles.length === 0)
    out.push("No file could be tied to the task; see the open questions.");
  else if (d.changes.length === 0) out.push("No existing file; see the new files below.");
  else out.push(d.changes.map((c, i) => `${i + 1}. ${line(c)}`).join("\n"));
  if (d.checks.length > 0)
    out.push(
      `### Files to check\nRanked next; each may need a matching change:\n${d.checks.map((c) => `- ${line(c)}`).join("\n")}`,
    );
  if (d.newFiles.length > 0)
    out.push(`### New files\n${d.newFiles.map((c) => `- ${line(c)}`).join("\n")}`);
  if (d.tests.length > 0) out.push(`### Tests\n${d.tests.map((c) => `- ${line(c)}`).join("\n")}`);
  const diagram = variant === "visual" ? mermaid(d.graph) : null;
  if (diagram !== null) out.push(diagram);

  out.push("## Context");
  const context = [`- Task: ${oneLine(d.task)}`];
  if (d.area !== null) context.push(`- Area hint: \`${oneLine(d.area)}\``);
  const project = [d.project.name, d.project.ecosystems.join(" + ")].filter(Boolean).join(" — ");
  context.push(
    `- Repository: ${project || "unnamed"} (${d.fileCount} file${d.fileCount === 1 ? "" : "s"} surveyed)`,
  );
  if (d.project.description) context.push(`- Description: ${oneLine(d.project.description)}`);
  if (d.readme) context.push(`- README: ${d.readme}`);
  if (d.terms.length > 0) {
    const terms = d.terms.map(
      (t) =>
        `\`${t.term}\` (${t.files} file${t.files === 1 ? "" : "s"}${t.defines > 0 ? `, defined in ${t.defines}` : ""}${t.common ? ", common" : ""})`,
    );
    context.push(`- Searched for: ${terms.join(", ")}`);
  }
  if (d.pointed.length > 0)
    context.push(`- What the task points at:\n${d.pointed.map((x) => `  - ${x}`).join("\n")}`);
  if (d.existing.length > 0)
    context.push(
      `- Already in the code:\n${d.existing
        .map(
          (e) =>
            `  - \`${e.name}\`: ${e.places
              .map(
                (p) =>
                  `\`${p.path}\` line ${p.line}${p.within ? ` (in \`${p.within}\`)` : ""}${p.text ? ` — \`${p.text}\`` : ""}`,
              )
              .join("; ")}${e.more > 0 ? `; ${e.more} more` : ""}`,
        )
        .join("\n")}`,
    );
  if (d.selectionNote) context.push(`- ${d.selectionNote}`);
  if (seed !== null) context.push(`- Draft: ${draftSummary(seed)}`);
  out.push(context.join("\n"));

  if (d.revisionNotes.length > 0)
    out.push(`## Revision notes\n${d.revisionNotes.map((n) => `- ${n}`).join("\n")}`);

  if (seed !== null) out.push(draftSection(seed));

  if (d.steps.length > 0) {
    out.push(seed === null ? "## Steps" : "## Steps the repository suggests");
    out.push(d.steps.map((s, i) => `${i + 1}. ${s}`).join("\n"));
  }

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
      : `- None that the evidence raises: each file to change defines or is named after what the task names${d.tests.length > 0 ? ", and has its test" : ""}.`,
  );
  return `${out.join("\n\n")}\n`;
}

/**
 * The `visual` variant's diagram: the import edges among the files the plan touches, as a
 * mermaid flowchart with only the files that have an edge. A change whose files do not import
 * one another has no structure to draw, so it gets no diagram (null). Paths come from the
 * repository, so every character outside a plain path alphabet goes in as a mermaid entity
 * code (`#34;`): a file name cannot close the label or smuggle markup into the review page.
 *
 * @example
 * mermaid({ nodes: [{ path: "a.ts", isNew: false }, { path: "b.ts", isNew: true }], edges: [{ from: "a.ts", to: "b.ts" }] })
 * // "## Diagram\n\nAn arrow points from a file to one it imports …\n\n```mermaid\nflowchart LR\n  n0[\"a.ts\"]\n  n1[\"b.ts (new)\"]\n  n0 --> n1\n```"
 */
export function mermaid(graph: ChangeGraph): string | null {
  if (graph.edges.length === 0) return null;
  const used = new Set(graph.edges.flatMap((e) => [e.from, e.to]));
  const nodes = graph.nodes.filter((n) => used.has(n.path));
  const ids = new Map(nodes.map((n, i) => [n.path, `n${i}`]));
  const lines = [
    "flowchart LR",
    ...nodes.map((n) => `  ${ids.get(n.path)}["${label(n.path)}${n.isNew ? " (new)" : ""}"]`),
    ...graph.edges.map((e) => `  ${ids.get(e.from)} --> ${ids.get(e.to)}`),
  ];
  return `## Diagram\n\nAn arrow points from a file to one it imports or registers; change the files at the arrows' heads first.\n\n\`\`\`mermaid\n${lines.join("\n")}\n\`\`\``;
}

function label(path: string): string {
  return [...path]
    .map((ch) => (/[A-Za-z0-9._/-]/.test(ch) ? ch : `#${ch.codePointAt(0)};`))
    .join("");
}

function draftSummary(seed: DraftOutline): string {
  const steps = seed.sections.reduce((n, s) => n + s.steps.length, 0) + seed.dropped;
  const where =
    steps === 0
      ? "no list of steps; its text is kept below"
      : `${steps} step${steps === 1 ? "" : "s"}, kept below as written`;
  return `revision 1 of this plan file, written elsewhere — ${where}; this revision adds the repository's evidence`;
}

function line(c: ListedFile): string {
  return c.text ? `\`${c.path}\` — ${c.text}.` : `\`${c.path}\`.`;
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
