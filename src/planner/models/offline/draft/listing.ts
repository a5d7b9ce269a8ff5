import type { Steering } from "../feedback/steering.ts";
import type { FileKind } from "../feedback/targets.ts";
import type { RankedFile } from "../rank/ranking.ts";
import { type Chosen, importGraph, MAX_LISTED } from "../rank/selection.ts";
import { migrationFolders, newFilePath, nextMigrationPath } from "../repository/conventions.ts";
import { type Knowledge, searchOf } from "../repository/knowledge.ts";
import { dirOf, extensionOf, pathKind } from "../repository/paths.ts";
import { taskKind } from "../task/intent.ts";
import type { Term } from "../task/terms.ts";
import { words } from "./file-notes.ts";
import { applyKinds } from "./kinds.ts";

/**
 * The files a plan lists and the new files it proposes (draft.ts writes the plan around them),
 * with the rules for where a new file goes: the next migration, a sibling in a family folder,
 * the file that registers it. Pure.
 */

/** The files a plan lists, as data (what a revision compares with the previous plan's). */
export interface Listing {
  changes: string[];
  checks: string[];
  tests: string[];
  newFiles: { path: string; why: string }[];
  /** A new file → the listed file that registers it. */
  registrar: Map<string, string>;
  /** Why each file a kind of file the reviewer asked for brought in is listed. */
  added: Map<string, string>;
  /** Kinds the reviewer asked for that the repository has no file for, and why. */
  missing: { kind: FileKind; why: string }[];
  /** Kinds the reviewer asked to leave out. */
  dropped: ReadonlySet<FileKind>;
}

/** Folder names that hold a family of similar files (a new one goes beside them). */
const FAMILY =
  /^(routes?|handlers?|controllers?|commands?|cmds?|middlewares?|plugins?|providers?|strategies|services|models|migrations|components|pages|views|api|endpoints|adapters|transports|drivers|parsers|extractors|rules|filters|tags|hooks|resolvers|loaders|backends|formatters|renderers|converters|modules|extensions|integrations|jobs|workers|tasks|actions|reducers|stores|schemas|serializers|validators|widgets|lexers|encoders|decoders|matchers|generators|checks|linters|sources|sinks|channels)$/i;

/**
 * Which files the plan lists and the new files it proposes. Pure: the same facts give the
 * same listing, so a revision can recompute the previous plan's and say what changed.
 */
export function listing(
  k: Knowledge,
  s: Steering,
  ranking: readonly RankedFile[],
  chosen: Chosen,
): Listing {
  const migrations = migrationFolders(k.known);
  const migrationDirs = new Set(migrations.map((m) => m.dir));
  const kinds = applyKinds(chosen, k, s, ranking);
  const changes = kinds.changes.filter((p) => !migrationDirs.has(dirOf(p)));
  const checks = kinds.checks.filter((p) => !migrationDirs.has(dirOf(p)));
  const newFiles: { path: string; why: string }[] = [];
  const registrar = new Map<string, string>();

  const folder = migrations[0];
  if (s.wantsMigration && folder !== undefined) {
    const path = nextMigrationPath(folder, migrationWords(s, ungrounded(s, k)));
    const previous = folder.files[folder.files.length - 1]!;
    const table = tableName(s);
    newFiles.push({
      path,
      why: `the next migration after \`${previous}\`, named like it${table ? `: it creates the \`${table}\` table, written the way \`${previous}\` writes its tables` : ""} (applied migrations are never edited)`,
    });
  }

  const kind = taskKind(s.task);
  const missing = ungrounded(s, k);
  // "Only Y" leaves no room for a file the reviewer did not name.
  if (kind === "add" && missing.length > 0 && s.only === null) {
    const home = homeFolder(changes, k);
    if (home !== null) {
      const path = newFilePath(home.dir, home.siblings, missing.slice(0, 2));
      if (!k.known.has(path) && !newFiles.some((n) => n.path === path)) {
        const model = ranking.find((f) => dirOf(f.path) === home.dir && !f.isTest)?.path;
        newFiles.push({
          path,
          why: `nothing in the repository covers ${words(missing.slice(0, 2).map((w) => `"${w}"`))} yet; it goes beside the ${home.siblings.length} files of \`${home.dir || "."}/\`${model ? `, modelled on \`${model}\`` : ""}`,
        });
        const wiredIn = registrarOf(home.dir, path, k);
        if (wiredIn !== null) {
          registrar.set(path, wiredIn);
          if (!changes.includes(wiredIn)) {
            changes.push(wiredIn);
            const at = checks.indexOf(wiredIn);
            if (at !== -1) checks.splice(at, 1);
            else if (changes.length + checks.length > MAX_LISTED) checks.pop();
          }
        }
      }
    }
  }
  for (const named of s.unknownNamed) {
    if (!k.known.has(named) && !newFiles.some((n) => n.path === named))
      newFiles.push({ path: named, why: "named in your feedback; it does not exist yet" });
  }
  for (const n of kinds.newFiles) if (!newFiles.some((x) => x.path === n.path)) newFiles.push(n);
  return {
    changes,
    checks,
    tests: kinds.tests,
    newFiles,
    registrar,
    added: kinds.added,
    missing: kinds.missing,
    dropped: kinds.dropped,
  };
}

/**
 * Terms of the task no file mentions or is named after: what the change adds (their words as
 * the task wrote them).
 */
export function ungrounded(s: Steering, k: Knowledge): string[] {
  return s.terms
    .filter((x) => !s.feedbackTerms.has(x.text) && x.text.length >= 4 && x.text !== "migr")
    .filter((x) => {
      const found = searchOf(k, x);
      return found !== undefined && (found.hits?.size ?? 0) + (found.pathMatches?.size ?? 0) === 0;
    })
    .map((x) => x.surface ?? x.text);
}

/** Words a new migration is named with: the table the input names, else what the change adds. */
function migrationWords(s: Steering, missing: readonly string[]): string[] {
  const generic =
    /^(migrations?|migrate|database|db|schema|new|add|adds|also|a|an|the|for|to|of|with|and)$/i;
  for (const input of [...s.notes].reverse().concat(s.task)) {
    const m = /((?:[A-Za-z][\w-]*\s+){1,3})(?:table|tables|column|columns)\b/i.exec(input);
    if (m) {
      const found = m[1]!
        .trim()
        .split(/\s+/)
        .filter((w) => !generic.test(w))
        .map((w) => w.toLowerCase().replace(/[^a-z0-9]/g, ""));
      if (found.length > 0) return found.slice(-3);
    }
  }
  if (missing.length > 0) return missing.slice(0, 3);
  return termWords(s.terms).slice(0, 3);
}

/** The table an input names ("the linked identities table" → `linked_identities`), if any. */
function tableName(s: Steering): string | null {
  const generic =
    /^(migrations?|migrate|database|db|schema|new|add|adds|also|a|an|the|for|to|of|with|and)$/i;
  for (const input of [...s.notes].reverse().concat(s.task)) {
    const m = /((?:[A-Za-z][\w-]*\s+){1,3})tables?\b/i.exec(input);
    if (!m) continue;
    const found = m[1]!
      .trim()
      .split(/\s+/)
      .filter((w) => !generic.test(w))
      .map((w) => w.toLowerCase().replace(/[^a-z0-9]/g, ""));
    if (found.length > 0) return found.slice(-3).join("_");
  }
  return null;
}

function termWords(terms: readonly Term[]): string[] {
  return terms
    .filter((t) => !/^migr|^databas|^schema|^table/.test(t.text) && !t.spellings)
    .map((t) => t.surface ?? t.text);
}

/**
 * The folder a new file goes to: the first file to change that sits among similar files (at
 * least two others of its extension, in a folder named for a family of such files first).
 */
function homeFolder(
  changes: readonly string[],
  k: Knowledge,
): { dir: string; siblings: string[] } | null {
  const candidates = changes.slice(0, 4).map((path) => {
    const dir = dirOf(path);
    const ext = extensionOf(path);
    const siblings = [...k.known]
      .filter((p) => dirOf(p) === dir && extensionOf(p) === ext && pathKind(p) === "source")
      .sort();
    return { dir, siblings, family: FAMILY.test(dir.split("/").pop() ?? "") };
  });
  const usable = candidates.filter((c) => c.siblings.length >= 3);
  return usable.find((c) => c.family) ?? null;
}

/** The file that imports the most files of `dir` (the place a new one is registered). */
function registrarOf(dir: string, created: string, k: Knowledge): string | null {
  const graph = importGraph(k);
  let best: string | null = null;
  let most = 0;
  for (const [from, targets] of [...graph].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (from === created || pathKind(from) !== "source") continue;
    const count = targets.filter((t) => dirOf(t) === dir && t !== from).length;
    if (count > most) {
      most = count;
      best = from;
    }
  }
  return best;
}
