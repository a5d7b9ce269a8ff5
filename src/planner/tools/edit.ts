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
import { MAX_WRITE_CHARS } from "./write.ts";

export const EditInput = z.strictObject({
  file_path: z
    .string()
    .describe(
      "The file to edit. In plan mode: exactly the plan file path. After approval: a repository path.",
    ),
  old_string: z.string().min(1).max(MAX_WRITE_CHARS).describe("The exact text to replace."),
  new_string: z
    .string()
    .max(MAX_WRITE_CHARS)
    .describe("The text to replace it with (must differ from old_string)."),
  replace_all: z
    .boolean()
    .optional()
    .describe(
      "Replace every occurrence of old_string (default false: it must occur exactly once).",
    ),
});

/**
 * Replaces exact text in a file. `old_string` must occur exactly once unless `replace_all`.
 */
export const editTool: Tool = {
  spec: {
    name: "Edit",
    description:
      "Replaces exact text in a file: old_string must match the file exactly once (include surrounding lines to make it unique), or set replace_all to change every occurrence. In plan mode only the plan file can be edited; after approval, repository files.",
    input_schema: modelSchema(EditInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = EditInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Edit", parsed.error));
    const { old_string: oldText, new_string: newText, replace_all: all = false } = parsed.data;
    const target = ctx.target;
    if (target === undefined) return fail("Edit was not permitted; nothing was changed.");
    if (oldText === newText)
      return fail("old_string and new_string are the same; nothing to change.");

    const shown = target.kind === "plan" ? ctx.planPath : displayRepoPath(target.path);
    const current =
      target.kind === "plan"
        ? ctx.workspace.readPlan()
        : await ctx.workspace.readRepoFile(target.path);
    if (current === null) {
      return fail(
        target.kind === "plan"
          ? `The plan file ${shown} does not exist yet. Create it with Write first.`
          : `File does not exist: ${shown}. Create it with Write.`,
      );
    }
    const count = occurrences(current, oldText);
    if (count === 0)
      return fail(`old_string was not found in ${shown}. Read the file and copy the text exactly.`);
    if (count > 1 && !all) {
      return fail(
        `old_string occurs ${count} times in ${shown}. Add surrounding lines to make it unique, or set replace_all to change every occurrence.`,
      );
    }
    const next = all
      ? current.split(oldText).join(newText)
      : current.replace(oldText, () => newText);
    if (next.length > MAX_WRITE_CHARS) {
      return fail(
        `The edit would make ${shown} longer than ${MAX_WRITE_CHARS} characters; nothing was changed.`,
      );
    }
    const summary = `${count === 1 ? "1 occurrence" : `${count} occurrences`} replaced in ${shown}.`;
    return ok(summary, () => {
      if (target.kind === "plan") ctx.port.writePlan(next);
      else ctx.port.writeOverlay(target.path, next);
    });
  },
};

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}
