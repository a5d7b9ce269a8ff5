/**
 * Shows the page's times in the reader's own time zone and locale. The server writes each time
 * in UTC inside `<time datetime="…" data-local-time="minute|second">` (src/review/times.ts), so
 * without this script the page still tells a correct time; here the text is rewritten from the
 * exact `datetime`, and the UTC text stays as the element's title.
 */

const DAY_PARTS: Intl.DateTimeFormatOptions = { year: "numeric", month: "2-digit", day: "2-digit" };

/**
 * A moment in the reader's zone: `10:32 AM EDT`, with seconds for `second` precision, and
 * with the date (`May 2, 10:32 AM EDT`) when it is not the reader's today.
 *
 * @example
 * localTimeText(new Date("2026-05-01T14:32:10Z"), new Date("2026-05-01T14:00:00Z"), "minute")
 * // "10:32 AM EDT" for a reader in New York with an en-US browser
 */
export function localTimeText(at: Date, now: Date, precision: string): string {
  const day = new Intl.DateTimeFormat(undefined, DAY_PARTS);
  const today = day.format(at) === day.format(now);
  const sameYear = at.getFullYear() === now.getFullYear();
  return new Intl.DateTimeFormat(undefined, {
    ...(today ? {} : { month: "short", day: "numeric", ...(sameYear ? {} : { year: "numeric" }) }),
    hour: "numeric",
    minute: "2-digit",
    ...(precision === "second" ? { second: "2-digit" } : {}),
    timeZoneName: "short",
  }).format(at);
}

/**
 * Rewrites every server-rendered time under `root` in the reader's zone; a time already
 * rewritten, or one with no valid `datetime`, is left as it is.
 *
 * @example
 * showLocalTimes(document);
 */
export function showLocalTimes(root: ParentNode, now = new Date()): void {
  for (const el of Array.from(root.querySelectorAll<HTMLTimeElement>("time[data-local-time]"))) {
    const at = new Date(el.dateTime);
    if (Number.isNaN(at.getTime()) || el.hasAttribute("data-shown-local")) continue;
    el.title = el.textContent ?? "";
    el.textContent = localTimeText(at, now, el.getAttribute("data-local-time") ?? "minute");
    el.setAttribute("data-shown-local", "");
  }
}
