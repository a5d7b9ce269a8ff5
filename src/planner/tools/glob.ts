import { z } from "zod";
import { parseRepoPath, REPO_ROOT } from "../paths.ts";
import { compileGlob, GLOB_SYNTAX } from "./glob-pattern.ts";
import { SCAN_BUDGET_MS, ScanBudget } from "./scan-budget.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  ok,
  type Tool,
  type ToolContext,
} from "./types.ts";

/** Most paths one Glob returns. */
export const GLOB_MAX_RESULTS = 500;
/** Most characters one Glob returns (paths may be up to 1,024 characters each). */
export const GLOB_MAX_CHARS = 40_000;

export const GlobInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(1_000)
    .describe(
      'A glob pattern, e.g. "**/*.ts" or "src/**/{auth,session}*". Matched against paths relative to `path`.',
    ),
  path: z
    .string()
    .max(1_024)
    .optional()
    .describe(
      "The folder to search in (relative to the repository root, or under /repo). Defaults to the root.",
    ),
});

/**
 * Finds repository files by glob (dotfiles included), sorted by path. Globs are translated to
 * RE2 and matched in linear time (`glob-pattern.ts`); the match loop yields to other work and
 * stops at its limit with what it found so far ({@link SCAN_BUDGET_MS} of wall time for a
 * model's pattern, counted work for the offline planner's: scan-budget.ts).
 *
 * @example
 * await globTool.run({ pattern: "**\/*.test.ts" }, ctx) // "src/a.test.ts\nsrc/b.test.ts"
 */
export const globTool: Tool = {
  spec: {
    name: "Glob",
    description: `Finds repository files whose paths match a glob pattern. Supported: ${GLOB_SYNTAX} (no extglobs or negation). Returns repository-relative paths sorted by path, at most ${GLOB_MAX_RESULTS}; the total is reported when there are more.`,
    input_schema: modelSchema(GlobInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = GlobInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Glob", parsed.error));
    const dir = parseRepoPath(parsed.data.path ?? "", { dir: true });
    if (parsed.data.path !== undefined && parsed.data.path !== "" && !dir.ok)
      return fail(dir.error);
    const base = dir.ok ? dir.value : "";
    if (!(await ctx.workspace.isDirectory(base)))
      return fail(`No such folder: ${REPO_ROOT}/${base}`);

    let pattern = parsed.data.pattern;
    if (pattern.startsWith(`${REPO_ROOT}/`)) pattern = pattern.slice(REPO_ROOT.length + 1);
    if (pattern.startsWith("/")) {
      return fail(
        `The pattern "${pattern}" is absolute: write it relative to the folder in "path".`,
      );
    }
    const glob = compileGlob(pattern);
    if (!glob.ok) return fail(glob.error);
    const isMatch = glob.value;
    const prefix = base === "" ? "" : `${base}/`;
    const budget = new ScanBudget(ctx.scanLimit);
    const matches: string[] = [];
    let stoppedAt: string | null = null;
    for (const path of await ctx.workspace.listRepoFiles()) {
      if (!path.startsWith(prefix)) continue;
      if (!budget.admit(path.length) || !(await budget.spend(path.length))) {
        stoppedAt = path;
        break;
      }
      if (isMatch(path.slice(prefix.length))) matches.push(path);
    }
    const answer = formatGlobResult(matches);
    return ok(
      stoppedAt === null
        ? answer
        : `${answer}\n(The match reached its ${budget.describe()} at ${stoppedAt}: that path and the ones after it were not tried. Narrow the pattern or pass a path.)`,
    );
  },
};

/**
 * The Glob answer: one path per line, with the total when capped.
 *
 * @example
 * formatGlobResult(["a.ts", "b.ts"]) // "a.ts\nb.ts"
 */
export function formatGlobResult(matches: readonly string[]): string {
  if (matches.length === 0) return "No files found";
  const shown: string[] = [];
  let chars = 0;
  for (const path of matches) {
    if (shown.length >= GLOB_MAX_RESULTS || chars + path.length > GLOB_MAX_CHARS) break;
    shown.push(path);
    chars += path.length + 1;
  }
  return shown.length < matches.length
    ? `${shown.join("\n")}\n(Showing the first ${shown.length} of ${matches.length} files, sorted by path. Narrow the pattern or pass a path to see the rest.)`
    : shown.join("\n");
}
