/**
 * Numbers the review page and its browser script share. Plain constants with no imports, so
 * the browser bundle (browser/) and the server rendering read one record.
 */

/** How often the open page asks whether the session changed. */
export const REVIEW_POLL_INTERVAL_MS = 2_000;

/** At most this many diff lines are drawn; `planport pull` shows the rest. */
export const DIFF_MAX_LINES = 10_000;
