import { z } from "zod";

/**
 * The event feed, in the Claude Agent SDK message style (docs/PROTOCOL.md "Event"). Every step
 * of a remote session is one of these, appended to the session's log; the poller and the review
 * page read nothing else.
 */

/** Tools that only look: allowed in every mode. */
export const READ_ONLY_TOOLS = ["Read", "Glob", "Grep", "LS"] as const;
/** Tools that change a file: the plan file in plan mode, repository paths after approval. */
export const WRITE_TOOLS = ["Write", "Edit"] as const;
/** Tools that open a wait for the user (a question, a plan review) instead of answering. */
export const WAIT_TOOLS = ["AskUserQuestion", "ExitPlanMode"] as const;

/** The tools a planning session offers, in the order `system/init` lists them. */
export const TOOL_NAMES = [...READ_ONLY_TOOLS, ...WRITE_TOOLS, ...WAIT_TOOLS] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The subagent tool of `deep` sessions: `{"description", "prompt"}` starts a read-only
 * conversation of its own whose final text is the call's tool result (docs/PROTOCOL.md
 * "Subagents"). Offered after {@link TOOL_NAMES} in deep sessions only.
 */
export const TASK_TOOL = "Task";
/** The tools of a `deep` session, in the order `system/init` lists them. */
export const DEEP_TOOL_NAMES = [...TOOL_NAMES, TASK_TOOL] as const;
/**
 * The command tool of remote execution: `{"command", "timeout"?, "description"?}` runs a shell
 * command in the session's container (docs/EXECUTION.md). Offered only after *approve*, never
 * in plan mode, and only where commands can run.
 */
export const BASH_TOOL = "Bash";
/** Any tool a session may offer. */
export type SessionToolName = (typeof DEEP_TOOL_NAMES)[number] | typeof BASH_TOOL;

/**
 * `success` ends a turn, not the session: a session that waits for a question or a plan review
 * writes it and lives on. Every other subtype ends the session.
 */
export const RESULT_SUBTYPES = [
  "success",
  "error_during_execution",
  "error_max_turns",
  "archived",
] as const;
export type ResultSubtype = (typeof RESULT_SUBTYPES)[number];
export const ENDING_RESULT_SUBTYPES: readonly string[] = RESULT_SUBTYPES.filter(
  (s) => s !== "success",
);

export const TextBlockSchema = z.object({ type: z.literal("text"), text: z.string() });
export type TextBlock = z.infer<typeof TextBlockSchema>;

export const ToolUseBlockSchema = z.object({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;

export const ToolResultBlockSchema = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(TextBlockSchema)]),
  is_error: z.boolean().optional(),
});
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;

export const UsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative().optional(),
  cache_read_input_tokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

const eventBase = {
  /** Sorts in append order (lexicographically and numerically). */
  id: z.string(),
  created_at: z.string(),
};

export const SystemInitEventSchema = z.object({
  ...eventBase,
  type: z.literal("system"),
  subtype: z.literal("init"),
  permission_mode: z.string(),
  planner: z.string(),
  tools: z.array(z.string()),
  session_id: z.string().optional(),
  plan_file: z.string().optional(),
  /** The planning workflow (`simple`, `visual`, `deep`); absent in logs of older servers. */
  variant: z.string().optional(),
  /** True when the session started from a draft (`seed_plan`): the plan file's revision 1. */
  seed_plan: z.boolean().optional(),
});

/**
 * A conversation was compacted: older turns were summarised because the next request would
 * have passed ~80 % of the context budget; `pre_tokens` is the size before.
 */
export const CompactBoundaryEventSchema = z.object({
  ...eventBase,
  type: z.literal("system"),
  subtype: z.literal("compact_boundary"),
  compact_metadata: z.object({
    trigger: z.enum(["auto", "manual"]),
    pre_tokens: z.number().int().nonnegative(),
  }),
  /** Set when a subagent's own conversation was compacted. */
  parent_tool_use_id: z.string().nullable().optional(),
  /** planport's addition: the summary the conversation continues from. */
  summary: z.string().optional(),
  /** planport's addition: the plan file revision carried into the continued conversation (0: none). */
  plan_revision: z.number().int().nonnegative().optional(),
});
export type CompactBoundaryEvent = z.infer<typeof CompactBoundaryEventSchema>;

/** Other system notices (status changes, planner notes); kept open so old clients still parse. */
export const SystemNoticeEventSchema = z.looseObject({
  ...eventBase,
  type: z.literal("system"),
  subtype: z.string(),
  message: z.string().optional(),
});

export const AssistantEventSchema = z.object({
  ...eventBase,
  type: z.literal("assistant"),
  message: z.object({
    role: z.literal("assistant"),
    content: z.array(z.union([TextBlockSchema, ToolUseBlockSchema])),
    model: z.string().optional(),
    usage: UsageSchema.optional(),
  }),
  /** Set on a subagent's events: the id of the `Task` call it works for (null or absent: top level). */
  parent_tool_use_id: z.string().nullable().optional(),
});

/** The three answers to a pending ExitPlanMode. */
export const DECISIONS = ["approve", "reject", "teleport"] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/**
 * The decision an ExitPlanMode tool result carries, as data: the one field planport's scanner
 * reads the verdict from (the prose and markers in `content` are for the model and for
 * Claude-compatible pollers). Only the server writes it, so no text anyone typed can forge it.
 */
export const EventDecisionSchema = z.object({
  tool_use_id: z.string(),
  kind: z.enum(DECISIONS),
  /**
   * Who decided (docs/PROTOCOL.md "Team review"): an owner label, or `review_link` for the
   * holder of the decision key. Absent on decisions recorded before it existed.
   */
  decided_by: z.string().optional(),
});
export type EventDecision = z.infer<typeof EventDecisionSchema>;

/** Who answered an AskUserQuestion: the user, or the AFK timeout for an absent user. */
export const ANSWERED_BY = ["user", "afk"] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

/**
 * The answers an AskUserQuestion tool result carries, as data (question text → answer; for the
 * AFK timeout, the answers saved before it). Only the server writes it; the prose in `content`
 * is for the model.
 */
export const EventAnswersSchema = z.object({
  tool_use_id: z.string(),
  answers: z.record(z.string(), z.string()),
  by: z.enum(ANSWERED_BY),
});
export type EventAnswers = z.infer<typeof EventAnswersSchema>;

export const UserEventSchema = z.object({
  ...eventBase,
  type: z.literal("user"),
  message: z.object({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(z.union([ToolResultBlockSchema, TextBlockSchema]))]),
  }),
  /** Set on the event that answers an ExitPlanMode (an extra field beyond the SDK shape). */
  decision: EventDecisionSchema.optional(),
  /** Set on the event that answers an AskUserQuestion. */
  answers: EventAnswersSchema.optional(),
  /** True on the tool result of a call the permission check refused (nothing ran). */
  permission_denied: z.boolean().optional(),
  /** Set on a subagent's events: the id of the `Task` call it works for (null or absent: top level). */
  parent_tool_use_id: z.string().nullable().optional(),
});

export const ResultEventSchema = z.object({
  ...eventBase,
  type: z.literal("result"),
  subtype: z.string(),
  is_error: z.boolean(),
  /** Model calls (assistant events) in the whole session so far, the same on every result. */
  num_turns: z.number().int().nonnegative(),
  /** A readable sentence for the ending subtypes (what failed, what to do). */
  message: z.string().optional(),
});

export const EventSchema = z.union([
  SystemInitEventSchema,
  SystemNoticeEventSchema,
  AssistantEventSchema,
  UserEventSchema,
  ResultEventSchema,
]);

export type SystemInitEvent = z.infer<typeof SystemInitEventSchema>;
export type SystemNoticeEvent = z.infer<typeof SystemNoticeEventSchema>;
export type AssistantEvent = z.infer<typeof AssistantEventSchema>;
export type UserEvent = z.infer<typeof UserEventSchema>;
export type ResultEvent = z.infer<typeof ResultEventSchema>;
export type Event = z.infer<typeof EventSchema>;

/** An event before the log gives it an id and a time. */
export type NewEvent = Event extends infer E
  ? E extends Event
    ? Omit<E, "id" | "created_at">
    : never
  : never;

/** `GET /v1/sessions/:id/events` answer. */
export const FeedPageSchema = z.object({
  data: z.array(EventSchema),
  has_more: z.boolean(),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
});
export type FeedPage = z.infer<typeof FeedPageSchema>;

export const FEED_LIMIT_DEFAULT = 100;
export const FEED_LIMIT_MAX = 1000;

/** The text of a tool result, whichever of the two protocol forms it came in. */
export function toolResultText(content: ToolResultBlock["content"]): string {
  return typeof content === "string" ? content : content.map((b) => b.text).join("");
}

/**
 * The `Task` call a subagent's event works for, or null for the session's own conversation
 * (absent and null both mean top level). Readers that classify the session — a scanner, a
 * transcript — skip events where this is not null.
 *
 * @example
 * parentToolUseIdOf({ …, type: "assistant", parent_tool_use_id: "toolu_task" }) // "toolu_task"
 */
export function parentToolUseIdOf(event: Event): string | null {
  const id = (event as { parent_tool_use_id?: unknown }).parent_tool_use_id;
  return typeof id === "string" ? id : null;
}

/**
 * The event as a compaction boundary, or null when it is not one.
 *
 * @example
 * compactBoundaryOf(event)?.compact_metadata.pre_tokens // 163204
 */
export function compactBoundaryOf(event: Event): CompactBoundaryEvent | null {
  if (event.type !== "system" || event.subtype !== "compact_boundary") return null;
  const parsed = CompactBoundaryEventSchema.safeParse(event);
  return parsed.success ? parsed.data : null;
}
