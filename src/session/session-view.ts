import { type Pending, type Session, type SessionRole, sessionOutcome } from "../protocol/index.ts";
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
/**
 * The team-review part of a Session (docs/PROTOCOL.md "Team review"): absent in the views made
 * inside migrations, before the team columns exist.
 */
export interface TeamView {
  viewKey: string;
  approvers: readonly string[];
  requestedBy: string;
  decidedBy: string | null;
  /**
   * How the caller may act. Only the requester and the decision key's holder see the decision
   * key; a viewer's and an approver's review_url is the share link ({@link reviewUrlKey}).
   */
  role: SessionRole;
  suggestionCount: number;
}

export function sessionView(
  row: SessionRow,
  pending: Pending | null,
  origin: string,
  team?: TeamView,
): Session {
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
    review_url: reviewLink(origin, row.id, reviewUrlKey(row, team)),
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
    ...(team !== undefined && {
      share_url: reviewLink(origin, row.id, team.viewKey),
      approvers: [...team.approvers],
      requested_by: team.requestedBy,
      decided_by: team.decidedBy,
      your_role: team.role,
      suggestion_count: team.suggestionCount,
    }),
  };
}

/**
 * The key in the caller's review_url: the decision key for the requester and its own holder
 * (and for webhooks, which go to the requester's receiver); the view key for everyone else. An
 * approver decides with their own token (`planport review`) — the decision key cannot approve
 * for them — so a link carrying it would only hand whoever they forward it to the power to
 * keep planning, answer and stop.
 */
function reviewUrlKey(row: SessionRow, team: TeamView | undefined): string {
  const shareOnly = team?.role === "viewer" || team?.role === "approver";
  return shareOnly ? team.viewKey : row.review_key;
}

function reviewLink(origin: string, id: string, key: string): string {
  return `${origin}/review/${id}?key=${encodeURIComponent(key)}`;
}

/** Dollars to a millionth: the float sum of many small costs carries noise below that. */
function roundCost(dollars: number): number {
  return Math.round(dollars * 1e6) / 1e6;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
