import type { Decision, DecisionKind, PlanDecisionRecord } from "../../protocol/index.ts";
import { ok } from "../../protocol/index.ts";
import { appendEvents } from "../events/log.ts";
import { readPlan, writePlan } from "../files/plan-file.ts";
import { archiveSession, requestStep } from "../lifecycle.ts";
import type { SessionResult } from "../result.ts";
import { hasEnded, readRow, type SessionRow, updateRow } from "../session-row.ts";
import type { Role } from "../team/rules.ts";
import { evaluateDecision } from "./rules.ts";
import { closeWait, pendingWait } from "./waits.ts";

/**
 * Records a decision on a pending ExitPlanMode, inside the caller's transaction: the rules in
 * rules.ts judge it, and its effects land together — the decision row, the user's
 * edited plan, the closed wait, the tool result event and the new state, then the next step or
 * (teleport) the archive. Synchronous on purpose: with no `await` between the "already
 * decided?" check and the insert, concurrent requests to the Durable Object serialise and
 * exactly one of them wins.
 */

export interface DecisionContext {
  nowMs: number;
  /** The latest bearer-token events poll, or null when none happened. */
  terminalPolledAt: number | null;
  retentionMs: number;
  /** Who decides, and the labels whose approval the plan needs (team/rules.ts). */
  decider?: Role;
  approvers?: readonly string[];
}

/** Records the decision and answers its kind, or the refusal (nothing changed then). */
export function recordDecision(
  sql: SqlStorage,
  row: SessionRow,
  body: Decision,
  ctx: DecisionContext,
): SessionResult<DecisionKind> {
  const earlier = sql
    .exec<{ decision: DecisionKind }>(
      "SELECT decision FROM decisions WHERE tool_use_id = ?",
      body.tool_use_id,
    )
    .toArray()[0];
  const judged = evaluateDecision(body, {
    sessionId: row.id,
    planner: row.planner,
    planPath: row.plan_path,
    prePlanMode: row.pre_plan_mode,
    rejectCount: row.reject_count,
    ended: hasEnded(row),
    earlier: earlier?.decision ?? null,
    wait: pendingWait(sql),
    plan: readPlan(sql, row.plan_path)?.content ?? null,
    nowMs: ctx.nowMs,
    terminalPolledAt: ctx.terminalPolledAt,
    decider: ctx.decider,
    approvers: ctx.approvers,
  });
  if (!judged.ok) return judged;
  const effects = judged.value;
  const { record } = effects;

  sql.exec(
    "INSERT INTO decisions (tool_use_id, decision, feedback, comments, plan_edited, decided_by, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    record.tool_use_id,
    record.kind,
    record.feedback,
    record.comments.length > 0 ? JSON.stringify(record.comments) : null,
    record.plan_edited ? 1 : 0,
    record.decided_by,
    ctx.nowMs,
  );
  if (effects.editedPlan !== null)
    writePlan(sql, row.plan_path, effects.editedPlan, true, ctx.nowMs);
  closeWait(sql, record.tool_use_id, ctx.nowMs);
  appendEvents(sql, [effects.event], ctx.nowMs);
  updateRow(sql, { ...effects.row, afk_due_at: null, updated_at: ctx.nowMs });
  if (effects.next === "step") requestStep(sql, ctx.nowMs);
  else {
    const updated = readRow(sql);
    if (updated !== null) archiveSession(sql, updated, ctx.nowMs, ctx.retentionMs);
  }
  return ok(record.kind);
}

/** The session's decisions, oldest first. */
export function listDecisions(sql: SqlStorage): PlanDecisionRecord[] {
  return sql
    .exec<{
      tool_use_id: string;
      decision: DecisionKind;
      feedback: string | null;
      comments: string | null;
      plan_edited: number;
      decided_by: string | null;
      decided_at: number;
    }>(
      "SELECT tool_use_id, decision, feedback, comments, plan_edited, decided_by, decided_at FROM decisions ORDER BY decided_at, rowid",
    )
    .toArray()
    .map((d) => ({
      tool_use_id: d.tool_use_id,
      kind: d.decision,
      feedback: d.feedback,
      comments:
        d.comments === null ? [] : (JSON.parse(d.comments) as PlanDecisionRecord["comments"]),
      plan_edited: d.plan_edited === 1,
      decided_by: d.decided_by,
      decided_at: new Date(d.decided_at).toISOString(),
    }));
}
