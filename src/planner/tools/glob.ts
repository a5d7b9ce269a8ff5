import picomatch from "picomatch/posix";
import { z } from "zod";
import { parseRepoPath, REPO_ROOT } from "../paths.ts";
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
 * Finds repository files by glob (picomatch, dotfiles included), sorted by path.
 *
 * @example
 * await globTool.run({ pattern: "**\/*.test.ts" }, ctx) // "src/a.test.ts\nsrc/b.test.ts"
 */
export const globTool: Tool = {
  spec: {
    name: "Glob",
    description: `Finds repository files whose paths match a glob pattern (picomatch syntax: *, **, ?, [abc], {a,b}). Returns repository-relative paths sorted by path, at most ${GLOB_MAX_RESULTS}; the total is reported when there are more.`,
    input_schema: modelSchema(GlobInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = GlobInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Glob", parsed.error));
    const dir = parseRepoPath(parsed.data.path ?? "", { dir: true });
    if (parsed.data.path !== undefined && parsed.data.path !== "" && !dir.ok)
      return fail(dir.reason);
    const base = dir.ok ? dir.path : "";
    if (!(await ctx.workspace.isDirectory(base)))
      return fail(`No such folder: ${REPO_ROOT}/${base}`);

    let pattern = parsed.data.pattern;
    if (pattern.startsWith(`${REPO_ROOT}/`)) pattern = pattern.slice(REPO_ROOT.length + 1);
    if (pattern.startsWith("/")) {
      return fail(
        `The pattern "${pattern}" is absolute: write it relative to the folder in "path".`,
      );
    }
    const isMatch = picomatch(pattern, { dot: true });
    const prefix = base === "" ? "" : `${base}/`;
    const matches = (await ctx.workspace.listRepoFiles()).filter(
      (p) => p.startsWith(prefix) && isMatch(p.slice(prefix.length)),
    );
    return ok(formatGlobResult(matches));
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
  const shown = matches.slice(0, GLOB_MAX_RESULTS).join("\n");
  return matches.length > GLOB_MAX_RESULTS
    ? `${shown}\n(Showing the first ${GLOB_MAX_RESULTS} of ${matches.length} files, sorted by path. Narrow the pattern or pass a path to see the rest.)`
    : shown;
}
