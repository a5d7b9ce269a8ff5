import { z } from "zod";
import { displayRepoPath, PLANS_DIR, parseRepoPath } from "../paths.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  ok,
  type Tool,
  type ToolContext,
} from "./types.ts";

/** Most entries one LS lists. */
export const LS_MAX_ENTRIES = 1_000;

export const LsInput = z.strictObject({
  path: z
    .string()
    .max(1_024)
    .optional()
    .describe(
      "The folder to list (relative to the repository root, under /repo, or /plans). Defaults to the repository root.",
    ),
});

/**
 * Lists a folder's direct children: folders first (with a trailing slash), then files.
 *
 * @example
 * await lsTool.run({ path: "src" }, ctx) // "/repo/src/\n  auth/\n  index.ts"
 */
export const lsTool: Tool = {
  spec: {
    name: "LS",
    description: `Lists the files and folders directly inside a folder of the workspace (folders end with "/"). Lists at most ${LS_MAX_ENTRIES} entries. Use Glob to find files by pattern.`,
    input_schema: modelSchema(LsInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = LsInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("LS", parsed.error));
    const raw = parsed.data.path ?? "";
    if (raw === PLANS_DIR || raw === `${PLANS_DIR}/`) {
      const name = ctx.planPath.slice(PLANS_DIR.length + 1);
      return ok(
        ctx.workspace.readPlan() === null
          ? `${PLANS_DIR}/\n(empty: the plan file ${ctx.planPath} has not been written yet)`
          : `${PLANS_DIR}/\n  ${name}`,
      );
    }
    const dir = parseRepoPath(raw === "" ? "." : raw, { dir: true });
    if (!dir.ok) return fail(dir.error);
    const files = await ctx.workspace.listRepoFiles();
    const prefix = dir.value === "" ? "" : `${dir.value}/`;
    const folders = new Set<string>();
    const direct: string[] = [];
    for (const path of files) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash === -1) direct.push(rest);
      else folders.add(`${rest.slice(0, slash)}/`);
    }
    if (folders.size === 0 && direct.length === 0) {
      if (files.includes(dir.value))
        return fail(`${displayRepoPath(dir.value)} is a file, not a folder. Use Read.`);
      if (dir.value !== "") return fail(`No such folder: ${displayRepoPath(dir.value)}`);
      return ok(
        `${displayRepoPath("")}/\n(empty: no repository snapshot is attached or it holds no files)`,
      );
    }
    const entries = [...[...folders].sort(), ...direct.sort()];
    const shown = entries.slice(0, LS_MAX_ENTRIES).map((e) => `  ${e}`);
    if (entries.length > LS_MAX_ENTRIES) {
      shown.push(
        `(Showing ${LS_MAX_ENTRIES} of ${entries.length} entries; use Glob to narrow down.)`,
      );
    }
    return ok(`${displayRepoPath(dir.value)}/\n${shown.join("\n")}`);
  },
};
