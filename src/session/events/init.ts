import {
  DEEP_TOOL_NAMES,
  type NewEvent,
  type ResolvedPlanner,
  TOOL_NAMES,
  type Variant,
} from "../../protocol/index.ts";

/**
 * The `system/init` event that opens every log: plan mode, the planner, the workflow, the tools
 * (`Task` too in a `deep` session), the plan file, and `seed_plan: true` when the session
 * started from a draft (absent otherwise, so logs without one read as before).
 *
 * @example
 * initEvent({ id: "ses_…", planner: "offline", planPath: "/plans/bold-eagle.md", variant: "simple" }).tools // ["Read", …]
 */
export function initEvent(session: {
  id: string;
  planner: ResolvedPlanner;
  planPath: string;
  variant: Variant;
  seeded?: boolean;
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
    ...(session.seeded === true && { seed_plan: true }),
  };
}
