import type { Steering } from "../feedback/steering.ts";
import { nameMatch } from "../repository/definitions.ts";
import { importSpecifiers, lineImports, resolveImport } from "../repository/imports.ts";
import { fileCount, type Knowledge, searchOf } from "../repository/knowledge.ts";
import { dirOf, fileStem, matchPath, namesModule, pathKind } from "../repository/paths.ts";
import { taskIntent } from "../task/intent.ts";
import { splitIdentifier, stem } from "../task/terms.ts";
import type { Transcript } from "../transcript.ts";
import { pointedFiles } from "./pointers.ts";
import type { DefinitionHit } from "./ranking.ts";
import { entryPoints, type RankedFile, rankFiles, type TermEvidence } from "./ranking.ts";
import { MAX_TESTS, testsFor } from "./test-choice.ts";

/**
 * The fourth stage, ranking (rank/): pointers.ts resolves what the task's text points at,
 * ranking.ts scores every file with evidence (what each piece is worth: weights.ts), and this
 * module ranks what was found and chooses the files a plan lists.
 *
 * From evidence to a choice of files: ranking what the searches and reads found, picking the
 * files a plan lists, and — when nothing matched — the one clarifying question about where to
 * look. Pure.
 */

/** Existing files a plan lists, the files to change and the ones to check together. */
export const MAX_LISTED = 8;
/** Files to change at most; the rest of the list are files to check. */
const MAX_CHANGES = 6;
/** A file to change scores at least this share of the best candidate. */
const CHANGE_SHARE = 0.35;
/** A file without a definition or name match is a file to change only this close to the best. */
const STRONG_SHARE = 0.6;
/** The `area: repository root` hint lifts the files at the top level, a little. */
const ROOT_AREA = /^(repository root|root|\.|\/)$/i;

/**
 * Ranks the files the searches found, with the import graph of what was read and the import
 * lines found; the root's project files (manifests, README) are context, never changes, unless
 * the user named them.
 */
export function rank(k: Knowledge, s: Steering): RankedFile[] {
  // A name the feedback writes as code is looked up for the file that defines it (weight 0):
  // its words rank nothing.
  const searched = s.terms.filter((term) => term.weight > 0);
  const terms: TermEvidence[] = searched.map((term) => {
    const found = searchOf(k, term);
    return {
      term: term.text,
      weight: term.weight,
      hits: found?.hits ?? new Map(),
      pathMatches: found?.pathMatches ?? new Set(),
      defs: definitionsOf(k, term.text),
      truncated: (found?.truncated ?? false) || k.defsTruncated.has(term.text),
      ...(term.partOf !== undefined && { partOf: term.partOf }),
      ...(term.common === true && { common: true }),
    };
  });
  const exclude = new Set(s.exclude);
  for (const path of k.known) {
    if (pathKind(path) === "project" && !s.include.has(path)) exclude.add(path);
  }
  return rankFiles({
    terms,
    totalFiles: fileCount(k),
    imports: importGraph(k),
    area: areaFiles(k, s) ?? undefined,
    include: s.include,
    exclude,
    focus: s.focus,
    scope: s.scope ?? undefined,
    aboutDocs: s.terms.some((t) => /^(doc|readme|document|changelog|exampl)/.test(t.text)),
    pointed: pointedFiles(s.evidence, k),
    neighbours: neighbourTerms(s.evidence.title, terms),
  });
}

/**
 * Pairs of terms whose words stand side by side in the task's first line, nothing between
 * them but a space or a hyphen ("events feed", "rate-limiting").
 *
 * @example
 * neighbourTerms("Add rate limiting to the events feed", terms) // [["rate", "limit"], ["event", "feed"]]
 */
export function neighbourTerms(title: string, terms: readonly TermEvidence[]): [string, string][] {
  const known = new Set(terms.map((t) => t.term));
  // Plain words only: a name written as code (`getCookie`, `user_id`) is specific already.
  const termOf = (word: string) => {
    if (!/^[A-Za-z][a-z0-9]*$/.test(word)) return null;
    const lower = word.toLowerCase();
    const s = stem(lower);
    return known.has(s) ? s : known.has(lower) ? lower : null;
  };
  const out: [string, string][] = [];
  const prose = title.slice(0, 300).replace(/`[^`]*`/g, " | ");
  for (const m of prose.matchAll(/([A-Za-z][A-Za-z0-9]*)(?=[ -]([A-Za-z][A-Za-z0-9]*))/g)) {
    const a = termOf(m[1]!);
    const b = termOf(m[2]!);
    if (a !== null && b !== null && a !== b) out.push([a, b]);
  }
  return out;
}

/** The definitions the searches found whose names contain `term`, by path. */
function definitionsOf(k: Knowledge, term: string): Map<string, DefinitionHit[]> {
  const out = new Map<string, DefinitionHit[]>();
  for (const [path, defs] of k.defs) {
    const matching = defs.filter((d) => nameMatch(d.name, term) > 0);
    if (matching.length > 0) out.set(path, matching);
  }
  return out;
}

/**
 * Who imports whom, as far as the planner has seen: the imports of every file it read, and
 * the import lines an importers search found (resolved against the known paths).
 */
export function importGraph(k: Knowledge): Map<string, string[]> {
  const imports = new Map<string, string[]>();
  const addEdges = (from: string, specs: readonly string[]) => {
    const list = imports.get(from) ?? [];
    for (const spec of specs)
      for (const to of resolveImport(from, spec, k.known))
        if (to !== from && !list.includes(to)) list.push(to);
    imports.set(from, list);
  };
  for (const [path, lines] of k.texts) {
    if (pathKind(path) !== "source") continue;
    addEdges(path, importSpecifiers(path, lines.map(([, l]) => l).join("\n")));
  }
  // Only code wires code: a README's or an example's imports say nothing about the change.
  for (const row of k.importLines)
    if (pathKind(row.path) === "source") addEdges(row.path, lineImports(row.path, row.text));
  return imports;
}

/**
 * The files an `area:` hint names: its folder's files for a path (`source/utils`), the files
 * whose name or folder is the hint's words for a name (`router`, `bash-v2`), the top-level
 * files for `repository root`; null when there is no hint or nothing matches.
 */
export function areaFiles(k: Knowledge, s: Steering): Set<string> | null {
  const area = s.area;
  if (area === null) return null;
  if (ROOT_AREA.test(area.trim())) return null;
  const hinted = k.hinted ?? [];
  const path = areaPath(area);
  let matching: string[];
  if (path !== null) {
    matching = hinted.filter((p) => p.startsWith(`${path}/`) || p.includes(`/${path}/`));
  } else {
    const words = areaWords(area);
    const joined = words.join("");
    matching = hinted.filter(
      (p) =>
        (matchPath(stem(joined), p)?.strength ?? 0) >= 1 ||
        (words.length > 1 && words.every((w) => (matchPath(stem(w), p)?.strength ?? 0) >= 1)),
    );
  }
  return matching.length > 0 ? new Set(matching) : null;
}

/** The hint as a folder path (`src/db`, `lib/`), or null for a name (`router`, `bash-v2`). */
export function areaPath(area: string): string | null {
  const trimmed = area
    .trim()
    .replace(/^\.?\//, "")
    .replace(/\/+$/, "");
  return trimmed.includes("/") ? trimmed : null;
}

/** The words of a name-like hint, lower-case. */
export function areaWords(area: string): string[] {
  return splitIdentifier(area).filter((w) => w.length >= 2);
}

/**
 * The Glob that finds an `area:` hint's files, or null (no hint, or the repository root).
 *
 * @example
 * areaGlob("source/utils") // "{source/utils/**,**\/source/utils/**}"
 */
export function areaGlob(area: string | null): string | null {
  if (area === null || ROOT_AREA.test(area.trim())) return null;
  const path = areaPath(area);
  if (path !== null) return `{${path}/**,**/${path}/**}`;
  const words = areaWords(area);
  const first = words.sort((a, b) => b.length - a.length)[0];
  if (first === undefined) return null;
  const c = caseless(first.length >= 4 ? stem(first) : first);
  return `{**/*${c}*,**/*${c}*/**}`;
}

/** A glob fragment matching the text in any letter case: "auth" → "[aA][uU][tT][hH]". */
export function caseless(term: string): string {
  return [...term]
    .map((c) => (/[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c))
    .join("");
}

export interface Chosen {
  /** The files to change, best first. */
  changes: string[];
  /** Files ranked next: to check for a matching change. */
  checks: string[];
  tests: string[];
  /**
   * Tests listed for the code they exercise though neither place nor name pairs them
   * (`tests/test_request.py` for `Request.max_content_length` in `wrappers.py`): test → source.
   */
  covers?: ReadonlyMap<string, string>;
  /** Why these files, when the choice did not come from term evidence. */
  note: string | null;
}

/**
 * The files a plan lists: the best-ranked sources (the strong ones to change, the next ones to
 * check, {@link MAX_LISTED} together) and their tests; when no term matched, the entry points
 * of the area the user chose (or of the whole repository).
 *
 * @example
 * chooseFiles(ranking, k, s).changes // ["src/billing/invoice.ts", …]
 */
export function chooseFiles(ranking: readonly RankedFile[], k: Knowledge, s: Steering): Chosen {
  // "Only Y": the reviewer's list is the list — its code to change, its tests as tests, and
  // the tests beside that code; nothing ranked is added to it.
  if (s.only !== null) {
    const only = s.only.filter((p) => !s.exclude.has(p));
    const changes = only.filter((p) => pathKind(p) !== "test");
    const named = only.filter((p) => pathKind(p) === "test");
    const paired = testsFor(changes, [], k).tests.filter((p) => !named.includes(p));
    return { changes, checks: [], tests: [...named, ...paired].slice(0, MAX_TESTS), note: null };
  }
  // A test the user named is a test to extend, listed first among the tests.
  const namedTests = ranking.filter((f) => f.isTest && f.named).map((f) => f.path);
  const sources = ranking.filter((f) => !f.isTest);
  if (sources.length > 0) {
    const top = sources[0]!.score;
    // A file to change has evidence of its own: it defines a term or is named after one (or
    // scores close to the best); one that only mentions the words, or is only wired to the
    // others, is a file to check.
    const strong = (f: RankedFile) =>
      f.own > 0 && (f.defines.length > 0 || f.pathTerms.length > 0 || f.inArea);
    // "… option to cors": when the best file is the module the task names as the target, the
    // files to change are that module and what is wired to it; another module that merely has
    // an option of the same name is a file to check.
    const target = taskIntent(s.evidence).target;
    const inTarget = (f: RankedFile) => target !== null && namesModule(f.path, target);
    const core = inTarget(sources[0]!)
      ? new Set(sources.filter(inTarget).map((f) => f.path))
      : null;
    const belongs = (f: RankedFile) =>
      core === null ||
      core.has(f.path) ||
      f.imports.some((p) => core.has(p)) ||
      f.importedBy.some((p) => core.has(p));
    const changes = sources
      .filter(
        (f, i) =>
          i === 0 ||
          f.named ||
          f.focused ||
          (belongs(f) &&
            ((f.own > 0 && f.score >= STRONG_SHARE * top) ||
              (strong(f) && f.score >= CHANGE_SHARE * top))),
      )
      .slice(0, MAX_CHANGES)
      .map((f) => f.path);
    const checks = sources
      .filter((f) => !changes.includes(f.path))
      .slice(0, Math.max(0, MAX_LISTED - changes.length))
      .map((f) => f.path);
    const found = testsFor([...changes, ...checks], ranking, k);
    const paired = found.tests.filter((p) => !namedTests.includes(p));
    const tests = [...namedTests, ...paired].slice(0, MAX_TESTS);
    const covers = new Map([...found.covers].filter(([test]) => tests.includes(test)));
    return { changes, checks, tests, covers, note: null };
  }
  // Nothing matched: fall back to entry points of the chosen area, or of the whole repository.
  const pool = s.scope !== null ? (k.areas.get(s.scope)?.paths ?? []) : [...k.known];
  const picked = entryPoints(
    pool.filter((p) => !s.exclude.has(p)),
    4,
  );
  const testPool = pool.filter((p) => pathKind(p) === "test");
  return {
    changes: picked,
    checks: [],
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
 * Module names an importers search looks for, for the given files: the file's name, or its
 * folder's for an index/mod/__init__ file and for Go (a package is a folder).
 *
 * @example
 * moduleNames(["src/auth/session.ts", "httpx/_transports/__init__.py", "middleware/realip.go"]) // ["session", "_transports", "middleware"]
 */
export function moduleNames(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const path of paths) {
    const name = fileStem(path);
    const folder = dirOf(path).split("/").pop() ?? "";
    const generic = /^(index|mod|__init__|main|lib)$/.test(name) || path.endsWith(".go");
    const module = generic ? folder : name;
    if (module.length >= 3 && !out.includes(module)) out.push(module);
  }
  return out;
}
