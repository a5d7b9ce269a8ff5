import { z } from "zod";
import type { Pending } from "../../protocol/index.ts";

/**
 * What the session waits for: an open AskUserQuestion or ExitPlanMode (at most one at a time),
 * and the answers saved so far for an open question.
 */

interface WaitRow {
  tool_use_id: string;
  kind: Pending["kind"];
  input: string;
  opened_at: number;
  partial_answers: string;
}

/** Opens a wait. Refuses a second one while another is open: the engine stops at the first. */
export function openWait(
  sql: SqlStorage,
  wait: { kind: Pending["kind"]; tool_use_id: string; input: Record<string, unknown> },
  nowMs: number,
): void {
  const open = pendingWait(sql);
  if (open !== null) {
    throw new Error(
      `Cannot open a wait for ${wait.tool_use_id}: ${open.tool_use_id} is still open; close it first.`,
    );
  }
  sql.exec(
    "INSERT INTO waits (tool_use_id, kind, input, opened_at) VALUES (?, ?, ?, ?)",
    wait.tool_use_id,
    wait.kind,
    JSON.stringify(wait.input),
    nowMs,
  );
}

/** The open wait, if any. */
export function pendingWait(sql: SqlStorage): Pending | null {
  const row = openRow(sql);
  if (!row) return null;
  return {
    kind: row.kind,
    tool_use_id: row.tool_use_id,
    input: JSON.parse(row.input) as Record<string, unknown>,
    opened_at: new Date(row.opened_at).toISOString(),
  };
}

function openRow(sql: SqlStorage): WaitRow | undefined {
  return sql
    .exec<Record<string, SqlStorageValue>>(
      "SELECT tool_use_id, kind, input, opened_at, partial_answers FROM waits WHERE closed_at IS NULL LIMIT 1",
    )
    .toArray()[0] as WaitRow | undefined;
}

/** Every call a wait was ever opened for (open or closed): their results are user input. */
export function waitedCalls(sql: SqlStorage): Set<string> {
  return new Set(
    sql
      .exec<{ tool_use_id: string }>("SELECT tool_use_id FROM waits")
      .toArray()
      .map((r) => r.tool_use_id),
  );
}

/** Closes the wait of this tool call (a no-op when it is not open). */
export function closeWait(sql: SqlStorage, toolUseId: string, nowMs: number): void {
  sql.exec(
    "UPDATE waits SET closed_at = ? WHERE tool_use_id = ? AND closed_at IS NULL",
    nowMs,
    toolUseId,
  );
}

/** Closes whatever wait is open (archive, session end). */
export function closeAnyWait(sql: SqlStorage, nowMs: number): void {
  sql.exec("UPDATE waits SET closed_at = ? WHERE closed_at IS NULL", nowMs);
}

/** Answers saved so far for a question call (empty when none, or unknown). */
export function partialAnswers(sql: SqlStorage, toolUseId: string): Record<string, string> {
  const row = sql
    .exec<{ partial_answers: string }>(
      "SELECT partial_answers FROM waits WHERE tool_use_id = ?",
      toolUseId,
    )
    .toArray()[0];
  return row ? (JSON.parse(row.partial_answers) as Record<string, string>) : {};
}

export function savePartialAnswers(
  sql: SqlStorage,
  toolUseId: string,
  answers: Record<string, string>,
): void {
  sql.exec(
    "UPDATE waits SET partial_answers = ? WHERE tool_use_id = ?",
    JSON.stringify(answers),
    toolUseId,
  );
}

const QuestionsInputSchema = z.object({
  questions: z.array(z.object({ question: z.string() })),
});

/**
 * The question texts of an AskUserQuestion input, in order; answers are keyed by these.
 *
 * @example questionTexts({ questions: [{ question: "Which DB?", options: [] }] }) // ["Which DB?"]
 */
export function questionTexts(input: Record<string, unknown>): string[] {
  const parsed = QuestionsInputSchema.safeParse(input);
  return parsed.success ? parsed.data.questions.map((q) => q.question) : [];
}
