import {
  DEEP_TOOL_NAMES,
  type NewEvent,
  type ResolvedPlanner,
  TOOL_NAMES,
  type Variant,
} from "../protocol/index.ts";

/**
 * The `system/init` event that opens every log: plan mode, the planner, the workflow, the tools
 * (`Task` too in a `deep` session), the plan file.
 *
 * @example
 * initEvent({ id: "ses_…", planner: "offline", planPath: "/plans/bold-eagle.md", variant: "simple" }).tools // ["Read", …]
 */
export function initEvent(session: {
  id: string;
  planner: ResolvedPlanner;
  planPath: string;
  variant: Variant;
}): NewEvent {
  return {
    type: "system",
    subtype: "init",
    permission_mode: "plan",
    planner: session.planner,
    tools: [...(session.variant === "deep" ? DEEP_TOOL_NAMES : TOOL_NAMES)],
    session_id: session.id,
    plan_file: session.planPath,
    variant: session.variant,
  };
}
