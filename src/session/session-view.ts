import { type Pending, type Session, sessionOutcome } from "../protocol/index.ts";
import { canExecuteRemotely } from "./planners.ts";
import type { SessionRow } from "./session-row.ts";
import { deriveStatus } from "./status.ts";

/**
 * The Session as the API shows it (docs/PROTOCOL.md "Session"), from the stored row and the
 * open wait.
 * `origin` is the origin of the request, so the review link works wherever the worker runs.
 *
 * @example sessionView(row, null, "http://127.0.0.1:8787").review_url
 * // "http://127.0.0.1:8787/review/ses_…?key=…"
 */
export function sessionView(row: SessionRow, pending: Pending | null, origin: string): Session {
  const outcome =
    row.outcome_kind === null ? null : sessionOutcome(row.outcome_kind, row.outcome_subtype);
  const { status, phase } = deriveStatus({
    archived: row.archived_at !== null,
    endedWith: row.ended_subtype,
    waiting: pending?.kind ?? null,
    loopActive: row.step_due_at !== null,
    outcome,
    executed: row.executed === 1,
  });
  return {
    id: row.id,
    title: row.title,
    status,
    phase,
    permission_mode: row.permission_mode,
    planner: row.planner,
    can_execute_remotely: canExecuteRemotely(row.planner),
    reject_count: row.reject_count,
    outcome,
    review_url: `${origin}/review/${row.id}?key=${encodeURIComponent(row.review_key)}`,
    usage: {
      input_tokens: row.input_tokens,
      output_tokens: row.output_tokens,
      cost_usd: row.cost_usd === null ? null : roundCost(row.cost_usd),
    },
    variant: row.variant,
    group: row.group_name,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    pending,
    snapshot_id: row.snapshot_id,
    terminal_polled_at: row.terminal_polled_at === null ? null : iso(row.terminal_polled_at),
  };
}

/** Dollars to a millionth: the float sum of many small costs carries noise below that. */
function roundCost(dollars: number): number {
  return Math.round(dollars * 1e6) / 1e6;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
