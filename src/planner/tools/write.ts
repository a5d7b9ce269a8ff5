import { z } from "zod";
import { displayRepoPath } from "../paths.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  ok,
  type Tool,
  type ToolContext,
} from "./types.ts";

/** Largest file one Write (or Edit) may produce, in characters; SQLite rows stay well below 2 MB. */
export const MAX_WRITE_CHARS = 1_000_000;

export const WriteInput = z.strictObject({
  file_path: z
    .string()
    .describe(
      "The file to write. In plan mode: exactly the plan file path. After approval: a repository path.",
    ),
  content: z.string().max(MAX_WRITE_CHARS).describe("The complete new content of the file."),
});

/**
 * Writes a whole file: the plan file in plan mode, a repository file (overlay) after approval.
 * Where it may write was decided by the permission check; the tool only carries it out.
 */
export const writeTool: Tool = {
  spec: {
    name: "Write",
    description:
      "Writes a file, replacing its content. In plan mode the only writable file is the plan file (use its exact path); after the plan is approved, repository files can be created or overwritten. Prefer Edit for changes to existing files.",
    input_schema: modelSchema(WriteInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = WriteInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Write", parsed.error));
    const { content } = parsed.data;
    const target = ctx.target;
    if (target === undefined) return fail("Write was not permitted; nothing was written.");
    if (target.kind === "plan") {
      const existed = ctx.workspace.readPlan() !== null;
      return ok(
        existed
          ? `The plan file ${ctx.planPath} has been updated (${content.length} characters).`
          : `The plan file ${ctx.planPath} has been created (${content.length} characters).`,
        () => {
          ctx.port.writePlan(content);
        },
      );
    }
    const existed = (await ctx.workspace.readRepoFile(target.path)) !== null;
    const shown = displayRepoPath(target.path);
    return ok(
      existed ? `The file ${shown} has been updated.` : `File created successfully at: ${shown}`,
      () => ctx.port.writeOverlay(target.path, content),
    );
  },
};
