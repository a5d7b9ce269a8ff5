import { z } from "zod";
import { displayRepoPath, parseRepoPath } from "../paths.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  ok,
  type Tool,
  type ToolContext,
} from "./types.ts";

/** Lines returned when the model gives no `limit`. */
export const READ_DEFAULT_LINES = 2_000;
/** Longest line shown; longer ones are cut (minified files would flood the context). */
export const READ_MAX_LINE_CHARS = 2_000;
/** Most characters one Read returns; the model pages on with `offset`. */
export const READ_MAX_CHARS = 100_000;

export const ReadInput = z.strictObject({
  file_path: z
    .string()
    .describe(
      "The file to read: a repository path (src/app.ts or /repo/src/app.ts) or the plan file path.",
    ),
  offset: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .optional()
    .describe("The line number to start reading from (1-based). Only for large files."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(READ_DEFAULT_LINES)
    .optional()
    .describe(`How many lines to read (at most ${READ_DEFAULT_LINES}).`),
});

/**
 * Reads a file with numbered lines, like `cat -n`.
 *
 * @example
 * await readTool.run({ file_path: "src/app.ts", offset: 10, limit: 5 }, ctx)
 * // { kind: "result", content: "    10\t…\n    11\t…", isError: false }
 */
export const readTool: Tool = {
  spec: {
    name: "Read",
    description: `Reads a file from the workspace and returns its lines numbered like \`cat -n\` (number, tab, text). Reads up to ${READ_DEFAULT_LINES} lines from the start by default; use offset and limit for long files. Lines longer than ${READ_MAX_LINE_CHARS} characters are cut. Works for repository files and the plan file.`,
    input_schema: modelSchema(ReadInput),
  },
  async run(input: unknown, ctx: ToolContext) {
    const parsed = ReadInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput("Read", parsed.error));
    const { file_path: filePath, offset = 1, limit = READ_DEFAULT_LINES } = parsed.data;

    let text: string | null;
    let shown: string;
    if (filePath === ctx.planPath) {
      text = ctx.workspace.readPlan();
      shown = filePath;
      if (text === null)
        return fail(`The plan file ${filePath} does not exist yet. Create it with Write.`);
    } else {
      const path = parseRepoPath(filePath);
      if (!path.ok) return fail(path.error);
      shown = displayRepoPath(path.value);
      text = await ctx.workspace.readRepoFile(path.value);
      if (text === null) {
        return fail(
          (await ctx.workspace.isDirectory(path.value))
            ? `${shown} is a folder, not a file. Use LS to list it.`
            : `File does not exist: ${shown}`,
        );
      }
    }
    return ok(numberedLines(text, offset, limit, shown));
  },
};

/**
 * The `cat -n` view of lines `offset`…`offset+limit-1`, capped at {@link READ_MAX_CHARS}.
 *
 * @example
 * numberedLines("a\nb\nc", 2, 1, "/repo/x") // "     2\tb"
 */
export function numberedLines(text: string, offset: number, limit: number, shown: string): string {
  if (text === "") return `${shown} exists but is empty.`;
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  if (offset > lines.length) {
    return `${shown} has only ${lines.length} line${lines.length === 1 ? "" : "s"}; offset ${offset} is past its end.`;
  }
  const end = Math.min(lines.length, offset - 1 + limit);
  const out: string[] = [];
  let chars = 0;
  for (let n = offset; n <= end; n++) {
    let line = (lines[n - 1] ?? "").replace(/\r$/, "");
    if (line.length > READ_MAX_LINE_CHARS)
      line = `${line.slice(0, READ_MAX_LINE_CHARS)}… [line cut]`;
    const row = `${String(n).padStart(6)}\t${line}`;
    if (chars + row.length > READ_MAX_CHARS && out.length > 0) {
      out.push(
        `[Output cut at line ${n - 1} of ${lines.length} to stay within ${READ_MAX_CHARS} characters; read on with offset ${n}.]`,
      );
      return out.join("\n");
    }
    out.push(row);
    chars += row.length + 1;
  }
  if (end < lines.length) {
    out.push(
      `[Showing lines ${offset}–${end} of ${lines.length}; read on with offset ${end + 1}.]`,
    );
  }
  return out.join("\n");
}
