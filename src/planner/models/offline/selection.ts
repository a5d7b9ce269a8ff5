import { importSpecifiers, resolveImport } from "./imports.ts";
import type { Knowledge, Steering } from "./knowledge.ts";
import {
  entryPoints,
  isProjectFile,
  isTestPath,
  type RankedFile,
  rankFiles,
  type TermEvidence,
} from "./ranking.ts";
import type { Transcript } from "./transcript.ts";

/**
 * From evidence to a choice of files: ranking what the searches and reads found, picking the
 * files a plan lists, and — when nothing matched — the one clarifying question about where to
 * look. Pure.
 */

/** Source files and tests a plan lists at most. */
const MAX_CHANGES = 6;
const MAX_TESTS = 3;

/**
 * Ranks the files the searches found, with imports between the files read so far; the root's
 * project files (manifests, README) are context, never changes, unless the user named them.
 */
export function rank(k: Knowledge, s: Steering): RankedFile[] {
  const terms: TermEvidence[] = s.terms.map((term) => {
    const found = k.searches.get(term.text);
    return {
      term: term.text,
      weight: term.weight,
      hits: found?.hits ?? new Map(),
      pathMatches: found?.pathMatches ?? new Set(),
      truncated: found?.truncated ?? false,
    };
  });
  const imports = new Map<string, string[]>();
  for (const [path, lines] of k.texts) {
    const text = lines.map(([, l]) => l).join("\n");
    imports.set(
      path,
      importSpecifiers(path, text).flatMap((spec) => resolveImport(path, spec, k.known)),
    );
  }
  const exclude = new Set(s.exclude);
  for (const path of k.known) if (isProjectFile(path) && !s.include.has(path)) exclude.add(path);
  return rankFiles({
    terms,
    totalFiles: fileCount(k),
    imports,
    include: s.include,
    exclude,
    scope: s.scope ?? undefined,
  });
}

export interface Chosen {
  changes: string[];
  tests: string[];
  /** Why these files, when the choice did not come from term evidence. */
  note: string | null;
}

/**
 * The files a plan lists: the best-ranked sources and tests; when no term matched, the entry
 * points of the area the user chose (or of the whole repository).
 *
 * @example
 * chooseFiles(ranking, k, s).changes // ["src/billing/invoice.ts", …]
 */
export function chooseFiles(ranking: readonly RankedFile[], k: Knowledge, s: Steering): Chosen {
  const sources = ranking.filter((f) => !f.isTest || f.named);
  if (sources.length > 0) {
    return {
      changes: sources.slice(0, MAX_CHANGES).map((f) => f.path),
      tests: ranking
        .filter((f) => f.isTest && !f.named)
        .slice(0, MAX_TESTS)
        .map((f) => f.path),
      note: null,
    };
  }
  // Nothing matched: fall back to entry points of the chosen area, or of the whole repository.
  const pool = s.scope !== null ? (k.areas.get(s.scope)?.paths ?? []) : [...k.known];
  const picked = entryPoints(
    pool.filter((p) => !s.exclude.has(p)),
    4,
  );
  const testPool = pool.filter((p) => isTestPath(p));
  return {
    changes: picked,
    tests: testPool.slice(0, 2),
    note:
      s.scope !== null
        ? `The task's terms matched no file; you chose the area \`${s.scope}/\`, so the plan starts from its entry points.`
        : picked.length > 0
          ? "The task's terms matched no file, so the plan starts from the repository's entry points."
          : null,
  };
}

/**
 * The one clarifying question when the task matches nothing: which top-level area to focus
 * on, 2–4 options by file count. Null when the repository has fewer than two areas.
 *
 * @example
 * areaQuestion(t, k, s) // { questions: [{ header: "Focus area", options: [{ label: "src/" }, …] }] }
 */
export function areaQuestion(
  t: Transcript,
  k: Knowledge,
  s: Steering,
): Record<string, unknown> | null {
  const areas = [...k.areas.entries()]
    .filter(([, a]) => a.total > 0)
    .sort((a, b) => b[1].total - a[1].total || (a[0] < b[0] ? -1 : 1))
    .slice(0, 4);
  if (areas.length < 2) return null;
  const searched = s.terms.map((x) => x.text).join(", ");
  const task = t.task.slice(0, 1_000).replace(/\s+/g, " ").trim();
  return {
    questions: [
      {
        question: `The task "${task.length > 120 ? `${task.slice(0, 119)}…` : task}" matches no file in the repository${searched ? ` (searched for: ${searched})` : ""}. Which part of the code base should the plan focus on?`,
        header: "Focus area",
        options: areas.map(([dir, a]) => ({
          label: `${dir}/`,
          description: `${a.total} file${a.total === 1 ? "" : "s"}, e.g. ${a.paths.slice(0, 2).join(", ")}`,
        })),
        multiSelect: false,
      },
    ],
  };
}

/**
 * Files in the repository as far as the survey counted them.
 *
 * @example
 * fileCount(k) // 27
 */
export function fileCount(k: Knowledge): number {
  const inAreas = [...k.areas.values()].reduce((n, a) => n + a.total, 0);
  return Math.max(k.known.size, inAreas + (k.root?.files.length ?? 0));
}
