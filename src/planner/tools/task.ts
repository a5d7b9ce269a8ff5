import { z } from "zod";
import { TASK_TOOL } from "../../protocol/index.ts";
import { modelSchema, type ToolSpec } from "./types.ts";

/**
 * The `Task` tool of `deep` sessions (docs/PROTOCOL.md "Subagents"). It has no `run` of its
 * own: the engine runs its subagent conversation (src/planner/subagents.ts), a turn per step,
 * beside the other Task calls of the same reply.
 */
export const TaskInput = z.strictObject({
  description: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .describe("A short name for the task (3 to 5 words), shown to the user."),
  prompt: z
    .string()
    .trim()
    .min(1)
    .max(50_000)
    .describe(
      "The subagent's instructions: everything it needs to know (it sees nothing of your conversation) and what it must report.",
    ),
});
export type TaskInput = z.infer<typeof TaskInput>;

export const TASK_SPEC: ToolSpec = {
  name: TASK_TOOL,
  description:
    "Starts a read-only research subagent with a conversation of its own and returns its final report. The subagent can use Read, Glob, Grep and LS only: it cannot write any file (not even the plan file), ask the user, present the plan or start subagents. Several Task calls in one message run at the same time, so launch independent explorations together. The subagent sees nothing of your conversation: put the request, the paths and names you know, and what to report into its prompt.",
  input_schema: modelSchema(TaskInput),
};
