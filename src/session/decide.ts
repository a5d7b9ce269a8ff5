import { planDecisionResult } from "../planner/decisions.ts";
import {
  type Decision,
  fail,
  MAX_APPROVABLE_PLAN_CHARS,
  type Outcome,
  ok,
  type Refusal,
  TERMINAL_POLL_WINDOW_MS,
} from "../protocol/index.ts";
import { appendEvents } from "./event-log.ts";
import { archiveSession, requestStep } from "./lifecycle.ts";
import { readPlan, writePlan } from "./plan-file.ts";
import { canExecuteRemotely } from "./planners.ts";
import type { SessionResult } from "./result.ts";
import { hasEnded, type SessionRow, updateRow } from "./session-row.ts";
import { closeWait, pendingWait } from "./waits.ts";

/**
 * Decisions on a pending ExitPlanMode (DESIGN.md "Decisions"): refusals first, then, in one
 * transaction, the decision row, the closed wait, the tool result event and the new state.
 * Synchronous on purpose: with no `await` between the "already decided?" check and the insert,
 * concurrent requests to the Durable Object serialise and exactly one of them wins.
 */

export interface DecisionContext {
  nowMs: number;
  /** The latest bearer-token events poll, or null when none happened. */
  terminalPolledAt: number | null;
  retentionMs: number;
}

/**
 * Records a decision and returns what happened, or the refusal.
 *
 * @example
 * const result = ctx.storage.transactionSync(() =>
 *   decide(sql, row, { tool_use_id: "toolu_1", decision: "approve" }, { nowMs, terminalPolledAt, retentionMs }),
 * ); // { ok: true, value: "approve" } or a 409 refusal
 */
export function decide(
  sql: SqlStorage,
  row: SessionRow,
  body: Decision,
  ctx: DecisionContext,
): SessionResult<Decision["decision"]> {
  const id = body.tool_use_id;
  const earlier = sql
    .exec<{ decision: string }>("SELECT decision FROM decisions WHERE tool_use_id = ?", id)
    .toArray()[0];
  if (earlier) {
    return fail(
      409,
      "already_decided",
      `The plan of ExitPlanMode call ${id} was already decided (${earlier.decision}); each plan gets exactly one decision.`,
    );
  }
  if (hasEnded(row)) {
    return fail(409, "session_ended", "This session has ended; start a new session to plan again.");
  }
  const wait = pendingWait(sql);
  if (wait === null || wait.kind !== "plan" || wait.tool_use_id !== id) {
    return fail(
      409,
      "not_pending",
      wait?.kind === "plan"
        ? `ExitPlanMode call ${id} is not the pending one; decide ${wait.tool_use_id} instead.`
        : `No plan is waiting for a decision under ${id}; wait until the session shows phase plan_ready.`,
    );
  }

  const plan = body.plan ?? readPlan(sql, row.plan_path)?.content ?? "";
  const editedByUser = body.plan !== undefined;
  const refusal = refuse(row, body, plan, ctx);
  if (refusal) return refusal;

  sql.exec(
    "INSERT INTO decisions (tool_use_id, decision, feedback, comments, decided_at) VALUES (?, ?, ?, ?, ?)",
    id,
    body.decision,
    body.feedback ?? null,
    body.comments ? JSON.stringify(body.comments) : null,
    ctx.nowMs,
  );
  if (editedByUser && body.decision !== "reject")
    writePlan(sql, row.plan_path, plan, true, ctx.nowMs);
  closeWait(sql, id, ctx.nowMs);
  const result = planDecisionResult(
    id,
    body.decision === "approve"
      ? { kind: "approve", plan, editedByUser, planPath: row.plan_path }
      : body.decision === "reject"
        ? {
            kind: "reject",
            feedback: body.feedback ?? "",
            comments: body.comments ?? [],
            planPath: row.plan_path,
          }
        : { kind: "teleport", plan },
  );
  appendEvents(
    sql,
    [
      {
        type: "user",
        message: { role: "user", content: [result] },
        decision: { tool_use_id: id, kind: body.decision },
      },
    ],
    ctx.nowMs,
  );

  switch (body.decision) {
    case "approve": {
      const outcome: Outcome = { kind: "approved", execution_target: "remote" };
      updateRow(sql, {
        permission_mode: body.permission_mode ?? row.pre_plan_mode,
        outcome: JSON.stringify(outcome),
        afk_due_at: null,
        updated_at: ctx.nowMs,
      });
      requestStep(sql, ctx.nowMs);
      break;
    }
    case "reject":
      updateRow(sql, {
        reject_count: row.reject_count + 1,
        afk_due_at: null,
        updated_at: ctx.nowMs,
      });
      requestStep(sql, ctx.nowMs);
      break;
    case "teleport": {
      // One execution point: the plan goes home and this session stops for good, at once.
      const outcome: Outcome = { kind: "teleport", execution_target: "local" };
      updateRow(sql, { outcome: JSON.stringify(outcome), afk_due_at: null, updated_at: ctx.nowMs });
      archiveSession(sql, { ...row, outcome: JSON.stringify(outcome) }, ctx.nowMs, ctx.retentionMs);
      break;
    }
  }
  return ok(body.decision);
}

function refuse(
  row: SessionRow,
  body: Decision,
  plan: string,
  ctx: DecisionContext,
): Refusal | null {
  if (body.decision === "reject") {
    const hasFeedback = (body.feedback ?? "").trim() !== "" || (body.comments ?? []).length > 0;
    return hasFeedback
      ? null
      : fail(
          400,
          "feedback_required",
          "Keeping the session planning needs feedback text or at least one comment, so the planner knows what to change.",
        );
  }
  if (plan.length > MAX_APPROVABLE_PLAN_CHARS) {
    return fail(
      409,
      "plan_too_large",
      `The plan has ${plan.length} characters, more than the ${MAX_APPROVABLE_PLAN_CHARS} that can be reviewed and approved; ask for a shorter plan (keep planning with feedback).`,
    );
  }
  if (body.decision === "approve") {
    if (!canExecuteRemotely(row.planner)) {
      return fail(
        409,
        "cannot_execute_remotely",
        `The ${row.planner} planner cannot carry out a plan in the cloud; send it to the terminal (teleport) instead.`,
      );
    }
    if (body.permission_mode === "plan") {
      return fail(
        400,
        "invalid_body",
        "permission_mode after an approval must be default or acceptEdits; approving leaves plan mode.",
      );
    }
    return null;
  }
  const polled = ctx.terminalPolledAt;
  if (polled === null || ctx.nowMs - polled > TERMINAL_POLL_WINDOW_MS) {
    return fail(
      409,
      "no_terminal",
      `No terminal has polled this session in the last ${TERMINAL_POLL_WINDOW_MS / 1000} s, so nothing would receive the plan; run \`planport attach ${row.id}\` and try again.`,
    );
  }
  return null;
}
