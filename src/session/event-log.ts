import type { Event, FeedPage, NewEvent } from "../protocol/index.ts";
import { eventId } from "./ids.ts";

/**
 * The session's append-only event log and the feed read from it. Each event is stored as its
 * final JSON (id and time included), so reading a page is a range scan plus one parse per row.
 */

/** SQLite in a Durable Object holds at most 2 MB per value; stay clearly below. */
const MAX_EVENT_JSON_CHARS = 1_500_000;

/**
 * Appends events; ids follow the last sequence number, times are `nowMs`.
 *
 * @example appendEvents(sql, [{ type: "user", message: { role: "user", content: "hi" } }], Date.now());
 */
export function appendEvents(sql: SqlStorage, events: readonly NewEvent[], nowMs: number): Event[] {
  const last =
    sql.exec<{ seq: number | null }>("SELECT max(seq) AS seq FROM events").one().seq ?? 0;
  const createdAt = new Date(nowMs).toISOString();
  return events.map((event, i) => {
    const seq = last + i + 1;
    const stored = { id: eventId(seq), created_at: createdAt, ...event } as Event;
    const json = JSON.stringify(stored);
    if (json.length > MAX_EVENT_JSON_CHARS) {
      throw new Error(
        `An event of ${json.length} characters is too large to store (limit ${MAX_EVENT_JSON_CHARS}); shorten the tool result or message.`,
      );
    }
    sql.exec("INSERT INTO events (seq, type, json) VALUES (?, ?, ?)", seq, stored.type, json);
    return stored;
  });
}

/** The whole log, oldest first. */
export function listEvents(sql: SqlStorage): Event[] {
  return sql
    .exec<{ json: string }>("SELECT json FROM events ORDER BY seq")
    .toArray()
    .map((r) => JSON.parse(r.json) as Event);
}

/**
 * Events strictly after `afterSeq`, oldest first, at most `limit`; `has_more` is exact because
 * one extra row is read and not returned.
 *
 * @example feedPage(sql, 0, 100) // the first 100 events
 */
export function feedPage(sql: SqlStorage, afterSeq: number, limit: number): FeedPage {
  const rows = sql
    .exec<{ json: string }>(
      "SELECT json FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
      afterSeq,
      limit + 1,
    )
    .toArray();
  const hasMore = rows.length > limit;
  const data = (hasMore ? rows.slice(0, limit) : rows).map((r) => JSON.parse(r.json) as Event);
  return {
    data,
    has_more: hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data[data.length - 1]?.id ?? null,
  };
}

/** Model turns so far (assistant events), for the `num_turns` of result events. */
export function countTurns(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT count(*) AS n FROM events WHERE type = 'assistant'").one()
    .n;
}
