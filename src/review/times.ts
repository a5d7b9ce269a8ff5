import { html, type SafeHtml } from "./html.ts";

/**
 * Times on the review page. The server writes each one in UTC inside
 * `<time datetime="…" data-local-time="…">`, so a reader without JavaScript reads a correct,
 * zoned time; the page script (browser/local-times.ts) rewrites the text in the reader's own
 * time zone and locale from the exact `datetime`.
 */

/** How finely a time is told: `14:32`, or `14:32:10` for a deadline seconds away. */
export type TimePrecision = "minute" | "second";

/** One moment the page names: exact (`iso`) and as the server words it (`text`, UTC). */
export interface PageTime {
  readonly iso: string;
  readonly text: string;
  readonly precision: TimePrecision;
}

/** A sentence with times in it: text pieces and {@link PageTime}s, in reading order. */
export type Sentence = readonly (string | PageTime)[];

/**
 * A moment as the page shows it, relative to `nowMs` (the date only when it is another day).
 *
 * @example
 * pageTime(Date.parse("2026-05-01T14:32:10Z"), Date.parse("2026-05-01T14:00:00Z"))
 * // { iso: "2026-05-01T14:32:10.000Z", text: "14:32 UTC", precision: "minute" }
 */
export function pageTime(ms: number, nowMs: number, precision: TimePrecision = "minute"): PageTime {
  const iso = new Date(ms).toISOString();
  return {
    iso,
    text: precision === "second" ? `${iso.slice(11, 19)} UTC` : timeText(ms, nowMs),
    precision,
  };
}

/**
 * A time in UTC as the page says it without JavaScript: `14:32 UTC` on the same UTC day as
 * `nowMs`, else with the date.
 *
 * @example
 * timeText(Date.parse("2026-05-01T14:32:10Z"), Date.parse("2026-05-01T14:00:00Z")) // "14:32 UTC"
 */
export function timeText(ms: number, nowMs: number): string {
  const iso = new Date(ms).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(nowMs).toISOString().slice(0, 10);
  return `${sameDay ? "" : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC`;
}

/**
 * Builds a {@link Sentence} from a template: the interpolated times stay times.
 *
 * @example
 * sentence`Kept until ${pageTime(purge, now)}.` // ["Kept until ", {iso, text, precision}, "."]
 */
export function sentence(
  strings: TemplateStringsArray,
  ...values: (string | PageTime)[]
): Sentence {
  const parts: (string | PageTime)[] = [];
  strings.forEach((text, i) => {
    if (text !== "") parts.push(text);
    const value = values[i];
    if (value !== undefined && value !== "") parts.push(value);
  });
  return parts;
}

/** The sentence as plain text, its times in UTC (what a reader without JavaScript reads). */
export function sentenceText(parts: Sentence): string {
  return parts.map((p) => (typeof p === "string" ? p : p.text)).join("");
}

/** The sentence as HTML: text escaped, each time a {@link timeHtml} element. */
export function sentenceHtml(parts: Sentence): SafeHtml {
  return html`${parts.map((p) => (typeof p === "string" ? p : timeHtml(p)))}`;
}

/**
 * A `<time>` element the page script shows in the reader's time zone.
 *
 * @example
 * timeHtml(pageTime(ms, now)) // <time datetime="2026-05-01T14:32:10.000Z" data-local-time="minute">14:32 UTC</time>
 */
export function timeHtml(time: PageTime): SafeHtml {
  return html`<time datetime="${time.iso}" data-local-time="${time.precision}">${time.text}</time>`;
}
