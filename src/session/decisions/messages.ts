import { answersEvent } from "../../planner/decisions.ts";
import type { Message } from "../../protocol/index.ts";
import { fail, ok } from "../../protocol/index.ts";
import { appendEvents } from "../events/log.ts";
import { requestStep } from "../lifecycle.ts";
import type { SessionResult } from "../result.ts";
import { hasEnded, type SessionRow, updateRow } from "../session-row.ts";
import {
  closeWait,
  partialAnswers,
  pendingWait,
  questionTexts,
  savePartialAnswers,
} from "./waits.ts";

/**
 * Messages from the user (DESIGN.md "Messages"): answers to the open AskUserQuestion, or free
 * text. Runs inside the caller's transaction.
 *
 * - Answers covering every question close the wait with the tool result and wake the loop; a
 *   subset is saved as partial answers (the AFK timeout answers with them), the wait stays open.
 * - Free text is appended as a `user` event. It wakes an idle session; while a wait is open the
 *   engine delivers it after the tool result, so it does not wake the loop then.
 *
 * @example
 * postMessage(sql, row, { text: "Also cover the CLI." }, Date.now()) // { ok: true, value: "queued" }
 */
export function postMessage(
  sql: SqlStorage,
  row: SessionRow,
  body: Message,
  nowMs: number,
): SessionResult<"answered" | "partial" | "queued"> {
  if (hasEnded(row)) {
    return fail(409, "session_ended", "This session has ended; start a new session to continue.");
  }
  if ("text" in body) {
    appendEvents(sql, [{ type: "user", message: { role: "user", content: body.text } }], nowMs);
    updateRow(sql, { updated_at: nowMs });
    if (pendingWait(sql) === null) requestStep(sql, nowMs);
    return ok("queued");
  }

  const id = body.tool_use_id;
  const wait = pendingWait(sql);
  if (wait === null || wait.kind !== "question" || wait.tool_use_id !== id) {
    return fail(
      409,
      "not_pending",
      `No question is waiting for answers under ${id}; answer the open AskUserQuestion (phase needs_input).`,
    );
  }
  const texts = questionTexts(wait.input);
  const unknown = Object.keys(body.answers).filter((q) => !texts.includes(q));
  if (unknown.length > 0) {
    return fail(
      400,
      "unknown_question",
      `"${unknown[0]}" is not one of the open questions; key answers by the exact question text (${texts.map((t) => `"${t}"`).join(", ")}).`,
    );
  }
  const given = Object.fromEntries(Object.entries(body.answers).filter(([, a]) => a.trim() !== ""));
  const merged = { ...partialAnswers(sql, id), ...given };
  if (!texts.every((q) => q in merged)) {
    savePartialAnswers(sql, id, merged);
    updateRow(sql, { updated_at: nowMs });
    return ok("partial");
  }
  const ordered = Object.fromEntries(texts.map((q) => [q, merged[q] ?? ""]));
  savePartialAnswers(sql, id, ordered);
  closeWait(sql, id, nowMs);
  appendEvents(sql, [answersEvent(id, ordered, "user")], nowMs);
  updateRow(sql, { afk_due_at: null, updated_at: nowMs });
  requestStep(sql, nowMs);
  return ok("answered");
}
