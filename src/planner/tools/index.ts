import {
  BASH_TOOL,
  type PermissionMode,
  READ_ONLY_TOOLS,
  TOOL_NAMES,
  type ToolName,
  type Variant,
} from "../../protocol/index.ts";
import { askUserQuestionTool } from "./ask-user-question.ts";
import { bashTool } from "./bash.ts";
import { editTool } from "./edit.ts";
import { exitPlanModeTool } from "./exit-plan-mode.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { lsTool } from "./ls.ts";
import { readTool } from "./read.ts";
import { TASK_SPEC } from "./task.ts";
import type { Tool, ToolSpec } from "./types.ts";
import { writeTool } from "./write.ts";

/**
 * The tools of a planning session, in `system/init` order. The same list is offered in every
 * mode (a stable, cacheable tool catalogue); what a call may do is the permission check's job.
 */
export const TOOLS: Readonly<Record<ToolName, Tool>> = {
  Read: readTool,
  Glob: globTool,
  Grep: grepTool,
  LS: lsTool,
  Write: writeTool,
  Edit: editTool,
  AskUserQuestion: askUserQuestionTool,
  ExitPlanMode: exitPlanModeTool,
};

/** The model-facing specs, in `TOOL_NAMES` order. */
export const TOOL_SPECS: readonly ToolSpec[] = TOOL_NAMES.map((name) => TOOLS[name].spec);

/** A `deep` session's specs: the same catalogue with `Task` last (`DEEP_TOOL_NAMES`). */
export const DEEP_TOOL_SPECS: readonly ToolSpec[] = [...TOOL_SPECS, TASK_SPEC];

/** What a subagent is offered: the read-only tools only. */
export const SUBAGENT_TOOL_SPECS: readonly ToolSpec[] = READ_ONLY_TOOLS.map(
  (name) => TOOLS[name].spec,
);

/**
 * The tool catalogue of a session's own conversation: stable while it plans (a cacheable
 * prefix); after approval, where commands can run, `Bash` comes last. Plan mode never offers
 * it (and the permission check refuses it there whatever the model says).
 *
 * @example
 * toolSpecsFor("deep", "plan", true).at(-1)?.name // "Task"
 * toolSpecsFor("simple", "default", true).at(-1)?.name // "Bash"
 */
export function toolSpecsFor(
  variant: Variant,
  mode: PermissionMode = "plan",
  runsCommands = false,
): readonly ToolSpec[] {
  const base = variant === "deep" ? DEEP_TOOL_SPECS : TOOL_SPECS;
  return offersBash(mode, runsCommands) ? [...base, bashTool.spec] : base;
}

/** Whether `Bash` is offered: after approval, where commands can run. */
export function offersBash(mode: PermissionMode, runsCommands: boolean): boolean {
  return mode !== "plan" && runsCommands;
}

/**
 * The tool of that name, or undefined for anything else.
 *
 * @example
 * findTool("Read")?.spec.name // "Read"
 */
export function findTool(name: string): Tool | undefined {
  if (name === BASH_TOOL) return bashTool;
  return (TOOL_NAMES as readonly string[]).includes(name) ? TOOLS[name as ToolName] : undefined;
}

export { TaskInput } from "./task.ts";
export type { Tool, ToolContext, ToolOutcome, ToolSpec } from "./types.ts";
export { Workspace } from "./workspace.ts";
