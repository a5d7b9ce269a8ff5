/**
 * The one name each decision has wherever a person reads it: the review page's buttons, the
 * CLI's lines, the terminal review's menu and the MCP texts (issue 26: one action had three
 * names). The wire keeps its own values (`"reject"`, `reject_count`, the `rejected` JSON
 * event); these are only the words people see.
 */

/** The review page's button labels, and so every other place's words for the decisions. */
export const DECISION_LABELS = {
  approve: "Approve and run in the cloud",
  teleport: "Approve and send to terminal",
  /** A decision of `"reject"` with feedback: the planner revises its plan. */
  reject: "Keep planning",
  stop: "Stop session",
} as const;

/**
 * How many times the reviewer asked the planner to keep planning, in the words of the button.
 *
 * @example
 * keepPlanningCount(2) // → "keep planning ×2"
 */
export function keepPlanningCount(n: number): string {
  return `keep planning ×${n}`;
}
