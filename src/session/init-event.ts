import { type NewEvent, type ResolvedPlanner, TOOL_NAMES } from "../protocol/index.ts";

/**
 * The `system/init` event that opens every log: plan mode, the planner, the tools, the plan file.
 *
 * @example
 * initEvent({ id: "ses_…", planner: "offline", planPath: "/plans/bold-eagle.md" }).tools // ["Read", …]
 */
export function initEvent(session: {
  id: string;
  planner: ResolvedPlanner;
  planPath: string;
}): NewEvent {
  return {
    type: "system",
    subtype: "init",
    permission_mode: "plan",
    planner: session.planner,
    tools: [...TOOL_NAMES],
    session_id: session.id,
    plan_file: session.planPath,
  };
}
