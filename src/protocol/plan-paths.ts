/**
 * Which repository files a markdown plan names, and how the files a remote execution changed
 * compare with them ("plan adherence"). Pure and shared: the review page, `planport status` and
 * the planner benchmark read plans with this one reader, so they agree on what a plan named.
 */

/** A file the plan names. */
export interface NamedFile {
  path: string;
  /** Not among the known files: a file the plan proposes to create. */
  isNew: boolean;
}

/**
 * Path-like runs of characters (letters and digits of any script, so `café.ts` is a path).
 * Everything else (spaces, backticks, quotes, parentheses, commas, `*`, `|`, `<`, `>`)
 * separates mentions. Linear: one pass of a character class.
 */
const PATH_RUN = /[\p{L}\p{N}_@.+~$#:=[\]/-]+/gu;
/** Extensions a proposed new file may have (source, templates, docs, config). */
const NEW_FILE_EXTENSION =
  /\.(js|mjs|cjs|jsx|ts|tsx|mts|cts|py|pyi|go|rs|rb|java|kt|scala|c|h|cc|cpp|hpp|cs|php|swift|vue|svelte|sql|html?|erb|liquid|tmpl|gotmpl|css|scss|sass|less|sh|proto|graphql|md|mdx|rst|json|ya?ml|toml)$/i;

/**
 * The files `plan` names, first mention first, each once. A mention is a known path
 * (`knownFiles`: the snapshot's files, or the files a diff changed) as it appears there,
 * possibly with a `./` or `/` in front and a line reference behind (`:12`, `:12-30`, `#L12`,
 * `::symbol`); or a proposed new file: a relative path with at least one folder and a known
 * extension that is not among the known files (a bare name like `index.ts` that is not known
 * is not counted: it may mean any such file).
 *
 * @example
 * filesNamedByPlan("Edit `src/a.ts:12`, then `src/a.ts` and add `src/b/new.ts`.", new Set(["src/a.ts"]));
 * // [{ path: "src/a.ts", isNew: false }, { path: "src/b/new.ts", isNew: true }]
 */
export function filesNamedByPlan(plan: string, knownFiles: ReadonlySet<string>): NamedFile[] {
  const named: NamedFile[] = [];
  const seen = new Set<string>();
  for (const match of plan.matchAll(PATH_RUN)) {
    const file = mentionedFile(match[0], knownFiles);
    if (file === null || seen.has(file.path)) continue;
    seen.add(file.path);
    named.push(file);
  }
  return named;
}

/**
 * The files a plan names first on a line, in order, each once: a stricter reading of the same
 * plan that ignores paths cited as evidence further along a line (`1. \`a.ts\` — imported by
 * \`b.ts\`` names only `a.ts`).
 *
 * @example
 * filesLeadingLines("1. `a.ts` — used by `b.ts`\n2. `c.ts`", new Set(["a.ts", "b.ts", "c.ts"]));
 * // [{ path: "a.ts", isNew: false }, { path: "c.ts", isNew: false }]
 */
export function filesLeadingLines(plan: string, knownFiles: ReadonlySet<string>): NamedFile[] {
  const named: NamedFile[] = [];
  const seen = new Set<string>();
  for (const line of plan.split("\n")) {
    const first = filesNamedByPlan(line, knownFiles)[0];
    if (first === undefined || seen.has(first.path)) continue;
    seen.add(first.path);
    named.push(first);
  }
  return named;
}

/** How the files a remote execution changed compare with the files its approved plan named. */
export interface PlanAdherence {
  /** Changed files the plan named, in path order. */
  planned: string[];
  /** Changed files the plan did not name, in path order. */
  unplanned: string[];
  /** Files the plan named (existing or proposed) that the execution did not change, plan order. */
  untouched: string[];
}

/**
 * Compares the changed files with the files `plan` names. A changed file counts as planned
 * when the plan mentions it as a path (with or without a line reference): the changed files
 * themselves are the known files, so a plan's `src/x.ts:12` matches a changed `src/x.ts`.
 *
 * @example
 * planAdherence("Edit `src/a.ts` and `src/b.ts`.", ["src/a.ts", "src/x.ts"]);
 * // { planned: ["src/a.ts"], unplanned: ["src/x.ts"], untouched: ["src/b.ts"] }
 */
export function planAdherence(plan: string, changedFiles: readonly string[]): PlanAdherence {
  const changed = new Set(changedFiles);
  const named = filesNamedByPlan(plan, changed);
  const namedPaths = new Set(named.map((f) => f.path));
  const sorted = [...changed].sort();
  return {
    planned: sorted.filter((p) => namedPaths.has(p)),
    unplanned: sorted.filter((p) => !namedPaths.has(p)),
    untouched: named.filter((f) => !changed.has(f.path)).map((f) => f.path),
  };
}

/**
 * The adherence as one sentence, the same on the review page and in `planport status`. The
 * unplanned files are listed (at most `maxListed`, then a count); the caller neutralises them
 * for its medium (HTML escaping, terminal sanitising).
 *
 * @example
 * adherenceSentence({ planned: ["a", "b", "c"], unplanned: ["src/x.ts"], untouched: [] })
 * // "3 files changed as planned, 1 not in the plan: src/x.ts"
 */
export function adherenceSentence(adherence: PlanAdherence, maxListed = 10): string {
  const { planned, unplanned } = adherence;
  if (planned.length === 0 && unplanned.length === 0) return "No files were changed";
  const head = `${planned.length} ${planned.length === 1 ? "file" : "files"} changed as planned`;
  if (unplanned.length === 0) return `${head}, none outside the plan`;
  const listed = unplanned.slice(0, maxListed).join(", ");
  const more = unplanned.length > maxListed ? ` and ${unplanned.length - maxListed} more` : "";
  return `${head}, ${unplanned.length} not in the plan: ${listed}${more}`;
}

function mentionedFile(run: string, knownFiles: ReadonlySet<string>): NamedFile | null {
  const text = trimMention(run);
  if (text === "") return null;
  const candidates = [text, cutAt(text, "#"), cutAt(text, ":"), cutAt(cutAt(text, "#"), ":")];
  for (const candidate of candidates) {
    const path = trimMention(candidate);
    if (knownFiles.has(path)) return { path, isNew: false };
  }
  const path = trimMention(cutAt(cutAt(text, "#"), ":"));
  if (
    path.includes("/") &&
    !path.includes("//") &&
    !path.startsWith("../") &&
    !path.includes("/../") &&
    NEW_FILE_EXTENSION.test(path) &&
    !/[[\]=$~]/.test(path)
  ) {
    return { path, isNew: true };
  }
  return null;
}

/** Drops what surrounds a path in prose: brackets, sentence punctuation, `./` and `/`. */
function trimMention(text: string): string {
  let trimmed = text;
  for (;;) {
    const before = trimmed;
    trimmed = trimmed.replace(/^[[\](]+/, "").replace(/[.,:;!?\])]+$/, "");
    trimmed = trimmed.replace(/^\.\//, "").replace(/^\/+/, "");
    if (trimmed === before) return trimmed;
  }
}

function cutAt(text: string, separator: string): string {
  const at = text.indexOf(separator);
  return at === -1 ? text : text.slice(0, at);
}
