/**
 * Limits the worker, the terminal client and the review page's browser script all keep. A
 * module of plain numbers with no imports, so the browser bundle can take them without zod.
 */

/** A teleport is offered only while a terminal polled this recently. */
export const TERMINAL_POLL_WINDOW_MS = 15_000;

/** ExitPlanMode cannot be approved for a plan longer than this. */
export const MAX_APPROVABLE_PLAN_CHARS = 200_000;

/** An AskUserQuestion call asks 1–4 questions; an answer names at most this many. */
export const MAX_QUESTIONS = 4;

/** Inline comments on a plan: how many one decision carries, and each quote's or note's length. */
export const MAX_COMMENTS = 200;
export const MAX_COMMENT_CHARS = 10_000;
/**
 * The quotes and notes of one decision's comments together: as many characters as the longest
 * plan that can be approved. They are stored as one JSON value, which stays within the
 * storage's 2 MB a value even when every character is written escaped (6 bytes).
 */
export const MAX_COMMENTS_TOTAL_CHARS = MAX_APPROVABLE_PLAN_CHARS;
