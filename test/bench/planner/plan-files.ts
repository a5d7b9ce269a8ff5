/**
 * Which repository files a plan names, in the order it first names them: the part of a plan
 * the benchmark scores. Pure, and independent of how a planner formats its plan: any mention
 * counts (in backticks, a link, a list, prose), with or without a line reference.
 */

/** A file the plan names. */
export interface NamedFile {
  path: string;
  /** Not in the snapshot: a file the plan proposes to create. */
  isNew: boolean;
}

/**
 * Path-like runs of characters. Everything else (spaces, backticks, quotes, parentheses,
 * commas, `*`, `|`, `<`, `>`) separates mentions.
 */
const PATH_RUN = /[A-Za-z0-9_@.+~$#:=[\]/-]+/g;
/** Extensions a proposed new file may have (source, templates, docs, config). */
const NEW_FILE_EXTENSION =
  /\.(js|mjs|cjs|jsx|ts|tsx|mts|cts|py|pyi|go|rs|rb|java|kt|scala|c|h|cc|cpp|hpp|cs|php|swift|vue|svelte|sql|html?|erb|liquid|tmpl|gotmpl|css|scss|sass|less|sh|proto|graphql|md|mdx|rst|json|ya?ml|toml)$/i;

/**
 * The files `plan` names, first mention first, each once. A mention is a repository path as
 * it appears in the snapshot (`repositoryFiles`), possibly with a `./` or `/` in front and a
 * line reference behind (`:12`, `:12-30`, `#L12`, `::symbol`); or a proposed new file: a
 * relative path with at least one folder and a known extension that the snapshot does not
 * hold (a bare name like `index.ts` that is not at the root is not counted: it may mean any
 * such file).
 *
 * @example
 * filesNamedByPlan("Edit `src/a.ts:12`, then `src/a.ts` and add `src/b/new.ts`.", new Set(["src/a.ts"]));
 * // [{ path: "src/a.ts", isNew: false }, { path: "src/b/new.ts", isNew: true }]
 */
export function filesNamedByPlan(plan: string, repositoryFiles: ReadonlySet<string>): NamedFile[] {
  const named: NamedFile[] = [];
  const seen = new Set<string>();
  for (const match of plan.matchAll(PATH_RUN)) {
    const file = mentionedFile(match[0], repositoryFiles);
    if (file === null || seen.has(file.path)) continue;
    seen.add(file.path);
    named.push(file);
  }
  return named;
}

/**
 * The files a plan names first on a line, in order, each once: a stricter reading of the same
 * plan that ignores paths cited as evidence further along a line (`1. \`a.ts\` — imported by
 * \`b.ts\``names only `a.ts`). Reported beside the main figure.
 *
 * @example
 * filesLeadingLines("1. `a.ts` — used by `b.ts`\n2. `c.ts`", new Set(["a.ts", "b.ts", "c.ts"]));
 * // [{ path: "a.ts", isNew: false }, { path: "c.ts", isNew: false }]
 */
export function filesLeadingLines(plan: string, repositoryFiles: ReadonlySet<string>): NamedFile[] {
  const named: NamedFile[] = [];
  const seen = new Set<string>();
  for (const line of plan.split("\n")) {
    const first = filesNamedByPlan(line, repositoryFiles)[0];
    if (first === undefined || seen.has(first.path)) continue;
    seen.add(first.path);
    named.push(first);
  }
  return named;
}

function mentionedFile(run: string, repositoryFiles: ReadonlySet<string>): NamedFile | null {
  const text = trimMention(run);
  if (text === "") return null;
  const candidates = [text, cutAt(text, "#"), cutAt(text, ":"), cutAt(cutAt(text, "#"), ":")];
  for (const candidate of candidates) {
    const path = trimMention(candidate);
    if (repositoryFiles.has(path)) return { path, isNew: false };
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
