/**
 * Durations as people type them on the command line (`30m`, `3s`, `500ms`) and as the CLI
 * prints them back.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000 } as const;

/**
 * Parses `<number><ms|s|m>` into milliseconds; anything else throws a sentence the user can act on.
 * A bare number is refused: "3" could mean seconds or milliseconds, and guessing wrong turns a
 * 3-second interval into a busy loop.
 *
 * @example
 * parseDuration("30m") // → 1_800_000
 * parseDuration("1.5s") // → 1_500
 */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)\s*$/.exec(text);
  if (!match) {
    throw new RangeError(
      `"${text}" is not a duration; write a number with a unit: 500ms, 3s or 30m`,
    );
  }
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  if (ms <= 0) throw new RangeError(`"${text}" must be longer than zero`);
  return ms;
}

/**
 * The shortest exact spelling of a duration in the units {@link parseDuration} reads.
 *
 * @example
 * formatDuration(1_800_000) // → "30m"
 * formatDuration(90_000)    // → "90s"
 */
export function formatDuration(ms: number): string {
  if (ms > 0 && ms % UNIT_MS.m === 0) return `${ms / UNIT_MS.m}m`;
  if (ms > 0 && ms % UNIT_MS.s === 0) return `${ms / UNIT_MS.s}s`;
  return `${ms}ms`;
}

/**
 * A rough age for tables ("12s", "5m", "3h", "2d").
 *
 * @example
 * formatAge(3 * 3_600_000) // → "3h"
 */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1_000));
  if (s < 60) return `${s}s`;
  if (s < 3_600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
