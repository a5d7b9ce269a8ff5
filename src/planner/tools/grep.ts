import { z } from "zod";
import { err, ok as okResult, type Result } from "../../protocol/index.ts";
import { displayRepoPath, parseRepoPath } from "../paths.ts";
import { compileGlob, GLOB_SYNTAX } from "./glob-pattern.ts";
import { compileLinePattern, GREP_SYNTAX, type LinePattern } from "./line-pattern.ts";
import { matchingLines } from "./line-scan.ts";
import { SCAN_BUDGET_MS, ScanBudget } from "./scan-budget.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  ok,
  type Tool,
  type ToolContext,
} from "./types.ts";

/** Entries (files, counts or lines) one Grep returns unless `head_limit` says otherwise. */
export const GREP_DEFAULT_LIMIT = 250;
export const GREP_MAX_LIMIT = 1_000;
/** Most characters one Grep returns. */
export const GREP_MAX_CHARS = 40_000;
/** Longest line shown in content mode. */
export const GREP_MAX_LINE_CHARS = 500;
/** A file whose first bytes hold a NUL is treated as binary and skipped. */
const BINARY_PROBE_CHARS = 8_000;

const contextLines = z.number().int().min(0).max(20).optional();

export const GrepInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(1_000)
    .describe(`A regular expression to search file contents for, line by line: ${GREP_SYNTAX}.`),
  path: z
    .string()
    .max(1_024)
    .optional()
    .describe(
      "A file or folder to search (relative to the repository root, or under /repo). Defaults to the whole repository.",
    ),
  glob: z
    .string()
    .max(1_000)
    .optional()
    .describe(
      `Only search files matching this glob, e.g. "*.ts" (matched against file names) or "src/**/*.{ts,tsx}" (matched against paths). Supported: ${GLOB_SYNTAX}.`,
    ),
  output_mode: z
    .enum(["files_with_matches", "content", "count"])
    .optional()
    .describe(
      '"files_with_matches" (default): paths of matching files; "content": matching lines as path:line:text; "count": path:number of matching lines.',
    ),
  "-i": z.boolean().optional().describe("Case-insensitive search."),
  "-n": z.boolean().optional().describe("Show line numbers in content mode (default true)."),
  "-A": contextLines.describe("Lines of context after each match (content mode)."),
  "-B": contextLines.describe("Lines of context before each match (content mode)."),
  "-C": contextLines.describe("Lines of context before and after each match (content mode)."),
  head_limit: z
    .number()
    .int()
    .min(1)
    .max(GREP_MAX_LIMIT)
    .optional()
    .describe(`Return at most this many entries (default ${GREP_DEFAULT_LIMIT}).`),
});
type GrepArgs = z.infer<typeof GrepInput>;

/**
 * Searches repository file contents with a regular expression, file by file (the snapshot is
 * streamed, so memory stays bounded whatever the repository's size). Patterns run in linear
 * time (`line-pattern.ts`), the scan yields to other work and stops at its limit with what it
 * found so far: {@link SCAN_BUDGET_MS} of wall time for a model's pattern, so no pattern can
 * hold the worker; counted work for the offline planner's own (scan-budget.ts).
 */
export const grepTool: Tool = {
  spec: {
    name: "Grep",
    description: `Searches the contents of repository files with a regular expression, line by line. Syntax: ${GREP_SYNTAX}. Filter files with glob or path; choose output_mode files_with_matches (default), content (path:line:text, with -A/-B/-C context) or count. Results are sorted by path and capped at ${GREP_DEFAULT_LIMIT} entries (head_limit up to ${GREP_MAX_LIMIT}); a search that runs longer than ${SCAN_BUDGET_MS / 1000} s answers with what it found so far.`,
    input_schema: modelSchema(GrepInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = GrepInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Grep", parsed.error));
    const args = parsed.data;

    const pattern = compileLinePattern(args.pattern, {
      ignoreCase: args["-i"] ?? false,
      // The offline planner's patterns are planport's own (work-limited scans): a faster engine
      // that answers exactly as RE2 may test them (trusted-pattern.ts).
      trusted: ctx.scanLimit?.kind === "work",
    });
    if (!pattern.ok) return fail(pattern.error);
    const scope = await resolveScope(args, ctx);
    if (!scope.ok) return fail(scope.error);
    const budget = new ScanBudget(ctx.scanLimit);
    return ok(await search(ctx, pattern.value, args, scope.value, budget));
  },
};

async function resolveScope(
  args: GrepArgs,
  ctx: ToolContext,
): Promise<Result<(path: string) => boolean, string>> {
  let base = "";
  let singleFile: string | null = null;
  if (args.path !== undefined && args.path !== "") {
    const parsed = parseRepoPath(args.path, { dir: true });
    if (!parsed.ok) return parsed;
    const files = await ctx.workspace.listRepoFiles();
    if (files.includes(parsed.value)) singleFile = parsed.value;
    else if (await ctx.workspace.isDirectory(parsed.value)) base = parsed.value;
    else return err(`No such file or folder: ${displayRepoPath(parsed.value)}`);
  }
  const glob = args.glob ? compileGlob(args.glob) : null;
  if (glob !== null && !glob.ok) return glob;
  const globMatch = glob?.value ?? null;
  const globOnPath = args.glob?.includes("/") ?? false;
  const prefix = base === "" ? "" : `${base}/`;
  return okResult((path: string) => {
    if (singleFile !== null) return path === singleFile;
    if (!path.startsWith(prefix)) return false;
    if (globMatch === null) return true;
    const subject = globOnPath ? path.slice(prefix.length) : path.slice(path.lastIndexOf("/") + 1);
    return globMatch(subject);
  });
}

async function search(
  ctx: ToolContext,
  pattern: LinePattern,
  args: GrepArgs,
  accept: (path: string) => boolean,
  budget: ScanBudget,
): Promise<string> {
  const mode = args.output_mode ?? "files_with_matches";
  const limit = args.head_limit ?? GREP_DEFAULT_LIMIT;
  const before = args["-B"] ?? args["-C"] ?? 0;
  const after = args["-A"] ?? args["-C"] ?? 0;
  const numbered = args["-n"] ?? true;

  const entries: string[] = [];
  let chars = 0;
  let files = 0;
  let matches = 0;
  let cut = false;
  /** The file the scan's limit was reached at (it and the files after it were not searched). */
  let stoppedAt: string | null = null;
  let longLines = 0;
  let longLineChars = Number.POSITIVE_INFINITY;

  for await (const file of ctx.workspace.scanRepo(accept)) {
    if (file.text.slice(0, BINARY_PROBE_CHARS).includes("\u0000")) continue;
    if (!budget.admit(file.text.length)) {
      stoppedAt = file.path;
      break;
    }
    const found = await matchingLines(file.text, pattern, budget);
    if (found === null) {
      stoppedAt = file.path;
      break;
    }
    longLines += found.longLines;
    if (found.longLines > 0) longLineChars = Math.min(longLineChars, found.longLineChars);
    const hits = found.lines;
    if (hits.length === 0) continue;
    files++;
    matches += hits.length;
    if (mode === "content") {
      const lines = file.text.split("\n");
      for (const row of contentRows(file.path, lines, hits, before, after, numbered)) {
        if (entries.length >= limit || chars + row.length > GREP_MAX_CHARS) {
          cut = true;
          break;
        }
        entries.push(row);
        chars += row.length + 1;
      }
      if (cut) break;
      continue;
    }
    const row = mode === "count" ? `${file.path}:${hits.length}` : file.path;
    if (entries.length < limit && chars + row.length <= GREP_MAX_CHARS) {
      entries.push(row);
      chars += row.length + 1;
    } else cut = true;
  }

  const stopped =
    stoppedAt === null
      ? ""
      : `(The search reached its ${budget.describe()} at ${stoppedAt}: that file and the ones after it in path order were not searched. Narrow the search with path or glob, or simplify the pattern.)`;
  const notes = [
    ...(longLines === 0
      ? []
      : [
          `(${longLines} very long line${longLines === 1 ? " was" : "s were"} searched in ${longLines === 1 ? "its" : "their"} first ${longLineChars.toLocaleString("en-US")} characters only, so a match further along ${longLines === 1 ? "it" : "them"} was not seen.)`,
        ]),
    ...(stopped === "" ? [] : [stopped]),
  ];
  const tail = notes.map((n) => `\n${n}`).join("");
  if (files === 0) return `No matches found${tail}`;
  if (mode === "content") {
    return cut
      ? `${entries.join("\n")}\n(Output cut after ${entries.length} lines; narrow the search with path or glob, or raise head_limit.)${tail}`
      : `${entries.join("\n")}${tail}`;
  }
  if (mode === "count") {
    const total = `Found ${matches} matching line${matches === 1 ? "" : "s"} in ${files} file${files === 1 ? "" : "s"}`;
    return cut
      ? `${entries.join("\n")}\n(${total}; showing the first ${entries.length} files.)${tail}`
      : `${entries.join("\n")}\n(${total}.)${tail}`;
  }
  const head = `Found ${files} file${files === 1 ? "" : "s"}`;
  return cut
    ? `${head}\n${entries.join("\n")}\n(Showing the first ${entries.length} of ${files} files, sorted by path.)${tail}`
    : `${head}\n${entries.join("\n")}${tail}`;
}

/** grep-style rows: `path:n:text` for matches, `path-n-text` for context, `--` between groups. */
function contentRows(
  path: string,
  lines: readonly string[],
  hits: readonly number[],
  before: number,
  after: number,
  numbered: boolean,
): string[] {
  const hitSet = new Set(hits);
  const rows: string[] = [];
  let lastShown = -1;
  for (const hit of hits) {
    const from = Math.max(0, hit - before, lastShown + 1);
    const to = Math.min(lines.length - 1, hit + after);
    if (lastShown >= 0 && from > lastShown + 1 && (before > 0 || after > 0)) rows.push("--");
    for (let i = from; i <= to; i++) {
      let text = (lines[i] ?? "").replace(/\r$/, "");
      if (text.length > GREP_MAX_LINE_CHARS)
        text = `${text.slice(0, GREP_MAX_LINE_CHARS)}… [line cut]`;
      const sep = hitSet.has(i) ? ":" : "-";
      rows.push(numbered ? `${path}${sep}${i + 1}${sep}${text}` : `${path}${sep}${text}`);
    }
    lastShown = Math.max(lastShown, to);
  }
  return rows;
}
