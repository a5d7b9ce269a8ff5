import { TOOL_NAMES, type ToolName } from "../../protocol/index.ts";
import { askUserQuestionTool } from "./ask-user-question.ts";
import { editTool } from "./edit.ts";
import { exitPlanModeTool } from "./exit-plan-mode.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { lsTool } from "./ls.ts";
import { readTool } from "./read.ts";
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

/**
 * The tool of that name, or undefined for anything else.
 *
 * @example
 * findTool("Read")?.spec.name // "Read"
 */
export function findTool(name: string): Tool | undefined {
  return (TOOL_NAMES as readonly string[]).includes(name) ? TOOLS[name as ToolName] : undefined;
}

export type { Tool, ToolContext, ToolOutcome, ToolSpec } from "./types.ts";
export { Workspace } from "./workspace.ts";
