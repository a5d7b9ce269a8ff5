/**
 * The exact strings that carry a decision through the event feed. A poller reads the verdict
 * from these, so they never change (CONTRACT.md "Markers").
 */

/** Starts the tool result of an approved ExitPlanMode; the plan follows after a newline. */
export const APPROVED_PLAN_MARKER = "## Approved Plan:";

/** Replaces {@link APPROVED_PLAN_MARKER} when the user edited the plan before approving. */
export const APPROVED_PLAN_EDITED_MARKER = "## Approved Plan (edited by user):";

/**
 * Starts an `is_error: true` tool result when the user sent the plan back to the terminal.
 * The same sentinel as Claude Code's Ultraplan, so its poller can read our feed.
 */
export const TELEPORT_SENTINEL = "__ULTRAPLAN_TELEPORT_LOCAL__";

/** Formats the approved tool result exactly as CONTRACT.md fixes it. */
export function approvedPlanResult(plan: string, editedByUser: boolean): string {
  return `${editedByUser ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER}\n${plan}`;
}

/** Formats the teleport tool result exactly as CONTRACT.md fixes it. */
export function teleportResult(plan: string): string {
  return `${TELEPORT_SENTINEL}\n${plan}`;
}
