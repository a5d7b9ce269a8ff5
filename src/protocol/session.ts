import { z } from "zod";
import type { DecisionKind } from "./events.ts";
import { LastTestRunSchema } from "./execution.ts";

/** docs/PROTOCOL.md "Session". Extra fields beyond the protocol are additive only. */

export const SESSION_STATUSES = ["running", "idle", "requires_action", "archived"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const SESSION_PHASES = [
  "running",
  "needs_input",
  "plan_ready",
  "executing",
  "done",
] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** The planners a session can run with (`auto` is resolved to one of these at creation). */
export const RESOLVED_PLANNERS = [
  "offline",
  "anthropic",
  "openai",
  "workers-ai",
  "scripted",
] as const;
export type ResolvedPlanner = (typeof RESOLVED_PLANNERS)[number];

/** What a request or the server setting may name: a planner, or `auto`. */
export const PLANNER_NAMES = ["auto", ...RESOLVED_PLANNERS] as const;
export type PlannerName = (typeof PLANNER_NAMES)[number];

/**
 * Planning workflows: `simple` (one agent loop), `visual` (the plan carries a mermaid diagram
 * where the change has structure), `deep` (parallel read-only explorer subagents, a synthesis
 * and a critique pass before ExitPlanMode).
 */
export const VARIANTS = ["simple", "visual", "deep"] as const;
export type Variant = (typeof VARIANTS)[number];

/**
 * An owner label (`PLANPORT_TOKENS` `label:token`): what users type and see for an owner. A
 * token without one is shown as the first 8 characters (hex) of its owner hash, a form
 * configured labels may not take.
 */
export const OWNER_LABEL_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** `decided_by` of a decision made with the decision key (CONTRACT "Team review"). */
export const REVIEW_LINK = "review_link";
/** `from` of a suggestion left with the view key. */
export const SHARE_LINK = "share_link";

/**
 * A `decided_by` or suggestion `from` as people read it: labels as they are, the two link
 * names in words.
 *
 * @example personText("review_link") // "the review link"
 */
export function personText(name: string): string {
  if (name === REVIEW_LINK) return "the review link";
  if (name === SHARE_LINK) return "a share link";
  return name;
}

/** The most approvers one session may name. */
export const MAX_APPROVERS = 20;

/** A best-of-N group name: sessions started together to compare their plans. */
export const GROUP_PATTERN = /^[a-z0-9_-]{1,64}$/;

/**
 * Modes a session can be in. `plan` is the planning state; the others are what the session
 * returns to after approval. `bypassPermissions` is deliberately absent: fail closed.
 */
export const PERMISSION_MODES = ["plan", "default", "acceptEdits"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export const OUTCOME_KINDS = ["approved", "teleport", "terminated"] as const;
export type OutcomeKind = (typeof OUTCOME_KINDS)[number];
export const EXECUTION_TARGETS = ["remote", "local"] as const;
export type ExecutionTarget = (typeof EXECUTION_TARGETS)[number];

export const OutcomeSchema = z.object({
  kind: z.enum(OUTCOME_KINDS),
  execution_target: z.enum(EXECUTION_TARGETS).optional(),
  subtype: z.string().optional(),
});
export type Outcome = z.infer<typeof OutcomeSchema>;

/**
 * Where a plan is carried out, derived from the outcome's kind (never stored): an approved plan
 * in the cloud, a teleported one in the terminal; a terminated session carries out nothing.
 *
 * @example
 * executionTargetOf("teleport") // "local"
 */
export function executionTargetOf(kind: "approved" | "teleport"): ExecutionTarget;
export function executionTargetOf(kind: OutcomeKind): ExecutionTarget | undefined;
export function executionTargetOf(kind: OutcomeKind): ExecutionTarget | undefined {
  if (kind === "approved") return "remote";
  if (kind === "teleport") return "local";
  return undefined;
}

/**
 * The Session's `outcome` from what a session stores: the kind, and the ending subtype of a
 * terminated session.
 *
 * @example
 * sessionOutcome("approved", null) // { kind: "approved", execution_target: "remote" }
 * sessionOutcome("terminated", "archived") // { kind: "terminated", subtype: "archived" }
 */
export function sessionOutcome(kind: OutcomeKind, subtype: string | null): Outcome {
  const target = executionTargetOf(kind);
  return {
    kind,
    ...(target !== undefined && { execution_target: target }),
    ...(subtype !== null && { subtype }),
  };
}

/**
 * One decided ExitPlanMode as the session records it (its `decisions` table): the record the
 * engine, the offline planner and the review page read. The tool result's prose and markers
 * are written from it, never parsed back. Not a wire shape of the HTTP API.
 */
export interface PlanDecisionRecord {
  tool_use_id: string;
  kind: DecisionKind;
  /** The reviewer's feedback as typed, or null. */
  feedback: string | null;
  /** Comments on passages of the plan, as sent. */
  comments: { quote: string; text: string }[];
  /** The user sent an edited plan with this decision. */
  plan_edited: boolean;
  /** Who decided (an owner label, or `review_link`); null or absent on older decisions. */
  decided_by?: string | null;
  /** ISO time of the decision. */
  decided_at: string;
}

/** What the session waits for, if anything (additive: lets a UI find the open call). */
export const PendingSchema = z.object({
  kind: z.enum(["question", "plan"]),
  tool_use_id: z.string(),
  input: z.record(z.string(), z.unknown()),
  opened_at: z.string(),
});
export type Pending = z.infer<typeof PendingSchema>;

export const SessionSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(SESSION_STATUSES),
  phase: z.enum(SESSION_PHASES),
  permission_mode: z.string(),
  planner: z.string(),
  can_execute_remotely: z.boolean(),
  reject_count: z.number().int().nonnegative(),
  outcome: OutcomeSchema.nullable(),
  review_url: z.string(),
  usage: z.object({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    /** What the model calls cost, from the price table; null when the price is unknown. */
    cost_usd: z.number().nonnegative().nullable().optional(),
  }),
  /** The planning workflow (optional here only so older servers' answers still parse). */
  variant: z.enum(VARIANTS).optional(),
  /** The best-of-N group the session belongs to, or null. */
  group: z.string().nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  pending: PendingSchema.nullable().optional(),
  snapshot_id: z.string().nullable().optional(),
  /** ISO time of the last events poll made with a bearer token ("a terminal is polling"). */
  terminal_polled_at: z.string().nullable().optional(),
  /**
   * Team review (docs/PROTOCOL.md "Team review"), optional so older servers' answers parse:
   * the read-only link, the owner labels whose approval the plan needs (empty: anyone who may
   * decide), who approved or teleported it, and how the caller may act on the session.
   */
  share_url: z.string().optional(),
  approvers: z.array(z.string()).optional(),
  /** The requester's owner label. */
  requested_by: z.string().optional(),
  decided_by: z.string().nullable().optional(),
  your_role: z.enum(["requester", "approver", "decider", "viewer"]).optional(),
  /** How many suggestions readers left (GET /v1/sessions/:id/comments lists them). */
  suggestion_count: z.number().int().nonnegative().optional(),
  /** Remote execution's last test run (docs/EXECUTION.md); null before one ran. */
  last_test_run: LastTestRunSchema.nullable().optional(),
});
export type Session = z.infer<typeof SessionSchema>;

/** How the caller may act on a session (the Session's `your_role`). */
export type SessionRole = NonNullable<Session["your_role"]>;

/** One comment a reader left on a plan, kept as a suggestion for whoever decides. */
export const SuggestionSchema = z.object({
  id: z.number().int().positive(),
  quote: z.string(),
  text: z.string(),
  /** Who left it: an owner label, `review_link` or `share_link`. */
  from: z.string(),
  created_at: z.string(),
});
export type Suggestion = z.infer<typeof SuggestionSchema>;

export const SuggestionListSchema = z.object({ data: z.array(SuggestionSchema) });
export type SuggestionList = z.infer<typeof SuggestionListSchema>;

export const SessionListSchema = z.object({
  data: z.array(SessionSchema),
  has_more: z.boolean(),
});
export type SessionList = z.infer<typeof SessionListSchema>;

export const PlanFileSchema = z.object({
  path: z.string(),
  content: z.string(),
  revision: z.number().int().nonnegative(),
  edited_by_user: z.boolean(),
});
export type PlanFile = z.infer<typeof PlanFileSchema>;

export const SnapshotReceiptSchema = z.object({
  id: z.string(),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
});
export type SnapshotReceipt = z.infer<typeof SnapshotReceiptSchema>;
