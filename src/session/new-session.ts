import type { PermissionMode, ScriptedTurn } from "../protocol/index.ts";
import { TOOL_NAMES } from "../protocol/index.ts";
import { appendEvents } from "./event-log.ts";
import { requestStep } from "./lifecycle.ts";
import type { ResolvedPlanner } from "./planners.ts";
import { insertRow, readRow, type SessionRecord } from "./session-row.ts";
import { planPathFor } from "./slug.ts";

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
  prePlanMode: PermissionMode;
  askTimeoutS: number | null;
  instructions: string | null;
  script: ScriptedTurn[] | null;
  snapshotId: string | null;
  maxTurns: number;
  origin: string;
  autostart: boolean;
}

/**
 * Writes a new session into an empty object: the row, the `system/init` event (plan mode, the
 * planner, the tools, the plan file), and, unless `autostart` is false, the first step request.
 *
 * @example ctx.storage.transactionSync(() => writeNewSession(sql, input, Date.now()));
 */
export function writeNewSession(sql: SqlStorage, input: NewSession, nowMs: number): void {
  if (readRow(sql) !== null) throw new Error(`Session ${input.id} already exists.`);
  const planPath = planPathFor(input.id);
  insertRow(sql, newRow(input, planPath, nowMs));
  appendEvents(
    sql,
    [
      {
        type: "system",
        subtype: "init",
        permission_mode: "plan",
        planner: input.planner,
        tools: [...TOOL_NAMES],
        session_id: input.id,
        plan_file: planPath,
      },
    ],
    nowMs,
  );
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
    instructions: input.instructions,
    ask_timeout_s: input.askTimeoutS,
    max_turns: input.maxTurns,
    script: input.script === null ? null : JSON.stringify(input.script),
    snapshot_id: input.snapshotId,
    plan_path: planPath,
    permission_mode: "plan",
    pre_plan_mode: input.prePlanMode,
    reject_count: 0,
    outcome: null,
    ended_subtype: null,
    archived_at: null,
    executed: 0,
    input_tokens: 0,
    output_tokens: 0,
    engine_state: null,
    step_due_at: null,
    wake_seq: 0,
    afk_due_at: null,
    purge_due_at: null,
    terminal_polled_at: null,
    created_at: now,
    updated_at: now,
  };
}
