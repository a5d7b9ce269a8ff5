/**
 * The exact strings that carry a decision through the event feed (docs/PROTOCOL.md "Markers").
 * A Claude-compatible poller reads the verdict from these, so they never change; planport's own
 * scanner prefers the structured `decision` field of the event and falls back to them.
 */

/** The line before the plan in the tool result of an approved ExitPlanMode. */
export const APPROVED_PLAN_MARKER = "## Approved Plan:";

/** Replaces {@link APPROVED_PLAN_MARKER} when the user edited the plan before approving. */
export const APPROVED_PLAN_EDITED_MARKER = "## Approved Plan (edited by user):";

/**
 * The line before the plan in an `is_error: true` tool result when the user sent the plan back
 * to the terminal. The same sentinel as Claude Code's Ultraplan, so its poller can read our feed.
 */
export const TELEPORT_SENTINEL = "__ULTRAPLAN_TELEPORT_LOCAL__";

/** Formats the approved tool result exactly as the protocol fixes it. */
export function approvedPlanResult(plan: string, editedByUser: boolean): string {
  return `${editedByUser ? APPROVED_PLAN_EDITED_MARKER : APPROVED_PLAN_MARKER}\n${plan}`;
}

/** Formats the teleport tool result exactly as the protocol fixes it. */
export function teleportResult(plan: string): string {
  return `${TELEPORT_SENTINEL}\n${plan}`;
}

/**
 * What a marker becomes inside text a person or a model wrote. Readable (the model still sees
 * that the text mentioned a marker), and none of them contains a marker itself.
 */
const NEUTRALIZED: readonly (readonly [string, string])[] = [
  [TELEPORT_SENTINEL, "«ULTRAPLAN_TELEPORT_LOCAL»"],
  // Both approval markers start with this, so one replacement covers them.
  ["## Approved Plan", "## Approved plan (quoted)"],
];

/**
 * User text with every protocol marker made inert, for text that goes into a tool result next
 * to the server's own marker lines (a reviewer's feedback, quoted passages of a plan, answers):
 * a reviewer who quotes the sentinel — or a plan that planted it for them to quote — must never
 * turn a rejection into a teleport for any poller, however lenient its search.
 *
 * @example
 * neutralizeMarkers("see __ULTRAPLAN_TELEPORT_LOCAL__") // "see «ULTRAPLAN_TELEPORT_LOCAL»"
 */
export function neutralizeMarkers(text: string): string {
  let out = text;
  // A replacement never creates a marker, but the loop makes that true by construction.
  for (let changed = true; changed; ) {
    changed = false;
    for (const [marker, inert] of NEUTRALIZED) {
      if (out.includes(marker)) {
        out = out.replaceAll(marker, inert);
        changed = true;
      }
    }
  }
  return out;
}
