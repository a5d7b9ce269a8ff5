import { type DefinitionKind, nameMatch } from "../repository/definitions.ts";
import { matchPath, type PathKind, pathKind } from "../repository/paths.ts";
import type { Pointer } from "./pointers.ts";
import {
  AREA_FACTOR,
  COMMON_DAMPING,
  COMMON_SHARE,
  COVERAGE_BONUS,
  DEFINED_ALONE_FACTOR,
  DEFINITION_SCORE,
  DEFINITION_WEIGHT,
  FEW_TERMS,
  FOCUS_FACTOR,
  FOCUS_FOLDER_FACTOR,
  IMPORT_FANOUT,
  IMPORT_SHARE,
  KIND_FACTOR,
  MENTION_COVERAGE,
  PATH_FILE_SCORE,
  PATH_FOLDER_SCORE,
  POINTER_SCORE,
  RELATIVE_FLOOR,
  TELLING_SHARE,
} from "./weights.ts";

/**
 * Ranks repository files by evidence that a task changes them. Pure. Evidence, strongest first:
 *
 * - **Definitions**: the file defines a name with the term as a whole word (`createSession`
 *   for `session`), or the very identifier the task names (`getQueryString`). A file that
 *   defines a term outranks files that only mention it.
 * - **Path and folder names**: the term is a word of the file's name (`wsgi` →
 *   `_transports/wsgi.py`) or of a folder it is in (`migrations/`), a strong hint that the
 *   file is where the thing lives; the `area:` hint counts the same way, for all its files.
 * - **Mentions**: content hits, `1 + ln(hits)`.
 *
 * Each is weighted by the term's weight and its rarity (idf: a term found in every file says
 * little; a search that was cut short marks a term as common). A file that matches several
 * different terms beats one that repeats a single term. Then the import graph: a file wired
 * to a strong candidate (importing it or imported by it) gains a share of that candidate's
 * score — less the more files it is wired to, so an `index.ts` or `__init__.py` that imports
 * everything does not rise with everything. Tests are ranked but flagged (they are listed as
 * tests); docs, changelogs, examples and benchmarks count for little unless the task is about
 * them; generated and vendored files never count. Files the user named come first, files
 * they ruled out are dropped, files a comment was about (and their folder) are lifted. What
 * each piece of evidence is worth is in weights.ts.
 */

export interface DefinitionHit {
  name: string;
  kind: DefinitionKind;
  line: number;
}

export interface TermEvidence {
  term: string;
  weight: number;
  /** path → matching lines. */
  hits: ReadonlyMap<string, number>;
  /** Paths whose name contains the term (matched by word in {@link matchPath}). */
  pathMatches: ReadonlySet<string>;
  /** path → definitions there whose name contains the term. */
  defs: ReadonlyMap<string, readonly DefinitionHit[]>;
  /** The search was cut short (the term is everywhere). */
  truncated: boolean;
  /** The whole identifier this term is a part of (counts as the same evidence for coverage). */
  partOf?: string;
  /**
   * A common word of the task's prose (task/terms.ts `COMMON_WORDS`): its mentions count at its
   * weight, but a definition of it is no evidence ("check" is not `JSONTag.check`) and it
   * adds nothing to a file's coverage.
   */
  common?: boolean;
}

export interface RankInput {
  terms: readonly TermEvidence[];
  /** Files in the repository (for idf); at least the number of paths seen. */
  totalFiles: number;
  /** path → files it imports (resolved, known paths only). */
  imports: ReadonlyMap<string, readonly string[]>;
  /** Files the `area:` hint names (its folder's files, or files named like it). */
  area?: ReadonlySet<string>;
  /** Paths the user asked for (feedback): ranked first. */
  include?: ReadonlySet<string>;
  /** Paths the user ruled out: never ranked. */
  exclude?: ReadonlySet<string>;
  /** Files a comment was about: lifted, with their folder. */
  focus?: ReadonlySet<string>;
  /** Only rank files under this folder ("" or absent: everywhere). */
  scope?: string;
  /** The task is about documentation (docs and examples are not demoted). */
  aboutDocs?: boolean;
  /**
   * Files the task's text points at — a traceback frame, a link, a path it names, a message it
   * quotes, a class and its method — each with its weight (before rarity) and what it was.
   */
  pointed?: ReadonlyMap<string, readonly Pointer[]>;
  /**
   * Terms written side by side in the task's first line ("events feed", "rate limiting"): a
   * file that defines one of them and holds nothing of its neighbour uses the word in another
   * sense (`feed()` of a gzip stream is not the events feed).
   */
  neighbours?: readonly (readonly [string, string])[];
}

export interface RankedFile {
  path: string;
  score: number;
  /** The score before the import graph's share. */
  own: number;
  kind: PathKind;
  /** Content hits per term, strongest first. */
  termHits: { term: string; count: number }[];
  /** Terms that are words of the file's name, or of its folders. */
  pathTerms: { term: string; where: "file" | "folder" }[];
  /** Definitions of the task's terms in the file, best first. */
  defines: { term: string; name: string; kind: DefinitionKind; line: number; exact: boolean }[];
  /** Inside the `area:` hint. */
  inArea: boolean;
  imports: string[];
  importedBy: string[];
  isTest: boolean;
  /** Named by the user in feedback. */
  named: boolean;
  /** A comment was about this file or its folder. */
  focused: boolean;
  /** What of the task's text points at it (frames, links, named paths, messages, members). */
  pointers: readonly Pointer[];
}

const idf = (total: number, df: number) => Math.log(1 + total / (1 + df));

/**
 * Ranks every file with evidence, best first (ties by path).
 *
 * @example
 * rankFiles({ terms: [{ term: "invoice", weight: 1, hits: new Map([["src/billing/invoice.ts", 4]]), pathMatches: new Set(["src/billing/invoice.ts"]), defs: new Map(), truncated: false }], totalFiles: 40, imports: new Map() })
 * // [{ path: "src/billing/invoice.ts", score: …, … }]
 */
export function rankFiles(input: RankInput): RankedFile[] {
  const scope = input.scope ? `${input.scope}/` : "";
  const allowed = (p: string) =>
    p.startsWith(scope) && KIND_FACTOR[pathKind(p)] > 0 && !input.exclude?.has(p);
  const total = Math.max(1, input.totalFiles);
  const base = new Map<string, number>();
  const files = new Map<string, RankedFile>();
  const entry = (path: string): RankedFile => {
    let f = files.get(path);
    if (!f) {
      const kind = pathKind(path);
      f = {
        path,
        score: 0,
        own: 0,
        kind,
        termHits: [],
        pathTerms: [],
        defines: [],
        inArea: input.area?.has(path) ?? false,
        imports: [],
        importedBy: [],
        isTest: kind === "test",
        named: false,
        focused: false,
        pointers: input.pointed?.get(path) ?? [],
      };
      files.set(path, f);
    }
    return f;
  };
  const add = (path: string, value: number) => base.set(path, (base.get(path) ?? 0) + value);
  /** path → defined name → the best value any term gave it. */
  const defValues = new Map<string, Map<string, number>>();
  /** term → the files holding it in any way (a mention, a path, a definition). */
  const holders = new Map(
    input.terms.map((t) => [
      t.term,
      new Set([...t.hits.keys(), ...t.pathMatches, ...t.defs.keys()]),
    ]),
  );
  /** term → the terms written beside it in the task's first line. */
  const beside = new Map<string, string[]>();
  for (const [a, b] of input.neighbours ?? []) {
    beside.set(a, [...(beside.get(a) ?? []), b]);
    beside.set(b, [...(beside.get(b) ?? []), a]);
  }
  const aloneFactor = (term: string, path: string) => {
    const partners = beside.get(term) ?? [];
    return partners.length > 0 && partners.every((p) => !holders.get(p)?.has(path))
      ? DEFINED_ALONE_FACTOR
      : 1;
  };

  for (const t of input.terms) {
    const df = new Set([...t.hits.keys(), ...t.pathMatches]).size;
    if (df === 0) continue;
    const common = t.truncated || df / total > COMMON_SHARE;
    const damping = common ? COMMON_DAMPING : 1;
    const contentIdf = idf(total, t.hits.size) * damping;
    for (const [path, count] of t.hits) {
      if (!allowed(path) || count <= 0) continue;
      entry(path).termHits.push({ term: t.term, count });
      add(path, t.weight * contentIdf * (1 + Math.log(count)));
    }
    const named = [...t.pathMatches]
      .map((path) => ({ path, match: matchPath(t.term, path) }))
      .filter((x) => x.match !== null);
    const pathIdf = idf(total, named.length) * damping;
    for (const { path, match } of named) {
      if (!allowed(path) || match === null) continue;
      entry(path).pathTerms.push({ term: t.term, where: match.where });
      const score = match.where === "file" ? PATH_FILE_SCORE : PATH_FOLDER_SCORE;
      add(path, t.weight * pathIdf * score * match.strength);
    }
    const defIdf = idf(total, t.defs.size) * damping;
    for (const [path, defs] of t.common ? [] : t.defs) {
      if (!allowed(path)) continue;
      let best = 0;
      let bestDef: DefinitionHit | null = null;
      for (const d of defs) {
        const value = nameMatch(d.name, t.term) * DEFINITION_WEIGHT[d.kind];
        if (value > best) {
          best = value;
          bestDef = d;
        }
      }
      if (bestDef === null) continue;
      entry(path).defines.push({
        term: t.term,
        name: bestDef.name,
        kind: bestDef.kind,
        line: bestDef.line,
        exact: nameMatch(bestDef.name, t.term) === 2,
      });
      const value = t.weight * defIdf * DEFINITION_SCORE * best * aloneFactor(t.term, path);
      const byName = defValues.get(path) ?? new Map<string, number>();
      byName.set(bestDef.name, Math.max(byName.get(bestDef.name) ?? 0, value));
      defValues.set(path, byName);
    }
  }
  // One definition is one piece of evidence: `decodeURIComponent_` found by the whole name and
  // by its parts "decode" and "component" counts once, at its best.
  for (const [path, byName] of defValues) for (const value of byName.values()) add(path, value);

  // What the task's text points at: each pointer is worth its weight at the rarity of the
  // files it could mean — a link to one file counts fully, a bare `__init__.py` barely.
  for (const [path, pointers] of input.pointed ?? []) {
    if (!allowed(path)) continue;
    entry(path);
    let sum = 0;
    for (const p of pointers) sum += p.weight * POINTER_SCORE * idf(total, p.among);
    add(path, sum);
  }

  const telling = new Set(
    input.terms
      .filter((t) => {
        if (t.common) return false;
        if (input.terms.length <= FEW_TERMS) return true;
        const df = new Set([...t.hits.keys(), ...t.pathMatches]).size;
        return df > 0 && !t.truncated && df / total <= TELLING_SHARE;
      })
      .map((t) => t.term),
  );
  // The parts of one identifier ("decode", "component" of `decodeURIComponent`) are one term.
  const groupOf = new Map(input.terms.flatMap((t) => (t.partOf ? [[t.term, t.partOf]] : [])));
  const focusFolders = new Set([...(input.focus ?? [])].map(folderOf));
  for (const [path, f] of files) {
    // Terms most files hold say little about a file that holds them all: only the telling
    // ones count towards coverage (a long issue's dozen words would lift every large file).
    // A term the file defines or is named after counts fully; one it only mentions, half.
    const strong = new Set(
      [...f.pathTerms.map((p) => p.term), ...f.defines.map((d) => d.term)]
        .filter((term) => telling.has(term))
        .map((term) => groupOf.get(term) ?? term),
    );
    const weak = new Set(
      f.termHits
        .map((h) => h.term)
        .filter((term) => telling.has(term))
        .map((term) => groupOf.get(term) ?? term)
        .filter((group) => !strong.has(group)),
    );
    const distinct =
      strong.size +
      MENTION_COVERAGE * weak.size +
      (f.pointers.some((p) => !p.restatesPath) ? 1 : 0);
    let factor = (1 + COVERAGE_BONUS * Math.max(0, distinct - 1)) * kindFactor(f.kind, input);
    if (f.inArea) factor *= AREA_FACTOR;
    if (input.focus?.has(path)) {
      f.focused = true;
      factor *= FOCUS_FACTOR;
    } else if (focusFolders.has(folderOf(path))) {
      f.focused = true;
      factor *= FOCUS_FOLDER_FACTOR;
    }
    base.set(path, (base.get(path) ?? 0) * factor);
    f.termHits.sort((a, b) => b.count - a.count || compare(a.term, b.term));
    f.defines.sort((a, b) => Number(b.exact) - Number(a.exact) || a.line - b.line);
  }
  for (const path of [...(input.include ?? []), ...(input.focus ?? [])])
    if (allowed(path)) entry(path);

  // The import graph among the candidates (and into them: an importer of a strong candidate
  // is ranked even without a word of the task, so the entry point that wires it in shows).
  for (const [from, targets] of input.imports) {
    for (const to of targets) {
      if (to === from || !allowed(from) || !allowed(to)) continue;
      if (!files.has(from) && !files.has(to)) continue;
      const a = entry(from);
      const b = entry(to);
      if (!a.imports.includes(to)) a.imports.push(to);
      if (!b.importedBy.includes(from)) b.importedBy.push(from);
    }
  }
  // Each edge is worth less the more edges either end has: a hub wired to everything, or a
  // module everything imports, says little about any one of them.
  const fanout = (f: RankedFile) =>
    Math.sqrt(Math.max(1, (f.imports.length + f.importedBy.length) / IMPORT_FANOUT));
  for (const [path, f] of files) {
    const own = base.get(path) ?? 0;
    const neighbours = [...f.imports, ...f.importedBy];
    const strongest = Math.max(
      0,
      ...neighbours.map((n) => (base.get(n) ?? 0) / fanout(files.get(n)!)),
    );
    f.own = own;
    f.score = own + (IMPORT_SHARE * kindFactor(f.kind, input) * strongest) / fanout(f);
  }

  const top = Math.max(0, ...[...files.values()].map((f) => f.score));
  // Files the user named come first; among them, code before the docs the same text names,
  // then by their own evidence (never by the order of the paths' names).
  for (const path of input.include ?? []) {
    const f = files.get(path);
    if (f) {
      f.named = true;
      f.score = top + 1 + kindFactor(f.kind, input) + f.score / (top + 1);
    }
  }
  return [...files.values()]
    .filter((f) => f.named || (f.score > 0 && f.score >= RELATIVE_FLOOR * top))
    .sort((a, b) => b.score - a.score || compare(a.path, b.path));
}

function kindFactor(kind: PathKind, input: RankInput): number {
  if (input.aboutDocs && (kind === "docs" || kind === "example" || kind === "changelog"))
    return 0.9;
  return KIND_FACTOR[kind];
}

function folderOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "" : path.slice(0, slash);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
    .filter((p) => pathKind(p) === "source")
    .map((p) => ({ p, key: p.split("/").length - (conventional.test(p) ? 1.5 : 0) }))
    .sort((a, b) => a.key - b.key || compare(a.p, b.p))
    .slice(0, limit)
    .map((x) => x.p);
}
