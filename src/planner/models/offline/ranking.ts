/**
 * Ranks repository files by evidence that they matter for a task. Pure.
 *
 * - Term hits: each term counts `1 + ln(hits)` in a file's content and 2.5 when the file's path
 *   mentions it, weighted by the term's weight and its rarity (idf: a term found in every file
 *   says little). A term so common that the search was cut short is damped further.
 * - Coverage: a file that matches several different terms beats one that repeats a single term.
 * - Imports between candidates: a file wired to a strong candidate (importing it or imported by
 *   it) gains 30% of that candidate's score — the code that has to change together.
 * - Files the user named in feedback come first; files they excluded are dropped; generated
 *   and vendored paths never count.
 */

export interface TermEvidence {
  term: string;
  weight: number;
  /** path → matching lines. */
  hits: ReadonlyMap<string, number>;
  /** Paths whose name mentions the term. */
  pathMatches: ReadonlySet<string>;
  /** The search was cut short (the term is everywhere). */
  truncated: boolean;
}

export interface RankInput {
  terms: readonly TermEvidence[];
  /** Files in the repository (for idf); at least the number of paths seen. */
  totalFiles: number;
  /** path → files it imports (resolved, known paths only). */
  imports: ReadonlyMap<string, readonly string[]>;
  /** Paths the user asked for (feedback): ranked first. */
  include?: ReadonlySet<string>;
  /** Paths the user ruled out: never ranked. */
  exclude?: ReadonlySet<string>;
  /** Only rank files under this folder ("" or absent: everywhere). */
  scope?: string;
}

export interface RankedFile {
  path: string;
  score: number;
  /** Content hits per term, strongest first. */
  termHits: { term: string; count: number }[];
  /** Terms the path itself mentions. */
  pathTerms: string[];
  imports: string[];
  importedBy: string[];
  isTest: boolean;
  /** Named by the user in feedback. */
  named: boolean;
}

const PATH_MATCH_SCORE = 2.5;
const COVERAGE_BONUS = 0.35;
const IMPORT_SHARE = 0.3;
/** A term found in more than this share of files is damped like a cut-short search. */
const COMMON_SHARE = 0.5;
const COMMON_DAMPING = 0.2;
/** Candidates below this share of the best score are dropped. */
const RELATIVE_FLOOR = 0.15;

const GENERATED =
  /(^|\/)(node_modules|dist|build|out|target|vendor|coverage|__pycache__|\.git|\.next|\.venv|venv)\/|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum|poetry\.lock|bun\.lockb?)$|\.(min\.js|map|snap|lock)$/;

const TEST_PATH =
  /(^|\/)(test|tests|__tests__|spec|specs|e2e)\/|\.(test|spec)\.[a-z]+$|_test\.(go|py)$|(^|\/)test_[^/]+\.py$/;

const PROJECT_FILE =
  /^(package\.json|pyproject\.toml|setup\.py|setup\.cfg|requirements[\w-]*\.txt|tox\.ini|pytest\.ini|Cargo\.toml|go\.mod|[Mm]akefile|GNUmakefile|deno\.json|tsconfig[\w.-]*\.json|README[\w.-]*|readme\.md|LICEN[SC]E[\w.-]*|CHANGELOG[\w.-]*|\.gitignore|\.editorconfig)$/;

/**
 * True for the repository's own project files at the root (manifests, README, licence): the
 * planner reads them for context, but a task's words showing up in them ("test", "migrate")
 * does not make them files to change.
 *
 * @example
 * isProjectFile("package.json") // true
 */
export function isProjectFile(path: string): boolean {
  return PROJECT_FILE.test(path);
}

/**
 * True for test files (they go to "tests to update", not "files to change").
 *
 * @example
 * isTestPath("src/a.test.ts") // true
 */
export function isTestPath(path: string): boolean {
  return TEST_PATH.test(path);
}

/**
 * True for generated, vendored or lock files, which a plan never edits by hand.
 *
 * @example
 * isGeneratedPath("dist/index.js") // true
 */
export function isGeneratedPath(path: string): boolean {
  return GENERATED.test(path);
}

/**
 * Ranks every file with evidence, best first (ties by path).
 *
 * @example
 * rankFiles({ terms: [{ term: "invoice", weight: 1, hits: new Map([["src/billing/invoice.ts", 4]]), pathMatches: new Set(["src/billing/invoice.ts"]), truncated: false }], totalFiles: 40, imports: new Map() })
 * // [{ path: "src/billing/invoice.ts", score: …, … }]
 */
export function rankFiles(input: RankInput): RankedFile[] {
  const scope = input.scope ? `${input.scope}/` : "";
  const allowed = (p: string) =>
    p.startsWith(scope) && !isGeneratedPath(p) && !input.exclude?.has(p);
  const total = Math.max(1, input.totalFiles);
  const base = new Map<string, number>();
  const files = new Map<string, RankedFile>();
  const entry = (path: string): RankedFile => {
    let f = files.get(path);
    if (!f) {
      f = {
        path,
        score: 0,
        termHits: [],
        pathTerms: [],
        imports: [],
        importedBy: [],
        isTest: isTestPath(path),
        named: false,
      };
      files.set(path, f);
    }
    return f;
  };

  for (const t of input.terms) {
    const df = new Set([...t.hits.keys(), ...t.pathMatches]).size;
    if (df === 0) continue;
    const common = t.truncated || df / total > COMMON_SHARE;
    const idf = Math.log(1 + total / (1 + df)) * (common ? COMMON_DAMPING : 1);
    for (const [path, count] of t.hits) {
      if (!allowed(path) || count <= 0) continue;
      entry(path).termHits.push({ term: t.term, count });
      base.set(path, (base.get(path) ?? 0) + t.weight * idf * (1 + Math.log(count)));
    }
    for (const path of t.pathMatches) {
      if (!allowed(path)) continue;
      entry(path).pathTerms.push(t.term);
      base.set(path, (base.get(path) ?? 0) + t.weight * idf * PATH_MATCH_SCORE);
    }
  }
  for (const [path, f] of files) {
    const distinct = new Set([...f.termHits.map((h) => h.term), ...f.pathTerms]).size;
    base.set(path, (base.get(path) ?? 0) * (1 + COVERAGE_BONUS * (distinct - 1)));
    f.termHits.sort((a, b) => b.count - a.count || a.term.localeCompare(b.term));
  }
  for (const path of input.include ?? []) if (allowed(path)) entry(path);

  // Imports between candidates.
  for (const [from, targets] of input.imports) {
    if (!files.has(from)) continue;
    for (const to of targets) {
      if (!files.has(to) || to === from) continue;
      if (!files.get(from)!.imports.includes(to)) files.get(from)!.imports.push(to);
      if (!files.get(to)!.importedBy.includes(from)) files.get(to)!.importedBy.push(from);
    }
  }
  for (const [path, f] of files) {
    const neighbours = [...f.imports, ...f.importedBy].map((n) => base.get(n) ?? 0);
    f.score = (base.get(path) ?? 0) + IMPORT_SHARE * Math.max(0, ...neighbours);
  }

  const top = Math.max(0, ...[...files.values()].map((f) => f.score));
  for (const path of input.include ?? []) {
    const f = files.get(path);
    if (f) {
      f.named = true;
      f.score = top + 1;
    }
  }
  return [...files.values()]
    .filter((f) => f.named || (f.score > 0 && f.score >= RELATIVE_FLOOR * top))
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Likely entry points of a set of files when no term matched: shallow paths and conventional
 * names (index, main, app, server, routes, lib, mod, __init__) first.
 *
 * @example
 * entryPoints(["src/a/b/c.ts", "src/index.ts", "src/util.ts"], 2) // ["src/index.ts", "src/util.ts"]
 */
export function entryPoints(paths: readonly string[], limit: number): string[] {
  const conventional = /(^|\/)(index|main|app|server|routes?|lib|mod|__init__|cli|api)\.[a-z]+$/;
  return paths
    .filter(
      (p) =>
        !isGeneratedPath(p) &&
        !isTestPath(p) &&
        /\.[A-Za-z]+$/.test(p) &&
        !/\.(md|txt|json|lock|ya?ml|toml|svg|png)$/i.test(p),
    )
    .map((p) => ({ p, key: p.split("/").length - (conventional.test(p) ? 1.5 : 0) }))
    .sort((a, b) => a.key - b.key || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0))
    .slice(0, limit)
    .map((x) => x.p);
}
