import { z } from "zod";
import {
  MAX_APPROVABLE_PLAN_CHARS,
  MAX_APPROVERS,
  OWNER_LABEL_PATTERN,
  PLANNER_NAMES,
  SESSION_ID_PATTERN,
  VARIANTS,
} from "../../src/protocol/index.ts";

/**
 * The tools of `planport mcp` (CONTRACT "Extensions" → "CLI" → `mcp`): their names,
 * descriptions and argument schemas. Pure data: the SDK turns each zod shape into the JSON
 * schema a client sees, and validates every call against it before a handler runs, so a bad
 * argument is answered as a tool error that names the field.
 */

/** The longest `wait_for_plan` may block (CONTRACT: ≤ 540 s, under common clients' limits). */
export const MAX_WAIT_S = 540;
export const DEFAULT_WAIT_S = MAX_WAIT_S;
/** The same bound as the API's `prompt`. */
const MAX_TASK_CHARS = 100_000;

const sessionId = z
  .string()
  .regex(
    SESSION_ID_PATTERN,
    "must be a session id: ses_ followed by 26 lowercase letters and digits",
  )
  .describe("The session id the plan tool returned (ses_…).");

export const PLAN_ARGS = {
  task: z
    .string()
    .trim()
    .min(1, "describe the task to plan")
    .max(MAX_TASK_CHARS)
    .describe("What to plan, in the user's words (e.g. 'add OAuth login')."),
  repo: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The repository to snapshot (an absolute path is safest); default: the MCP server's working directory.",
    ),
  seed_plan: z
    .string()
    .min(1, "must not be empty")
    .max(MAX_APPROVABLE_PLAN_CHARS)
    .optional()
    .describe(
      "A draft plan written here (markdown). The remote planner refines it instead of starting over.",
    ),
  variant: z
    .enum(VARIANTS)
    .optional()
    .describe("The planning workflow: simple (default), visual (adds a diagram) or deep."),
  planner: z
    .enum(PLANNER_NAMES)
    .optional()
    .describe("Which planner runs the session (default: the server's choice)."),
  approvers: z
    .array(z.string().regex(OWNER_LABEL_PATTERN, "must be owner labels (a-z, 0-9, _ and -)"))
    .min(1)
    .max(MAX_APPROVERS)
    .optional()
    .describe(
      "Owner labels of teammates who must approve the plan (team review); only they can approve it or send it to a terminal.",
    ),
};

export const WAIT_ARGS = {
  session_id: sessionId,
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(MAX_WAIT_S)
    .optional()
    .describe(
      `How long to wait, in seconds (1–${MAX_WAIT_S}, default ${DEFAULT_WAIT_S}). When it passes, call wait_for_plan again with the same session_id.`,
    ),
};

export const SESSION_ARGS = { session_id: sessionId };

export const LIST_ARGS = {
  limit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("How many sessions, newest first (1–100, default 20)."),
};

export const PULL_ARGS = {
  session_id: sessionId,
  apply: z
    .boolean()
    .optional()
    .describe(
      "Apply the changes to the repository with git apply --3way (refused if touched files have uncommitted work). Default: only return the diff.",
    ),
  repo: z
    .string()
    .min(1)
    .optional()
    .describe("Where to apply (default: the MCP server's working directory)."),
};

export type PlanArgs = z.infer<z.ZodObject<typeof PLAN_ARGS>>;
export type WaitArgs = z.infer<z.ZodObject<typeof WAIT_ARGS>>;
export type PullArgs = z.infer<z.ZodObject<typeof PULL_ARGS>>;

/** What each tool is for, as the model reads it when choosing a tool. */
export const TOOL_DESCRIPTIONS = {
  plan:
    "Offload planning to planport: snapshots the repository, starts a remote Plan Mode session and returns AT ONCE with the session id and the review link. " +
    "Show the review link to the user, then call wait_for_plan with the session id. " +
    "Pass seed_plan to have a draft plan refined rather than planned from scratch.",
  wait_for_plan:
    "Wait for a planport session's plan to be decided in its review page (blocks up to timeout_s, ≤ 540 s). " +
    "While it waits, the reviewer can send the plan here ('Approve and send to terminal', a teleport): the result then holds the full plan, to implement in this conversation. " +
    "It also returns when the plan is approved to run in the cloud, when the session ends, or when the timeout passes — the text says which and what to do next (on a timeout: call wait_for_plan again with the same session_id).",
  status: "Show one planport session: its phase, status, review link, outcome and usage.",
  list: "List your planport sessions, newest first: id, title, phase, how often the reviewer asked to keep planning, age.",
  stop: "Stop (archive) a planport session: the planner stops and the review page closes its decisions.",
  pull_changes:
    "Fetch the changes a planport session's remote (cloud) execution made, as a unified diff; with apply: true, apply them here with git apply --3way (what `planport pull --apply` does).",
} as const;

export type ToolName = keyof typeof TOOL_DESCRIPTIONS;
export const TOOL_NAMES = Object.keys(TOOL_DESCRIPTIONS) as ToolName[];
