import type { PermissionMode, ResolvedPlanner, ScriptedTurn, Variant } from "../protocol/index.ts";
import { initEvent } from "./events/init.ts";
import { appendEvents } from "./events/log.ts";
import { writePlan } from "./files/plan-file.ts";
import { requestStep } from "./lifecycle.ts";
import { insertRow, readRow, type SessionRecord } from "./session-row.ts";
import { planPathFor } from "./slug.ts";
import type { TeamRecord } from "./team/rules.ts";
import { writeTeam } from "./team/store.ts";

/**
 * What a new session is created with (resolved by `createSession`; not a wire shape).
 * `autostart: false` leaves the loop unscheduled, so tests can drive the session through its
 * port instead of the planning engine.
 */
export interface NewSession {
  id: string;
  owner: string;
  reviewKey: string;
  prompt: string;
  title: string;
  planner: ResolvedPlanner;
  variant: Variant;
  /** The best-of-N group, or null. */
  group: string | null;
  prePlanMode: PermissionMode;
  askTimeoutS: number | null;
  instructions: string | null;
  script: ScriptedTurn[] | null;
  /** A draft written elsewhere (`seed_plan`): the plan file's revision 1, or null. */
  seedPlan: string | null;
  snapshotId: string | null;
  maxTurns: number;
  origin: string;
  autostart: boolean;
  /** The view key, the approvers and the requester's label (team/rules.ts). */
  team: TeamRecord;
}

/**
 * Writes a new session into an empty object, inside the caller's transaction: the row, the
 * `system/init` event, the draft (`seed_plan`) as the plan file's revision 1 — written like any
 * plan write, so the review page, the planner's "the plan file exists" and its Read see it
 * before the first model call — and, unless `autostart` is false, the first step request. The
 * log's first event is written here and only here; the engine never writes it.
 */
export function writeNewSession(sql: SqlStorage, input: NewSession, nowMs: number): void {
  if (readRow(sql) !== null) throw new Error(`Session ${input.id} already exists.`);
  const planPath = planPathFor(input.id);
  const seeded = input.seedPlan !== null;
  insertRow(sql, newRow(input, planPath, nowMs));
  writeTeam(sql, input.team);
  appendEvents(
    sql,
    [initEvent({ id: input.id, planner: input.planner, planPath, variant: input.variant, seeded })],
    nowMs,
  );
  if (input.seedPlan !== null) writePlan(sql, planPath, input.seedPlan, false, nowMs);
  if (input.autostart) requestStep(sql, nowMs);
}

function newRow(input: NewSession, planPath: string, now: number): SessionRecord {
  return {
    id: input.id,
    owner: input.owner,
    review_key: input.reviewKey,
    title: input.title,
    prompt: input.prompt,
    planner: input.planner,
    variant: input.variant,
    group_name: input.group,
    instructions: input.instructions,
    ask_timeout_s: input.askTimeoutS,
    max_turns: input.maxTurns,
    script: input.script === null ? null : JSON.stringify(input.script),
    snapshot_id: input.snapshotId,
    plan_path: planPath,
    permission_mode: "plan",
    pre_plan_mode: input.prePlanMode,
    reject_count: 0,
    outcome_kind: null,
    outcome_subtype: null,
    ended_subtype: null,
    archived_at: null,
    executed: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    engine_state: null,
    step_due_at: null,
    wake_seq: 0,
    afk_due_at: null,
    purge_due_at: null,
    terminal_polled_at: null,
    person_seen_at: null,
    created_at: now,
    updated_at: now,
  };
}
