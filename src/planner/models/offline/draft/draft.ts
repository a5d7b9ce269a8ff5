import type { Steering } from "../feedback/steering.ts";
import type { RankedFile } from "../rank/ranking.ts";
import type { Chosen } from "../rank/selection.ts";
import { testsOf } from "../rank/test-choice.ts";
import { migrationFolders } from "../repository/conventions.ts";
import { type Existing, existingNames } from "../repository/existing.ts";
import { fileCount, type Knowledge, searchOf } from "../repository/knowledge.ts";
import { formatLines } from "../repository/line-refs.ts";
import { projectFacts, README_NAMES, readmeSummary } from "../repository/manifests.ts";
import { taskIntent } from "../task/intent.ts";
import type { Transcript } from "../transcript.ts";
import {
  clauseFor,
  evidenceLine,
  type FileNote,
  noteFor,
  symbolList,
  taskClauses,
} from "./file-notes.ts";
import { type ChangeGraph, changeGraph } from "./graph.ts";
import { listing, ungrounded } from "./listing.ts";
import { openQuestions } from "./questions.ts";
import { type Before, revisionNotes } from "./revision.ts";
import { fileAction, type PlanFacts, planSteps } from "./steps.ts";

/**
 * The last stage, the plan (draft/): this module drafts it from the chosen files, listing.ts
 * says which files it lists, file-notes.ts and steps.ts what it says of each and what to do,
 * questions.ts its open questions, graph.ts the change's import graph, seed.ts how a seeded
 * session's own draft is kept, and plan-writer.ts turns the draft into markdown.
 *
 * From chosen files to a plan draft: per file the symbols and lines concerned and what
 * happens to them, the new files the task needs (the next numbered migration, a file beside
 * similar ones and the place that registers it), tests, ordered steps, verification commands
 * and open questions. Pure. A step is written only when the evidence supports it.
 */

export interface ListedFile {
  path: string;
  /** What changes there, and why (one line of markdown, after the path). */
  text: string;
}

export interface PlanDraft {
  task: string;
  /** 1 for the first plan, +1 per revision. */
  revision: number;
  project: ReturnType<typeof projectFacts>;
  readme: string | null;
  fileCount: number;
  area: string | null;
  terms: { term: string; files: number; defines: number; common: boolean }[];
  changes: ListedFile[];
  checks: ListedFile[];
  newFiles: ListedFile[];
  tests: ListedFile[];
  /** Why the files were chosen when no term matched (the user's chosen area, entry points). */
  selectionNote: string | null;
  /** What this revision changed and why, then the inputs it answers. */
  revisionNotes: string[];
  steps: string[];
  openQuestions: string[];
  commands: { command: string; source: string }[];
  /** The import graph among the files to change and the new files. */
  graph: ChangeGraph;
  /** What the task names that the code already has, and where. */
  existing: Existing[];
  /** What of the task's text pointed at which file (frames, links, messages, members). */
  pointed: string[];
}

/**
 * Everything the plan says, from what the planner found.
 */
export function draft(
  t: Transcript,
  k: Knowledge,
  s: Steering,
  ranking: readonly RankedFile[],
  chosen: Chosen,
  previous: Before | null,
): PlanDraft {
  const manifestTexts: Record<string, string> = {};
  for (const [path, lines] of k.texts)
    if (!path.includes("/")) manifestTexts[path] = lines.map(([, l]) => l).join("\n");
  const readmeName = README_NAMES.find((n) => manifestTexts[n] !== undefined);
  const byPath = new Map(ranking.map((f) => [f.path, f]));
  const list = listing(k, s, ranking, chosen);
  const migrationDirs = new Set(migrationFolders(k.known).map((m) => m.dir));
  const listed = new Set([...list.changes, ...list.checks]);
  const missing = ungrounded(s, k);
  const notes = new Map<string, FileNote>();
  const note = (path: string) => {
    let n = notes.get(path);
    if (!n) {
      n = noteFor(path, k.texts.get(path), byPath.get(path), s.terms, migrationDirs);
      notes.set(path, n);
    }
    return n;
  };
  const registers = new Map([...list.registrar].map(([file, by]) => [by, file]));
  // Which part of a one-line task a file is about; an issue's sentences are no labels.
  const clauses = s.oneLine ? [s.task, ...s.feedbackTexts].flatMap(taskClauses) : [];
  const clauseOf = (path: string) => clauseFor(byPath.get(path), clauses);
  const intent = taskIntent(s.evidence);
  const existing = existingNames(intent, k, [...list.changes, ...list.checks]);
  const facts: PlanFacts = {
    k,
    intent,
    list,
    byPath,
    note,
    clauseOf,
    registers,
    tests: list.tests,
    covers: chosen.covers,
    existing,
    hasCommands: false,
  };

  const describe = (path: string, check: boolean): ListedFile => {
    const f = byPath.get(path);
    const what = fileAction(facts, path, check);
    const added = list.added.get(path);
    const why =
      f !== undefined && added === undefined
        ? evidenceLine(f, listed, s.area, s.drafted)
        : (added ?? (chosen.note ? "an entry point of the area" : ""));
    return { path, text: `${what}${why ? `. Evidence: ${why}` : ""}` };
  };
  const changes = list.changes.map((p) => describe(p, false));
  const checks = list.checks.map((p) => describe(p, true));
  const newFiles = list.newFiles.map((n) => ({
    path: n.path,
    text: `new file: ${n.why}${list.registrar.has(n.path) ? `; registered in \`${list.registrar.get(n.path)}\`` : ""}`,
  }));
  const tests = list.tests.map((path) => {
    const f = byPath.get(path);
    const subject = [...listed].find((p) => testsOf(chosen, p).includes(path));
    const n = note(path);
    const where = symbolList(n) || (n.mentions.length > 0 ? formatLines(n.mentions[0]!.lines) : "");
    const about = subject
      ? `tests \`${subject}\``
      : f
        ? evidenceLine(f, listed, s.area, s.drafted)
        : "";
    return { path, text: [about, where ? `see ${where}` : ""].filter(Boolean).join("; ") };
  });

  const open = openQuestions({
    k,
    s,
    intent,
    ranking,
    chosen,
    changes: list.changes,
    tests: list.tests,
    existing,
    missing,
  });

  const project = projectFacts(manifestTexts, [
    ...(k.root?.dirs ?? []).map((d) => `${d}/`),
    ...(k.root?.files ?? []),
  ]);
  const graph = changeGraph([...list.changes, ...list.newFiles.map((n) => n.path)], ranking, {
    isNew: new Set(list.newFiles.map((n) => n.path)),
    wired: [...list.registrar].map(([file, by]) => ({ from: by, to: file })),
  });
  return {
    task: s.task,
    revision: t.calls.filter((c) => c.kind === "write").length + 1,
    project,
    readme: readmeName ? readmeSummary(manifestTexts[readmeName]!) : null,
    fileCount: fileCount(k),
    area: s.area,
    terms: s.terms.map((x) => {
      const found = searchOf(k, x);
      const paths = new Set([...(found?.hits?.keys() ?? []), ...(found?.pathMatches ?? [])]);
      const defines = ranking.filter((f) => f.defines.some((d) => d.term === x.text)).length;
      return { term: x.text, files: paths.size, defines, common: found?.truncated ?? false };
    }),
    changes,
    checks,
    newFiles,
    tests,
    selectionNote: chosen.note,
    revisionNotes: [...revisionNotes(previous, list, s), ...s.notes],
    steps: planSteps({ ...facts, hasCommands: project.commands.length > 0 }),
    existing,
    pointed: pointedSummary(s, ranking),
    openQuestions: open,
    commands: project.commands,
    graph,
  };
}

/** One line per file the task's text points at, for the plan's context (strongest first). */
function pointedSummary(s: Steering, ranking: readonly RankedFile[]): string[] {
  const out: string[] = [];
  for (const f of ranking) {
    const own = f.pointers.filter((p) => !p.restatesPath);
    if (own.length === 0) continue;
    const what = own
      .slice(0, 2)
      .map(
        (p) =>
          `${p.what}${p.line !== null ? ` (line ${p.line})` : ""}${p.among > 1 ? ` — one of ${p.among} files it could mean` : ""}`,
      )
      .join("; ");
    out.push(`\`${f.path}\`: ${what}`);
    if (out.length >= 4) break;
  }
  if (s.evidence.paths.length > 0 && out.length === 0)
    out.push(
      `The paths the task names (${s.evidence.paths
        .slice(0, 3)
        .map((p) => `\`${p.text}\``)
        .join(", ")}) are not files of this repository.`,
    );
  return out;
}
