import { z } from "zod";
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_TIMEOUT_MS,
  BASH_TOOL,
  COMMAND_MAX_CHARS,
  type FileChange,
} from "../../protocol/index.ts";
import { decidePermission } from "../permissions.ts";
import { describeRun } from "./bash-report.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  type Tool,
  type ToolContext,
  type ToolOutcome,
} from "./types.ts";

export const BashInput = z.strictObject({
  command: z.string().min(1).max(COMMAND_MAX_CHARS).describe("The command to execute"),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Optional timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS})`),
  description: z
    .string()
    .max(2_000)
    .optional()
    .describe("Clear, concise description of what this command does in 5-10 words"),
});

/**
 * Runs a shell command in the session's container (Claude Code's `Bash`: `command`, `timeout`
 * in ms, `description`). The container holds the snapshot with the overlay's edits; what the
 * command creates, changes or deletes comes back and lands in the overlay with the tool result
 * (one transaction), so Edit/Write and commands work on one tree and the session's changes hold
 * both. Offered only after approval where commands can run; the permission check refuses it in
 * plan mode whatever the model says.
 */
export const bashTool: Tool = {
  spec: {
    name: BASH_TOOL,
    description: `Executes a bash command in the project's working tree (a container holding the repository with your edits so far), with an optional timeout (default ${BASH_DEFAULT_TIMEOUT_MS} ms, at most ${BASH_MAX_TIMEOUT_MS} ms). Use it to run the project's tests, builds and linters, and to inspect the result of your changes. Files the command creates, changes or deletes become part of your changes like Edit and Write. The network is off unless the deployment turned it on. Output beyond 30,000 bytes per stream is cut.`,
    input_schema: modelSchema(BashInput),
  },
  async run(input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    const parsed = BashInput.safeParse(input);
    if (!parsed.success) return fail(describeInvalidInput(BASH_TOOL, parsed.error));
    const commands = ctx.port.commands;
    if (commands === null) {
      return fail(
        "Bash is not available in this session: this deployment carries out plans without running commands (PLANPORT_EXECUTION=overlay). Use Read, Grep, Glob, Edit and Write.",
      );
    }
    const { command } = parsed.data;
    const timeoutMs = parsed.data.timeout ?? BASH_DEFAULT_TIMEOUT_MS;
    const result = await commands.run(command, timeoutMs);
    const { kept, refused } = await sortChanges(result.changes, ctx);
    const failed = result.timed_out || result.exit_code !== 0;
    return {
      kind: "result",
      content: describeRun(result, { timeoutMs, refused }),
      isError: failed,
      apply: () => {
        for (const change of kept) {
          ctx.port.writeOverlay(change.path, change.kind === "deleted" ? null : change.content);
        }
        ctx.port.recordCommandRun({
          toolUseId: ctx.callId ?? "",
          command,
          exitCode: result.exit_code,
          timedOut: result.timed_out,
          durationMs: result.duration_ms,
        });
      },
    };
  },
};

/** A change the overlay takes: a deletion, or new text. */
type KeptChange =
  | { path: string; kind: "deleted" }
  | { path: string; kind: "written"; content: string };

/**
 * The command's changes the overlay takes, and the ones it does not with why: a file that is
 * not text or too large (the executor said so), or a path no write may touch after approval
 * (the same rule as Edit/Write: the plans folder, `.git/`, names the user's tools misread).
 */
async function sortChanges(
  changes: readonly FileChange[],
  ctx: ToolContext,
): Promise<{ kept: KeptChange[]; refused: { path: string; why: string }[] }> {
  const kept: KeptChange[] = [];
  const refused: { path: string; why: string }[] = [];
  for (const change of changes) {
    const permission = decidePermission({
      mode: ctx.mode,
      tool: "Write",
      input: { file_path: change.path, content: "" },
      planPath: ctx.planPath,
    });
    if (permission.behavior === "deny" || permission.target?.kind !== "repo") {
      refused.push({ path: change.path, why: "a path no change may touch" });
    } else if (change.skipped !== undefined) {
      refused.push({
        path: change.path,
        why: change.skipped === "binary" ? "not text" : "larger than 1 MiB",
      });
    } else if (change.kind === "deleted") {
      kept.push({ path: permission.target.path, kind: "deleted" });
    } else if (change.content === undefined) {
      refused.push({ path: change.path, why: "its content did not come back" });
    } else {
      kept.push({ path: permission.target.path, kind: "written", content: change.content });
    }
  }
  return { kept, refused };
}
