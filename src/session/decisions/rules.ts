import { decisionEvent } from "../../planner/decisions.ts";
import {
  type Decision,
  type DecisionKind,
  fail,
  MAX_APPROVABLE_PLAN_CHARS,
  type NewEvent,
  type OutcomeKind,
  ok,
  type Pending,
  type PermissionMode,
  type PlanDecisionRecord,
  type Refusal,
  type ResolvedPlanner,
  TERMINAL_POLL_WINDOW_MS,
} from "../../protocol/index.ts";
import { canExecuteRemotely } from "../planners.ts";
import type { SessionResult } from "../result.ts";
import { approvalRefusal, type Role, roleLabel } from "../team/rules.ts";

/**
 * The rules of a decision on a pending ExitPlanMode (DESIGN.md "Decisions"), as one pure
 * function: the facts of the session in, the refusal or everything the decision changes out,
 * as data. The session Durable Object applies the changes in one transaction
 * (record.ts); the engine tests' in-memory session applies the very same ones, so the
 * two cannot drift apart.
 */

/** What a decision is judged against. */
export interface DecisionFacts {
  sessionId: string;
  planner: ResolvedPlanner;
  planPath: string;
  /** The mode an approval returns to unless the decision names one. */
  prePlanMode: PermissionMode;
  rejectCount: number;
  ended: boolean;
  /** The earlier decision on the same call, if there was one. */
  earlier: DecisionKind | null;
  wait: Pending | null;
  /** The plan file's content now, or null before the planner wrote one. */
  plan: string | null;
  nowMs: number;
  /** The latest bearer-token events poll, or null when none happened. */
  terminalPolledAt: number | null;
  /** Who decides (team/rules.ts); absent: nobody in particular (tests of the engine alone). */
  decider?: Role;
  /** The labels of the owners whose approval the plan needs; none or absent: any decider. */
  approvers?: readonly string[];
}

/** Everything an accepted decision changes. */
export interface DecisionEffects {
  /** The decisions-table row (its time is the decision's). */
  record: Omit<PlanDecisionRecord, "decided_at"> & { decided_by: string | null };
  /** A plan the user edited, to store as their revision of the plan file; else null. */
  editedPlan: string | null;
  /** The event that answers the ExitPlanMode: the tool result, and the verdict as data. */
  event: NewEvent;
  /** The session row's new values (the open wait closes, the AFK clock stops). */
  row: { permission_mode?: PermissionMode; reject_count?: number; outcome_kind?: OutcomeKind };
  /** What follows: the next loop step, or the archive (a teleport stops the session at once). */
  next: "step" | "archive";
}

/**
 * Judges a decision: the refusal, or what it changes.
 *
 * @example
 * evaluateDecision({ tool_use_id: "toolu_1", decision: "teleport" }, facts)
 * // { ok: true, value: { next: "archive", row: { outcome_kind: "teleport" }, … } }
 */
export function evaluateDecision(
  body: Decision,
  facts: DecisionFacts,
): SessionResult<DecisionEffects> {
  const id = body.tool_use_id;
  if (facts.earlier !== null) {
    return fail(
      409,
      "already_decided",
      `The plan of ExitPlanMode call ${id} was already decided (${facts.earlier}); each plan gets exactly one decision.`,
    );
  }
  if (facts.ended) {
    return fail(409, "session_ended", "This session has ended; start a new session to plan again.");
  }
  const wait = facts.wait;
  if (wait === null || wait.kind !== "plan" || wait.tool_use_id !== id) {
    return fail(
      409,
      "not_pending",
      wait?.kind === "plan"
        ? `ExitPlanMode call ${id} is not the pending one; decide ${wait.tool_use_id} instead.`
        : `No plan is waiting for a decision under ${id}; wait until the session shows phase plan_ready.`,
    );
  }
  if (facts.decider !== undefined) {
    const needsApproval = approvalRefusal(
      facts.decider,
      body.decision,
      facts.approvers ?? [],
      facts.sessionId,
    );
    if (needsApproval) return needsApproval;
  }
  const plan = body.plan ?? facts.plan ?? "";
  const refusal = refuse(body, plan, facts);
  if (refusal) return refusal;
  const effects = acceptedEffects(body, plan, facts);
  // Who decided, in the record and in the feed's copy of it: written here, once, with the rest.
  const decidedBy = facts.decider === undefined ? null : roleLabel(facts.decider);
  const event = effects.event;
  return ok({
    ...effects,
    record: { ...effects.record, decided_by: decidedBy },
    event:
      decidedBy !== null && event.type === "user" && event.decision
        ? { ...event, decision: { ...event.decision, decided_by: decidedBy } }
        : event,
  });
}

function acceptedEffects(
  body: Decision,
  plan: string,
  facts: DecisionFacts,
): Omit<DecisionEffects, "record"> & { record: Omit<PlanDecisionRecord, "decided_at"> } {
  const id = body.tool_use_id;
  const edited = body.plan !== undefined;
  // A rejection keeps the planner's file: the edit of a plan that was not accepted is dropped.
  const editedPlan = edited && body.decision !== "reject" ? plan : null;
  const record = {
    tool_use_id: id,
    kind: body.decision,
    feedback: body.feedback ?? null,
    comments: body.comments ?? [],
    plan_edited: editedPlan !== null,
  };
  switch (body.decision) {
    case "approve":
      return {
        record,
        editedPlan,
        event: decisionEvent(id, {
          kind: "approve",
          plan,
          editedByUser: edited,
          planPath: facts.planPath,
        }),
        row: {
          permission_mode: body.permission_mode ?? facts.prePlanMode,
          outcome_kind: "approved",
        },
        next: "step",
      };
    case "reject":
      return {
        record,
        editedPlan,
        event: decisionEvent(id, {
          kind: "reject",
          feedback: body.feedback ?? "",
          comments: body.comments ?? [],
          planPath: facts.planPath,
        }),
        row: { reject_count: facts.rejectCount + 1 },
        next: "step",
      };
    case "teleport":
      // One execution point: the plan goes home and this session stops for good, at once.
      return {
        record,
        editedPlan,
        event: decisionEvent(id, { kind: "teleport", plan }),
        row: { outcome_kind: "teleport" },
        next: "archive",
      };
  }
}

function refuse(body: Decision, plan: string, facts: DecisionFacts): Refusal | null {
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
    if (!canExecuteRemotely(facts.planner)) {
      return fail(
        409,
        "cannot_execute_remotely",
        `The ${facts.planner} planner cannot carry out a plan in the cloud; send it to the terminal (teleport) instead.`,
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
  const polled = facts.terminalPolledAt;
  if (polled === null || facts.nowMs - polled > TERMINAL_POLL_WINDOW_MS) {
    return fail(
      409,
      "no_terminal",
      `No terminal has polled this session in the last ${TERMINAL_POLL_WINDOW_MS / 1000} s, so nothing would receive the plan; run \`planport attach ${facts.sessionId}\` and try again.`,
    );
  }
  return null;
}
