import {
  type CallRecord,
  type GrepLine,
  globPaths,
  grepCounts,
  grepLines,
  lsEntries,
  readLines,
  type Transcript,
} from "../transcript.ts";
import { type Definition, parseDefinition } from "./definitions.ts";
import { MANIFEST_NAMES, README_NAMES } from "./manifests.ts";

/**
 * The second stage, the repository (repository/): what it is and what the planner's calls
 * found in it. This module gathers what they revealed; paths.ts, tests.ts and conventions.ts
 * read a path alone, manifests.ts the project's manifests, definitions.ts, imports.ts,
 * line-refs.ts and places.ts a file's code, and existing.ts finds what the task names that the
 * code already has. Of the other stages it imports only task/.
 *
 * Everything the offline planner's own tool calls have revealed, read back from their results
 * by call kind. Pure: a transcript in, facts out. What the user's inputs mean for the search
 * is feedback/steering.ts.
 */

export interface SearchResult {
  /** path → matching lines (Grep count), or null before the search ran. */
  hits: Map<string, number> | null;
  truncated: boolean;
  /** Paths whose name contains the term (Glob), or null before the search ran. */
  pathMatches: Set<string> | null;
}

export interface Knowledge {
  root: { dirs: string[]; files: string[] } | null;
  /** Reads made (including failed ones), by repository path. */
  attempted: Set<string>;
  /** Files read successfully: numbered lines. */
  texts: Map<string, [number, string][]>;
  /** Top-level folders counted: total files and the paths seen. */
  areas: Map<string, { total: number; paths: string[] }>;
  areaSurveyDone: boolean;
  searches: Map<string, SearchResult>;
  /** Terms whose definitions were searched for, and those whose search was cut short. */
  defsSearched: Set<string>;
  defsTruncated: Set<string>;
  /** path → the definitions the definition searches found there (names with a term in them). */
  defs: Map<string, Definition[]>;
  /** Paths an area hint's Glob found, or null when there was no such Glob. */
  hinted: string[] | null;
  /**
   * The lines a probe for the task's names found (every name at once), and whether its output
   * was cut; null before the probe ran (task/probes.ts `probeNames`).
   */
  probe: { rows: GrepLine[]; cut: boolean } | null;
  /** Paths the Glob for the file names the task mentions found; null before it ran. */
  named: string[] | null;
  /** The files holding each quoted message of the task (by its index), once searched. */
  messages: Map<number, string[]>;
  /** Import lines that mention the top candidates (who imports them). */
  importLines: GrepLine[];
  /** Folders listed for their naming conventions, with the files in them. */
  siblings: Map<string, string[]>;
  /** Every repository path any result mentioned. */
  known: Set<string>;
  question: CallRecord | null;
}

/** Folders at the root that are never an "area" of the code base. */
const NOT_AN_AREA =
  /^(\.|node_modules$|dist$|build$|out$|target$|vendor$|coverage$|__pycache__$|venv$)/;

/**
 * Collects what the offline planner's own earlier tool calls found (results read back by call kind).
 */
export function gatherKnowledge(t: Transcript): Knowledge {
  const k: Knowledge = {
    root: null,
    attempted: new Set(),
    texts: new Map(),
    areas: new Map(),
    areaSurveyDone: false,
    searches: new Map(),
    defsSearched: new Set(),
    defsTruncated: new Set(),
    defs: new Map(),
    hinted: null,
    probe: null,
    named: null,
    messages: new Map(),
    importLines: [],
    siblings: new Map(),
    known: new Set(),
    question: null,
  };
  for (const call of t.calls) {
    if (call.kind === "ask") k.question = call;
    if (call.kind === "area") k.areaSurveyDone = true;
    const path = typeof call.input.file_path === "string" ? call.input.file_path : null;
    if ((call.kind === "read" || call.kind === "manifest") && path !== null) k.attempted.add(path);
    const result = call.result;
    if (result === null) continue;
    const paths = () => (result.isError ? { paths: [], total: 0 } : globPaths(result.text));
    switch (call.kind) {
      case "ls":
        if (!result.isError) {
          k.root = lsEntries(result.text);
          for (const f of k.root.files) k.known.add(f);
        } else k.root = { dirs: [], files: [] };
        break;
      case "read":
      case "manifest":
        if (!result.isError && path !== null) {
          k.texts.set(path, readLines(result.text));
          k.known.add(path);
        }
        break;
      case "area": {
        const dir = String(call.input.pattern ?? "").replace(/\/\*\*.*$/, "");
        const found = paths();
        k.areas.set(dir, found);
        for (const p of found.paths) k.known.add(p);
        break;
      }
      case "grep":
      case "glob": {
        const term = call.term ?? "";
        const entry = k.searches.get(term) ?? { hits: null, truncated: false, pathMatches: null };
        if (call.kind === "grep") {
          const counts = result.isError
            ? { hits: new Map<string, number>(), truncated: false }
            : grepCounts(result.text);
          entry.hits = counts.hits;
          entry.truncated ||= counts.truncated;
          for (const p of counts.hits.keys()) k.known.add(p);
        } else {
          const found = paths();
          entry.pathMatches = new Set(found.paths);
          entry.truncated ||= found.total > found.paths.length;
          for (const p of found.paths) k.known.add(p);
        }
        k.searches.set(term, entry);
        break;
      }
      case "defs": {
        // The id's detail is `<group>_<term>.<term>…`.
        const terms = (call.term ?? "")
          .replace(/^\d+_/, "")
          .split(".")
          .filter((x) => x !== "");
        for (const term of terms) k.defsSearched.add(term);
        const found = result.isError ? { lines: [], truncated: false } : grepLines(result.text);
        if (found.truncated) for (const term of terms) k.defsTruncated.add(term);
        for (const row of found.lines) {
          k.known.add(row.path);
          addDefinition(k, row);
        }
        break;
      }
      case "probe": {
        const found = result.isError ? { lines: [], truncated: false } : grepLines(result.text);
        const probe = k.probe ?? { rows: [], cut: false };
        probe.rows.push(...found.lines);
        probe.cut ||= found.truncated;
        k.probe = probe;
        for (const row of found.lines) {
          k.known.add(row.path);
          addDefinition(k, row);
        }
        break;
      }
      case "named": {
        const found = paths();
        k.named = [...(k.named ?? []), ...found.paths];
        for (const p of found.paths) k.known.add(p);
        break;
      }
      case "message": {
        const index = Number(call.term ?? "-1");
        const found = result.isError
          ? { hits: new Map<string, number>() }
          : grepCounts(result.text);
        k.messages.set(index, [...found.hits.keys()]);
        for (const p of found.hits.keys()) k.known.add(p);
        break;
      }
      case "hint": {
        const found = paths();
        k.hinted = [...(k.hinted ?? []), ...found.paths];
        for (const p of found.paths) k.known.add(p);
        break;
      }
      case "callers": {
        const found = result.isError ? { lines: [] } : grepLines(result.text);
        for (const row of found.lines) {
          k.importLines.push(row);
          k.known.add(row.path);
        }
        break;
      }
      case "pairs": {
        const found = paths();
        for (const p of found.paths) k.known.add(p);
        break;
      }
      case "siblings": {
        const dir = typeof call.input.path === "string" ? call.input.path : "";
        const found = paths();
        k.siblings.set(dir, found.paths);
        for (const p of found.paths) k.known.add(p);
        break;
      }
      default:
        break;
    }
  }
  return k;
}

/**
 * What the searches found for a term: its content hits (from its own count search, or counted
 * by the task's probe), and the paths named after it.
 *
 * @example
 * searchOf(k, term)?.hits // Map { "src/flask/config.py" => 3 }
 */
export function searchOf(
  k: Knowledge,
  term: { text: string; counted?: ReadonlyMap<string, number> },
): SearchResult | undefined {
  const found = k.searches.get(term.text);
  if (term.counted === undefined) return found;
  return {
    hits: new Map(term.counted),
    truncated: false,
    pathMatches: found?.pathMatches ?? null,
  };
}

/** The definition a search row shows, if it shows one, into `k.defs`. */
function addDefinition(k: Knowledge, row: GrepLine): void {
  const d = parseDefinition(row.path, row.text);
  if (d === null) return;
  const list = k.defs.get(row.path) ?? [];
  if (!list.some((x) => x.line === row.line)) list.push({ ...d, line: row.line });
  k.defs.set(row.path, list);
}

/**
 * Top-level manifests and the README present at the root, in reading order.
 *
 * @example
 * manifestsToRead(k) // ["package.json", "Makefile", "README.md"]
 */
export function manifestsToRead(k: Knowledge): string[] {
  const files = new Set(k.root?.files ?? []);
  const manifests: string[] = MANIFEST_NAMES.filter((n) => files.has(n));
  const readme = README_NAMES.find((n) => files.has(n));
  return readme ? [...manifests, readme] : manifests;
}

/**
 * Top-level folders worth counting as areas of the code base.
 *
 * @example
 * areaDirs(k) // ["docs", "src", "test"]
 */
export function areaDirs(k: Knowledge): string[] {
  return (k.root?.dirs ?? []).filter((d) => !NOT_AN_AREA.test(d)).slice(0, 12);
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
