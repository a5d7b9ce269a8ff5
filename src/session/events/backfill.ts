import type { DecisionKind, Event, EventAnswers } from "../../protocol/index.ts";
import { questionTexts } from "../decisions/waits.ts";

/**
 * Schema version 2 (src/session/schema.ts): events stored before the structured fields existed
 * get them from the records that were always kept — the `decision` from the decisions table,
 * the `answers` from the closed question wait, and `permission_denied` on the refusals the
 * permission check wrote — so a session from an older version reads like a new one. Runs once,
 * inside the migration's transaction; an event that already has the field is left alone.
 */
export function backfillEventRecords(sql: SqlStorage): void {
  const decisions = sql
    .exec<{ tool_use_id: string; decision: DecisionKind }>(
      "SELECT tool_use_id, decision FROM decisions",
    )
    .toArray();
  for (const d of decisions) {
    updateResultEvent(sql, d.tool_use_id, (event) =>
      event.decision
        ? null
        : { ...event, decision: { tool_use_id: d.tool_use_id, kind: d.decision } },
    );
  }

  const questions = sql
    .exec<{ tool_use_id: string; input: string; partial_answers: string }>(
      "SELECT tool_use_id, input, partial_answers FROM waits WHERE kind = 'question' AND closed_at IS NOT NULL",
    )
    .toArray();
  for (const q of questions) {
    const answers = JSON.parse(q.partial_answers) as Record<string, string>;
    // The user's answer closes a wait only once every question is answered; the AFK timeout
    // answers with whatever was saved, which never covers them all.
    const texts = questionTexts(JSON.parse(q.input) as Record<string, unknown>);
    const record: EventAnswers = {
      tool_use_id: q.tool_use_id,
      answers,
      by: texts.every((t) => t in answers) ? "user" : "afk",
    };
    updateResultEvent(sql, q.tool_use_id, (event) =>
      event.answers ? null : { ...event, answers: record },
    );
  }

  // The permission check's refusals were the only tool results that start like this.
  const denials = sql
    .exec<{ seq: number; json: string }>(
      `SELECT seq, json FROM events WHERE type = 'user'
        AND json_extract(json, '$.message.content[0].is_error') = 1
        AND substr(json_extract(json, '$.message.content[0].content'), 1, 19) = 'Permission denied: '`,
    )
    .toArray();
  for (const row of denials) {
    const event = JSON.parse(row.json) as Event;
    if (event.type !== "user" || event.permission_denied) continue;
    rewrite(sql, row.seq, { ...event, permission_denied: true });
  }
}

type UserEvent = Extract<Event, { type: "user" }>;

/** Rewrites the user event that carries the tool result of `toolUseId`, when `change` says how. */
function updateResultEvent(
  sql: SqlStorage,
  toolUseId: string,
  change: (event: UserEvent) => UserEvent | null,
): void {
  // The id as it appears inside the stored JSON; only a tool result names it as tool_use_id.
  const needle = `"tool_use_id":${JSON.stringify(toolUseId)}`;
  const rows = sql
    .exec<{ seq: number; json: string }>(
      "SELECT seq, json FROM events WHERE type = 'user' AND instr(json, ?) > 0",
      needle,
    )
    .toArray();
  for (const row of rows) {
    const event = JSON.parse(row.json) as Event;
    if (event.type !== "user" || typeof event.message.content === "string") continue;
    const answers = event.message.content.some(
      (b) => b.type === "tool_result" && b.tool_use_id === toolUseId,
    );
    const changed = answers ? change(event) : null;
    if (changed) rewrite(sql, row.seq, changed);
  }
}

function rewrite(sql: SqlStorage, seq: number, event: Event): void {
  sql.exec("UPDATE events SET json = ? WHERE seq = ?", JSON.stringify(event), seq);
}
