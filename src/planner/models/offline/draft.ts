import type { Knowledge, Steering } from "./knowledge.ts";
import { lineRefs } from "./line-refs.ts";
import { projectFacts, README_NAMES, readmeSummary } from "./manifests.ts";
import type { FileChange, PlanDraft } from "./plan-writer.ts";
import type { RankedFile } from "./ranking.ts";
import { type Chosen, fileCount } from "./selection.ts";
import type { Transcript } from "./transcript.ts";

/**
 * From chosen files to a plan draft: line references, the evidence in words, the new files a
 * task needs (the next numbered migration, a home for what nothing covers yet), verification
 * commands and open questions. Pure.
 */

/**
 * Everything the plan says, from what the planner found.
 */
export function draft(
  t: Transcript,
  k: Knowledge,
  s: Steering,
  ranking: readonly RankedFile[],
  chosen: Chosen,
): PlanDraft {
  const manifestTexts: Record<string, string> = {};
  for (const [path, lines] of k.texts)
    if (!path.includes("/")) manifestTexts[path] = lines.map(([, l]) => l).join("\n");
  const readmeName = README_NAMES.find((n) => manifestTexts[n] !== undefined);
  const byPath = new Map(ranking.map((f) => [f.path, f]));
  const termTexts = s.terms.map((x) => x.text);
  const change = (path: string): FileChange => {
    const lines = k.texts.get(path);
    const f = byPath.get(path);
    if (lines === undefined && k.attempted.has(path) && !k.known.has(path)) {
      return { path, refs: [], why: "named in your feedback; it does not exist yet", isNew: true };
    }
    return {
      path,
      refs: lines ? lineRefs(lines, termTexts) : [],
      why: f ? evidence(f) : chosen.note ? "an entry point of the area" : "listed for context",
    };
  };
  const migration = nextMigration(chosen.changes, k, termTexts);
  const changes = chosen.changes
    .filter((p) => migration === null || !migration.replaces.includes(p))
    .map(change);
  if (migration !== null) changes.push(migration.change);
  for (const named of s.unknownNamed)
    if (!chosen.changes.includes(named)) changes.push(change(named));
  const suggested = newFileSuggestion(s, k, chosen.changes);
  if (suggested) changes.push(suggested);

  const open: string[] = [];
  const ungrounded = s.terms.filter(
    (x) =>
      (k.searches.get(x.text)?.hits?.size ?? 0) +
        (k.searches.get(x.text)?.pathMatches?.size ?? 0) ===
      0,
  );
  if (ungrounded.length > 0) {
    open.push(
      `Nothing in the repository mentions ${ungrounded.map((x) => `"${x.text}"`).join(", ")}: is that new code (the plan assumes so), or does it go by another name here?`,
    );
  }
  if (s.afk)
    open.push(
      "The clarifying question went unanswered (the user may be away); the plan uses its best judgment. Confirm the area before carrying it out.",
    );
  if (k.root !== null && k.root.dirs.length === 0 && k.root.files.length === 0) {
    open.push(
      "No repository snapshot was attached to this session, so no code was read. Start a session from the repository to get a grounded plan.",
    );
  }
  if (chosen.note !== null && s.scope === null)
    open.push(
      "Which part of the code base does the task concern? Naming a file or folder in feedback focuses the next revision.",
    );
  open.push(
    "The offline planner matches words, not meaning: check that no file outside this list needs to change.",
  );

  const project = projectFacts(manifestTexts, [
    ...(k.root?.dirs ?? []).map((d) => `${d}/`),
    ...(k.root?.files ?? []),
  ]);
  return {
    task: t.task,
    revision: t.calls.filter((c) => c.kind === "write").length + 1,
    project,
    readme: readmeName ? readmeSummary(manifestTexts[readmeName]!) : null,
    fileCount: fileCount(k),
    terms: s.terms.map((x) => {
      const found = k.searches.get(x.text);
      return {
        term: x.text,
        files: new Set([...(found?.hits?.keys() ?? []), ...(found?.pathMatches ?? [])]).size,
        common: found?.truncated ?? false,
      };
    }),
    changes,
    tests: chosen.tests.map(change),
    selectionNote: chosen.note,
    openQuestions: open,
    revisionNotes: s.notes,
    commands: project.commands,
  };
}

/** Why a ranked file is in the plan, in words. */
function evidence(f: RankedFile): string {
  const parts: string[] = [];
  if (f.named) parts.push("named in your feedback");
  if (f.termHits.length > 0)
    parts.push(
      `mentions ${f.termHits
        .slice(0, 4)
        .map((h) => `\`${h.term}\` ×${h.count}`)
        .join(", ")}`,
    );
  if (f.pathTerms.length > 0)
    parts.push(`its path mentions ${f.pathTerms.map((x) => `\`${x}\``).join(", ")}`);
  if (f.importedBy.length > 0)
    parts.push(
      `used by ${f.importedBy
        .slice(0, 3)
        .map((p) => `\`${p}\``)
        .join(", ")}`,
    );
  if (f.imports.length > 0)
    parts.push(
      `imports ${f.imports
        .slice(0, 3)
        .map((p) => `\`${p}\``)
        .join(", ")}`,
    );
  return parts.join("; ") || "ranked by the search";
}

/** Folders that hold numbered schema migrations. */
const MIGRATIONS_DIR = /(^|\/)(migrations?|migrate|alembic\/versions|db\/versions)\/[^/]+$/;

/**
 * A task that touches numbered migrations needs a new one, not edits to applied ones: the next
 * number in that folder, named after the task.
 */
function nextMigration(
  changes: readonly string[],
  k: Knowledge,
  terms: readonly string[],
): { change: FileChange; replaces: string[] } | null {
  const numbered = changes.filter(
    (p) => MIGRATIONS_DIR.test(p) && /^\d+/.test(p.slice(p.lastIndexOf("/") + 1)),
  );
  if (numbered.length === 0) return null;
  const dir = numbered[0]!.slice(0, numbered[0]!.lastIndexOf("/") + 1);
  const siblings = [...k.known].filter(
    (p) => p.startsWith(dir) && !p.slice(dir.length).includes("/"),
  );
  const numbers = siblings
    .map((p) => /^(\d+)/.exec(p.slice(dir.length))?.[1] ?? "")
    .filter((n) => n !== "");
  const width = Math.max(...numbers.map((n) => n.length));
  const next = String(Math.max(...numbers.map(Number)) + 1).padStart(width, "0");
  const ext = /\.[A-Za-z0-9]+$/.exec(numbered[0]!)?.[0] ?? "";
  const slug =
    terms
      .filter((t) => !/^migr/.test(t))
      .slice(0, 3)
      .join("_") || "change";
  const example = siblings
    .filter((p) => /^\d+/.test(p.slice(dir.length)))
    .sort(
      (a, b) =>
        Number(/^(\d+)/.exec(a.slice(dir.length))![1]) -
        Number(/^(\d+)/.exec(b.slice(dir.length))![1]),
    )
    .at(-1)!;
  return {
    change: {
      path: `${dir}${next}_${slug}${ext}`,
      refs: [],
      why: `the next migration after \`${example}\` (applied migrations are never edited); follow its pattern`,
      isNew: true,
    },
    replaces: numbered.filter((p) => p.startsWith(dir)),
  };
}

/** Terms of the task no file mentions become a suggested new file beside the best candidate. */
function newFileSuggestion(
  s: Steering,
  k: Knowledge,
  changes: readonly string[],
): FileChange | null {
  const top = changes[0];
  if (top === undefined) return null;
  const missing = s.terms
    .filter(
      (x) =>
        x.text.length >= 4 &&
        (k.searches.get(x.text)?.hits?.size ?? 0) +
          (k.searches.get(x.text)?.pathMatches?.size ?? 0) ===
          0,
    )
    .slice(0, 2)
    .map((x) => x.text);
  if (missing.length === 0) return null;
  const dir = top.includes("/") ? top.slice(0, top.lastIndexOf("/") + 1) : "";
  const ext = /\.[A-Za-z0-9]+$/.exec(top)?.[0] ?? "";
  const name = missing.join(ext === ".py" || ext === ".rs" ? "_" : "-");
  const path = `${dir}${name}${ext}`;
  if (k.known.has(path)) return null;
  return {
    path,
    refs: [],
    why: `nothing in the repository covers ${missing.map((m) => `"${m}"`).join(" or ")} yet`,
    isNew: true,
  };
}
