import type { Steering } from "../feedback/steering.ts";
import type { FileKind } from "../feedback/targets.ts";
import type { RankedFile } from "../rank/ranking.ts";
import type { Chosen } from "../rank/selection.ts";
import type { Knowledge } from "../repository/knowledge.ts";
import {
  dirOf,
  extensionOf,
  fileStem,
  isGeneratedPath,
  moduleName,
  pathKind,
  sameName,
} from "../repository/paths.ts";
import { testPairing } from "../repository/tests.ts";

/**
 * The kinds of files a reviewer speaks of — "leave the tests out", "also update the docs",
 * "add a changelog entry", "skip the configuration", "no type changes" — applied to the files
 * the ranking chose. Pure. What the reviewer named by path or kept is never taken out by a
 * kind; a kind asked for is found the way a reader would look for it (the docs page named
 * after the changed module, the changelog at the root, the test beside the code) and placed
 * after the source it belongs to — never above it. When nothing of that kind exists, the plan
 * says so instead of pretending.
 */

/** The chosen files after the reviewer's kinds of files. */
export interface KindChoice {
  changes: string[];
  checks: string[];
  tests: string[];
  /** New files a kind asked for (a test where none exists): path and why. */
  newFiles: { path: string; why: string }[];
  /** Why each file a kind brought in was added ("describes `src/flask/config.py`"). */
  added: Map<string, string>;
  /** Kinds asked for that the repository has no file for, with what was looked for. */
  missing: { kind: FileKind; why: string }[];
  /** Kinds the reviewer asked to leave out (their steps go too). */
  dropped: ReadonlySet<FileKind>;
}

/** Docs pages listed per changed source at most. */
const DOCS_PER_SOURCE = 2;

/**
 * Applies the reviewer's kinds of files to a choice.
 *
 * @example
 * applyKinds(chosen, k, s, ranking).tests // [] after "leave the tests out"
 */
export function applyKinds(
  chosen: Chosen,
  k: Knowledge,
  s: Steering,
  ranking: readonly RankedFile[],
): KindChoice {
  const named = (p: string) => s.include.has(p) || s.keep.has(p);
  const dropped = new Set([...s.kinds.drop].filter((kind) => !s.kinds.keep.has(kind)));
  // What the reviewer ruled out by name stays out, whichever list (the tests too) took it.
  const out = (p: string) =>
    s.exclude.has(p) || (!named(p) && [...dropped].some((kind) => isKind(p, kind)));
  const choice: KindChoice = {
    changes: chosen.changes.filter((p) => !out(p)),
    checks: chosen.checks.filter((p) => !out(p)),
    tests: chosen.tests.filter((p) => !out(p)),
    newFiles: [],
    added: new Map(),
    missing: [],
    dropped,
  };
  // A file the reviewer said already handles something is one to check, not to change.
  for (const p of s.check) {
    choice.changes = choice.changes.filter((x) => x !== p);
    if (!choice.checks.includes(p)) choice.checks.unshift(p);
  }
  const sources = choice.changes.filter((p) => pathKind(p) === "source");
  for (const kind of s.kinds.add) {
    if (kind === "tests") addTests(choice, sources, k);
    else if (kind === "docs") addDocs(choice, sources, k, ranking);
    else if (kind === "changelog") addChangelog(choice, k);
    else if (kind === "config") addConfig(choice, ranking);
    else addTypes(choice, sources, k);
  }
  choice.changes = orderedBySource(choice.changes);
  return choice;
}

/** Whether a path is of a kind the reviewer speaks of. */
export function isKind(path: string, kind: FileKind): boolean {
  const k = pathKind(path);
  switch (kind) {
    case "tests":
      return k === "test";
    case "docs":
      return k === "docs";
    case "changelog":
      return k === "changelog";
    case "config":
      return k === "config" || k === "project";
    case "types":
      return /\.d\.[cm]?ts$|\.pyi$|(^|\/)(types|typings|typing|interfaces)(\/|\.[a-z]+$)/.test(
        path,
      );
  }
}

/** Code first, then the docs and changelog that describe it: a page never ranks above its code. */
function orderedBySource(paths: readonly string[]): string[] {
  const rank = (p: string) => {
    const kind = pathKind(p);
    return kind === "changelog" ? 2 : kind === "docs" ? 1 : 0;
  };
  return [...paths].sort((a, b) => rank(a) - rank(b));
}

function addTests(choice: KindChoice, sources: readonly string[], k: Knowledge): void {
  const tests = [...k.known].filter((p) => pathKind(p) === "test").sort();
  for (const source of sources.slice(0, 2)) {
    const paired = tests.filter((t) => testPairing(t, source) >= 2);
    if (paired.length > 0) {
      for (const t of paired.slice(0, 1)) if (!choice.tests.includes(t)) choice.tests.push(t);
      continue;
    }
    const path = newTestPath(source, k);
    if (path === null) {
      choice.missing.push({
        kind: "tests",
        why: `no test is paired with \`${source}\` and the repository shows no way its tests are named`,
      });
      continue;
    }
    if (!choice.newFiles.some((n) => n.path === path))
      choice.newFiles.push({
        path,
        why: `the tests of \`${source}\` you asked for, named the way this repository names its tests`,
      });
  }
  if (sources.length === 0 && choice.tests.length === 0)
    choice.missing.push({ kind: "tests", why: "the plan lists no source file to test" });
}

/**
 * Where a new test of `source` goes: beside it when its folder's tests sit beside their code
 * (`x.test.ts`), in the tests folder when the repository names them `test_x.py` there, beside
 * it as `x_test.go` in Go.
 */
export function newTestPath(source: string, k: Knowledge): string | null {
  const dir = dirOf(source);
  const ext = extensionOf(source);
  const stem = fileStem(source);
  const known = [...k.known];
  if (ext === ".go") return `${dir === "" ? "" : `${dir}/`}${stem}_test.go`;
  const beside = known.filter((p) => dirOf(p) === dir && pathKind(p) === "test");
  const marker = beside
    .map((p) => /\.(test|spec)\.[^.]+$/.exec(p)?.[1])
    .find((m) => m !== undefined);
  if (marker !== undefined) return `${dir === "" ? "" : `${dir}/`}${stem}.${marker}${ext}`;
  if (ext === ".py") {
    const folder = known
      .filter((p) => /(^|\/)test_[^/]+\.py$/.test(p))
      .map(dirOf)
      .sort()[0];
    if (folder !== undefined)
      return `${folder === "" ? "" : `${folder}/`}test_${moduleName(source)}.py`;
  }
  const anywhere = known
    .map((p) => /\.(test|spec)\.[^.]+$/.exec(p)?.[1])
    .find((m) => m !== undefined);
  return anywhere !== undefined ? `${dir === "" ? "" : `${dir}/`}${stem}.${anywhere}${ext}` : null;
}

/**
 * The docs pages about a source file: the page named after its module (`docs/config.rst` for
 * `src/flask/config.py`), else pages that mention what it defines.
 */
export function docsAbout(source: string, k: Knowledge, ranking: readonly RankedFile[]): string[] {
  const docs = [...k.known].filter((p) => pathKind(p) === "docs" && !isGeneratedPath(p)).sort();
  const module = moduleName(source);
  const byName = docs.filter((p) => sameName(fileStem(p), module));
  if (byName.length > 0) return byName.slice(0, DOCS_PER_SOURCE);
  const defined = new Set(ranking.find((f) => f.path === source)?.defines.map((d) => d.term) ?? []);
  return ranking
    .filter((f) => f.kind === "docs" && f.termHits.some((h) => defined.has(h.term)))
    .map((f) => f.path)
    .slice(0, DOCS_PER_SOURCE);
}

function addDocs(
  choice: KindChoice,
  sources: readonly string[],
  k: Knowledge,
  ranking: readonly RankedFile[],
): void {
  let found = false;
  for (const source of sources.slice(0, 3))
    for (const page of docsAbout(source, k, ranking)) {
      found = true;
      if (choice.changes.includes(page)) continue;
      choice.changes.push(page);
      choice.checks = choice.checks.filter((p) => p !== page);
      choice.added.set(page, `it documents \`${source}\`, and you asked for the docs`);
    }
  if (!found && !choice.changes.some((p) => pathKind(p) === "docs"))
    choice.missing.push({
      kind: "docs",
      why:
        sources.length > 0
          ? `no docs page of this repository is about ${sources
              .slice(0, 3)
              .map((p) => `\`${p}\``)
              .join(", ")}, so the change is documented where its code is (doc comments)`
          : "the plan lists no source file whose docs to update",
    });
}

function addChangelog(choice: KindChoice, k: Knowledge): void {
  const logs = [...k.known]
    .filter((p) => pathKind(p) === "changelog" && !isGeneratedPath(p))
    .sort(
      (a, b) =>
        a.split("/").length - b.split("/").length || a.length - b.length || (a < b ? -1 : 1),
    );
  const log = logs[0];
  if (log === undefined) {
    choice.missing.push({ kind: "changelog", why: "the repository has no changelog file" });
    return;
  }
  if (!choice.changes.includes(log)) {
    choice.changes.push(log);
    choice.checks = choice.checks.filter((p) => p !== log);
    choice.added.set(log, "you asked for a changelog entry");
  }
}

function addConfig(choice: KindChoice, ranking: readonly RankedFile[]): void {
  const config = ranking.find((f) => f.kind === "config" && f.own > 0)?.path;
  if (config === undefined) {
    choice.missing.push({ kind: "config", why: "no configuration file holds the task's words" });
    return;
  }
  if (!choice.changes.includes(config)) {
    choice.changes.push(config);
    choice.checks = choice.checks.filter((p) => p !== config);
    choice.added.set(config, "you asked for the configuration; it holds the task's words");
  }
}

function addTypes(choice: KindChoice, sources: readonly string[], k: Knowledge): void {
  const types = [...k.known].filter((p) => isKind(p, "types") && !isGeneratedPath(p)).sort();
  const beside = sources.flatMap((s) => types.filter((t) => dirOf(t) === dirOf(s))).slice(0, 2);
  if (beside.length === 0) {
    choice.missing.push({
      kind: "types",
      why: "no type declarations sit beside the files to change; the types are declared in them",
    });
    return;
  }
  for (const t of beside)
    if (!choice.changes.includes(t)) {
      choice.changes.push(t);
      choice.checks = choice.checks.filter((p) => p !== t);
      choice.added.set(t, "you asked for the types; they are declared here");
    }
}
