/**
 * Limits the worker, the terminal client and the review page's browser script all keep. A
 * module of plain numbers with no imports, so the browser bundle can take them without zod.
 */

/** A teleport is offered only while a terminal polled this recently. */
export const TERMINAL_POLL_WINDOW_MS = 15_000;

/** ExitPlanMode cannot be approved for a plan longer than this. */
export const MAX_APPROVABLE_PLAN_CHARS = 200_000;
