import type { Event, FeedPage, NewEvent } from "../../protocol/index.ts";
import { eventId } from "../ids.ts";
import { MAX_STORED_JSON_CHARS } from "../schema.ts";

/**
 * The session's append-only event log and the feed read from it. Each event is stored as its
 * final JSON (id and time included), so reading a page is a range scan plus one parse per row.
 */

/** Appends events and returns them as stored; ids follow the last sequence number, times are `nowMs`. */
export function appendEvents(sql: SqlStorage, events: readonly NewEvent[], nowMs: number): Event[] {
  const last =
    sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events").one().seq ?? 0;
  const createdAt = new Date(nowMs).toISOString();
  return events.map((event, i) => {
    const seq = last + i + 1;
    // A tool result or message too large for one row is stored shortened, with a note saying
    // so: failing the append would end the whole session over one oversized answer.
    const stored = shortenEvent(
      { id: eventId(seq), created_at: createdAt, ...event } as Event,
      MAX_STORED_JSON_CHARS,
    );
    const json = JSON.stringify(stored);
    if (json.length > MAX_STORED_JSON_CHARS) {
      // Only the structure is left to blame (thousands of blocks): nothing more to shorten.
      throw new Error(
        `An event of ${json.length} characters is too large to store (limit ${MAX_STORED_JSON_CHARS}) even with its texts shortened.`,
      );
    }
    sql.exec("INSERT INTO events (seq, type, json) VALUES (?, ?, ?)", seq, stored.type, json);
    return stored;
  });
}

/** Characters a shortened text keeps at least (unless even that does not fit). */
const MIN_KEPT_CHARS = 200;

/**
 * What replaces the end of a text cut to fit.
 *
 * @example cutNote(1234) // "… [1234 characters cut: too large to store]"
 */
export function cutNote(cutChars: number): string {
  return `… [${cutChars} characters cut: too large to store]`;
}

/**
 * The event, shortened so that its JSON has at most `maxJsonChars` characters: the longest
 * texts are cut first, all to the same length (the longest shrinks most), each ending with
 * {@link cutNote}. Only texts are cut — text blocks, tool_result content, the strings of a
 * tool_use input, a user's message and a result's message — never ids, types, names or
 * anything else a reader relies on. Pure; an event that fits is returned as it is.
 *
 * @example
 * shortenEvent({ type: "user", message: { role: "user", content: "x".repeat(2e6) } }, 1_500_000)
 * // content: "xxx…x… [5000… characters cut: too large to store]", 1,500,000 JSON characters at most
 */
export function shortenEvent<T extends object>(event: T, maxJsonChars: number): T {
  const size = JSON.stringify(event).length;
  if (size <= maxJsonChars) return event;
  const copy = structuredClone(event);
  const texts = textSlots(copy);
  const originals = texts.map((t) => t.get());
  const lengths = originals.map(jsonLength);
  // First with a floor, so that every text keeps its beginning; without one if that is not
  // enough. Lengths are exact, so the first cut that should fit does.
  let shortfall = 0;
  for (const floor of [MIN_KEPT_CHARS, 0, 0]) {
    const level = Math.max(floor, waterLevel(lengths, size - maxJsonChars + shortfall));
    texts.forEach((text, i) => {
      text.set(lengths[i]! > level ? cutTo(originals[i]!, level) : originals[i]!);
    });
    const now = JSON.stringify(copy).length;
    if (now <= maxJsonChars) break;
    shortfall += now - maxJsonChars;
  }
  return copy;
}

interface TextSlot {
  get(): string;
  set(value: string): void;
}

/** Keys whose string values are texts (prose or data), never identifiers. */
const TEXT_KEYS = new Set(["text", "content", "message"]);

/** The strings of an event that may be cut, each with a way to replace it. */
function textSlots(event: object): TextSlot[] {
  const slots: TextSlot[] = [];
  const visit = (holder: Record<string, unknown>, key: string, all: boolean): void => {
    const value = holder[key];
    if (typeof value === "string") {
      if (all || TEXT_KEYS.has(key)) {
        slots.push({
          get: () => holder[key] as string,
          set: (v) => {
            holder[key] = v;
          },
        });
      }
      return;
    }
    if (value === null || typeof value !== "object") return;
    // Every string inside a tool_use input is the model's data. An array is visited through
    // its indexes as keys, which is what they are in JavaScript.
    const inside = all || key === "input";
    for (const k of Object.keys(value)) visit(value as Record<string, unknown>, k, inside);
  };
  for (const key of Object.keys(event)) visit(event as Record<string, unknown>, key, false);
  return slots;
}

/**
 * The length every text longer than it is cut to so that the total shrinks by `excess`:
 * the highest level L with Σ max(0, length − L) ≥ excess (0 when even that is not enough).
 */
function waterLevel(lengths: readonly number[], excess: number): number {
  const sorted = [...lengths].sort((a, b) => b - a);
  let sum = 0;
  for (let k = 0; k < sorted.length; k++) {
    sum += sorted[k]!;
    const next = sorted[k + 1] ?? 0;
    // Cutting the k+1 longest down to `next` saves sum − (k+1)·next.
    if (sum - (k + 1) * next >= excess) return Math.floor((sum - excess) / (k + 1));
  }
  return 0;
}

/** `text` cut so that its JSON encoding, note included, has at most `level` characters. */
function cutTo(text: string, level: number): string {
  // The note's own length depends on the number it states; its longest form bounds it.
  const room = Math.max(0, level - cutNote(text.length).length);
  let used = 0;
  let keep = 0;
  while (keep < text.length) {
    const step = unitAt(text, keep);
    if (used + step.cost > room) break;
    used += step.cost;
    keep += step.units;
  }
  return `${text.slice(0, keep)}${cutNote(text.length - keep)}`;
}

/** Characters `text` takes inside a JSON string (quotes not counted). */
function jsonLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    const step = unitAt(text, i);
    n += step.cost;
    i += step.units;
  }
  return n;
}

/**
 * The character at `i` as JSON.stringify writes it: how many UTF-16 units it spans (a
 * surrogate pair is one character, never split) and how many characters it becomes.
 */
function unitAt(text: string, i: number): { units: number; cost: number } {
  const code = text.charCodeAt(i);
  if (code === 0x22 || code === 0x5c) return { units: 1, cost: 2 };
  if (code < 0x20) return { units: 1, cost: SHORT_ESCAPES.has(code) ? 2 : 6 };
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { units: 2, cost: 2 };
  }
  // A lone surrogate is written as \uXXXX.
  if (code >= 0xd800 && code <= 0xdfff) return { units: 1, cost: 6 };
  return { units: 1, cost: 1 };
}

/** Control characters JSON writes as a two-character escape (\b \t \n \f \r). */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/** The whole log, oldest first. */
export function listEvents(sql: SqlStorage): Event[] {
  return sql
    .exec<{ json: string }>("SELECT json FROM events ORDER BY seq")
    .toArray()
    .map((r) => JSON.parse(r.json) as Event);
}

/**
 * Most characters of event JSON one feed page carries (beyond the first event, which always
 * goes). Keeps a page of large events (up to 1,000 of up to 1.5 M characters each) from
 * filling the isolate's memory or a client's answer cap (the local client reads at most 32 MiB):
 * the rest follows on the next page, `has_more` says so.
 */
export const MAX_FEED_PAGE_CHARS = 8_000_000;

/**
 * Events strictly after `afterSeq`, oldest first, at most `limit` and at most
 * {@link MAX_FEED_PAGE_CHARS} of JSON; `has_more` is exact because rows are read one past the
 * page, lazily (a long page of large events is never all in memory).
 *
 * @example feedPage(sql, 0, 100) // the first 100 events
 */
export function feedPage(sql: SqlStorage, afterSeq: number, limit: number): FeedPage {
  const rows = sql.exec<{ json: string }>(
    "SELECT json FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
    afterSeq,
    limit + 1,
  );
  const data: Event[] = [];
  let chars = 0;
  let hasMore = false;
  for (const row of rows) {
    const full =
      data.length >= limit || (data.length > 0 && chars + row.json.length > MAX_FEED_PAGE_CHARS);
    if (full) {
      hasMore = true;
      break;
    }
    chars += row.json.length;
    data.push(JSON.parse(row.json) as Event);
  }
  return {
    data,
    has_more: hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
  };
}

/**
 * Model calls so far (assistant events): the `num_turns` of every result event, whoever writes
 * it (docs/PROTOCOL.md "Event"; the engine counts the same in src/planner/turns.ts).
 */
export function countTurns(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM events WHERE type = 'assistant'").one()
    .n;
}

/**
 * Whether the session started from a draft (`seed_plan`), read from the one record of it: the
 * `system/init` event that opens the log.
 */
export function startedFromSeed(sql: SqlStorage): boolean {
  const row = sql
    .exec<{ seeded: number | null }>(
      "SELECT json_extract(json, '$.seed_plan') AS seeded FROM events ORDER BY seq LIMIT 1",
    )
    .toArray()[0];
  return row?.seeded === 1;
}
