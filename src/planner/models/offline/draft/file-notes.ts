import type { RankedFile } from "../rank/ranking.ts";
import { nameMatch } from "../repository/definitions.ts";
import { type LineRef, lineRefs, type Span, symbolSpans } from "../repository/line-refs.ts";
import { fileStem, matchPath, pathKind } from "../repository/paths.ts";
import { splitIdentifier, stem, type Term } from "../task/terms.ts";

/**
 * What the plan says about one file: the symbols and lines the task concerns there, what the
 * file's role is in the change, and the evidence for it in one line. Pure; every sentence is
 * built from what the searches and reads found, so a file the evidence says nothing specific
 * about gets a short line, never a made-up step.
 */

/** The role a file plays in the change. */
export type Role = "migration" | "declaration" | "registration" | "code" | "docs";

export interface FileNote {
  path: string;
  role: Role;
  /** The definitions the task concerns, best first (at most 3). */
  symbols: Span[];
  /** Lines mentioning the task's terms, grouped by enclosing definition. */
  mentions: LineRef[];
  /** Lines that register routes, commands or handlers (for a registration file). */
  registrations: number[];
}

const REGISTRATION =
  /\b(?:app|router|routes|server|api|mux|r|e|g|program|cli|cmd|root|rootCmd|bp|blueprint|fastify|instance)\s*\.\s*(?:use|get|post|put|patch|delete|all|route|register|mount|add_url_rule|include_router|HandleFunc|Handle|Group|Mount|command|addCommand|AddCommand)\s*\(|\bregister\w*\s*\(|\burlpatterns\b|\bAddCommand\s*\(/;

/**
 * Reads a file's facts for the plan: its role, the symbols concerned, the mention lines.
 *
 * @example
 * noteFor("src/auth/session.ts", lines, f, terms) // { role: "code", symbols: [{ name: "createSession", … }], … }
 */
export function noteFor(
  path: string,
  lines: readonly [number, string][] | undefined,
  f: RankedFile | undefined,
  terms: readonly Term[],
  migrationDirs: ReadonlySet<string>,
): FileNote {
  const spans = lines ? symbolSpans(path, lines) : [];
  const mentions = lines ? lineRefs(path, lines, terms) : [];
  const registrations = lines
    ? lines.filter(([, text]) => REGISTRATION.test(text.slice(0, 500))).map(([n]) => n)
    : [];
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  const role: Role = migrationDirs.has(dir)
    ? "migration"
    : (f?.kind ?? pathKind(path)) === "docs" || (f?.kind ?? pathKind(path)) === "changelog"
      ? "docs"
      : /\.d\.[cm]?ts$|(^|\/)(types|typings|interfaces)(\/|\.)/.test(path)
        ? "declaration"
        : registrations.length >= 2
          ? "registration"
          : "code";
  return {
    path,
    role,
    symbols: concernedSymbols(spans, mentions, f, terms),
    mentions,
    registrations,
  };
}

/**
 * The definitions the task concerns in a file: those named after the task's terms (the whole
 * identifier first), then those enclosing most mentions.
 */
function concernedSymbols(
  spans: readonly Span[],
  mentions: readonly LineRef[],
  f: RankedFile | undefined,
  terms: readonly Term[],
): Span[] {
  const scored = new Map<string, { span: Span; score: number }>();
  const consider = (span: Span, score: number) => {
    const key = `${span.name}:${span.start}`;
    const known = scored.get(key);
    if (known) known.score = Math.max(known.score, score);
    else scored.set(key, { span, score });
  };
  // Code before declarations: a function or class named after the task is what changes; a
  // constant of the same name usually only comes along.
  const kindBonus = (span: Span) =>
    span.kind === "function" || span.kind === "method" || span.kind === "class"
      ? 2
      : span.kind === "type" || span.kind === "route"
        ? 1
        : 0;
  for (const span of spans) {
    const score = terms.reduce((sum, t) => sum + nameMatch(span.name, t.text) * t.weight, 0);
    if (score > 0) consider(span, 10 + score + kindBonus(span));
  }
  for (const d of f?.defines ?? []) {
    const span = spans.find((s) => s.start === d.line) ?? {
      name: d.name,
      kind: d.kind,
      start: d.line,
      end: d.line,
    };
    consider(span, (d.exact ? 30 : 10) + 1);
  }
  for (const m of mentions) {
    if (m.symbol === null) continue;
    const span = spans.find(
      (s) => s.name === m.symbol && s.start <= m.lines[0]! && m.lines[0]! <= s.end,
    );
    if (span) consider(span, m.lines.length);
  }
  return [...scored.values()]
    .sort((a, b) => b.score - a.score || a.span.start - b.span.start)
    .slice(0, 3)
    .map((x) => x.span)
    .sort((a, b) => a.start - b.start);
}

/**
 * The evidence for a ranked file in one line: what it defines, which of its names the task
 * names, what it mentions, and how it is wired to the other listed files (only listed files
 * are named, so the first files a plan names stay its ranking).
 *
 * @example
 * evidenceLine(f, new Set(["src/routes/index.js"])) // "defines `createSession` (line 3); its name is `session`; imported by `src/routes/index.js`"
 */
export function evidenceLine(
  f: RankedFile,
  listed: ReadonlySet<string>,
  area: string | null,
  drafted: ReadonlySet<string> = new Set(),
): string {
  const parts: string[] = [];
  if (f.named) parts.push(drafted.has(f.path) ? "named in your draft" : "named in your feedback");
  if (f.focused) parts.push("your comment was about it or its folder");
  const seen = new Set<string>();
  const defined = f.defines.filter((d) => !seen.has(d.name) && seen.add(d.name));
  const routes = defined.filter((d) => d.kind === "route").slice(0, 2);
  const defs = defined.filter((d) => d.kind !== "route").slice(0, 2);
  if (defs.length > 0)
    parts.push(`defines ${defs.map((d) => `\`${d.name}\` (line ${d.line})`).join(", ")}`);
  if (routes.length > 0)
    parts.push(
      `registers the route${routes.length > 1 ? "s" : ""} ${routes.map((d) => `\`${d.name}\` (line ${d.line})`).join(", ")}`,
    );
  const fileWords = f.pathTerms.filter((p) => p.where === "file").map((p) => `\`${p.term}\``);
  if (fileWords.length > 0) parts.push(`its name is ${fileWords.join(", ")}`);
  const folderWords = f.pathTerms.filter((p) => p.where === "folder");
  if (folderWords.length > 0) {
    const folders = folderWords.map((p) => `\`${matchingFolder(f.path, p.term) ?? p.term}/\``);
    parts.push(`in ${[...new Set(folders)].join(", ")}`);
  }
  if (f.inArea && area !== null) parts.push(`inside the area \`${area}\``);
  if (f.termHits.length > 0)
    parts.push(
      `mentions ${f.termHits
        .slice(0, 3)
        .map((h) => `\`${h.term}\` ×${h.count}`)
        .join(", ")}`,
    );
  parts.push(
    ...wiring("imported by", f.importedBy, listed),
    ...wiring("imports", f.imports, listed),
  );
  return parts.join("; ") || "ranked by the search";
}

function wiring(label: string, paths: readonly string[], listed: ReadonlySet<string>): string[] {
  if (paths.length === 0) return [];
  const shown = paths.filter((p) => listed.has(p)).slice(0, 2);
  const more = paths.length - shown.length;
  if (shown.length === 0) return [`${label} ${paths.length} file${paths.length === 1 ? "" : "s"}`];
  const rest = more > 0 ? ` and ${more} more` : "";
  return [`${label} ${shown.map((p) => `\`${p}\``).join(", ")}${rest}`];
}

/** The folder of `path` whose name is `term` (`migrations` for `migr`). */
function matchingFolder(path: string, term: string): string | null {
  const segments = path.split("/").slice(0, -1);
  for (let i = segments.length - 1; i >= 0; i--)
    if ((matchPath(term, `${segments[i]}/x`)?.where ?? null) === "folder") return segments[i]!;
  return null;
}

/**
 * The symbols of a note as "`a` (lines 3–9), `b` (line 12)".
 *
 * @example
 * symbolList(note) // "`createSession` (lines 3–12)"
 */
export function symbolList(note: FileNote): string {
  return note.symbols
    .map((s) => {
      const lines = s.end > s.start ? `lines ${s.start}–${s.end}` : `line ${s.start}`;
      return s.kind === "route" ? `the route \`${s.name}\` (${lines})` : `\`${s.name}\` (${lines})`;
    })
    .join(", ");
}

/** A word list as prose: "a", "a and b", "a, b and c". */
export function words(list: readonly string[]): string {
  if (list.length <= 1) return list.join("");
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}

/** The file's name as the plan refers to a module: `login` for `src/routes/login.js`. */
export function moduleLabel(path: string): string {
  return fileStem(path);
}

/**
 * The parts of a task a file can be about: its clauses, split at conjunctions and
 * punctuation ("Add GitHub OAuth login", "reuses the existing session store", "links GitHub
 * identities to users").
 *
 * @example
 * taskClauses("Add OAuth login that reuses the session store") // ["Add OAuth login", "reuses the session store"]
 */
export function taskClauses(task: string): string[] {
  return task
    .slice(0, 1_000)
    .split(/\b(?:that|which|and|but|so|while|then|when|whose|where)\b|[,;:()[\]\n]|\s[-–—]\s/i)
    .map((c) => c.replace(/\s+/g, " ").trim())
    .filter((c) => /[A-Za-z]{3}/.test(c));
}

/**
 * The clause of the task a file is about: the one holding most of the file's evidence,
 * definitions and names counting more than mentions; null when none holds any.
 *
 * @example
 * clauseFor(storeFile, ["Add OAuth login", "reuses the session store"]) // "reuses the session store"
 */
export function clauseFor(f: RankedFile | undefined, clauses: readonly string[]): string | null {
  if (f === undefined || clauses.length < 2) return null;
  const weight = new Map<string, number>();
  const add = (term: string, w: number) => weight.set(term, (weight.get(term) ?? 0) + w);
  for (const d of f.defines) add(d.term, 3);
  for (const p of f.pathTerms) add(p.term, p.where === "file" ? 3 : 1);
  for (const h of f.termHits) add(h.term, 1);
  let best: string | null = null;
  let bestScore = 0;
  for (const clause of clauses) {
    const words = splitIdentifier(clause.replace(/`/g, " "));
    let score = 0;
    for (const [term, w] of weight)
      if (
        words.some(
          (word) =>
            word === term || stem(word) === term || (term.length >= 4 && word.startsWith(term)),
        )
      )
        score += w;
    if (score > bestScore) {
      best = clause;
      bestScore = score;
    }
  }
  return best;
}

/** Words that say a part of the task is reused as it is. */
export const REUSE = /\b(reuses?|reusing|uses?|using|existing|keeps?|via|through)\b/i;
