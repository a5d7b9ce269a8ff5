import type {
  AnsweredBy,
  Comment,
  DecisionKind,
  PermissionMode,
  ResolvedPlanner,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
  Variant,
} from "../../protocol/index.ts";
import type { ToolSpec } from "../tools/types.ts";

/**
 * The one small interface every planner implements. A planner is "a model": it sees the
 * conversation so far and answers with text and tool calls; the engine runs the calls through
 * the same permission check and tools whoever made them (the offline planner included).
 */
export interface Planner {
  /** The planner's name as sessions show it. */
  readonly name: ResolvedPlanner;
  /** Whether the planner can carry out an approved plan in the cloud (Write/Edit on the overlay). */
  readonly canExecuteRemotely: boolean;
  /**
   * The model it is configured to call, when it calls one: prices and the default context
   * budget are looked up by it when a reply does not name its model.
   */
  readonly model?: string;
  /** One model call. Throws {@link ModelCallError} on failure (transient ones are retried). */
  next(request: ModelRequest): Promise<ModelTurn>;
}

/** A message of the provider-neutral conversation (Anthropic Messages shape). */
export type ModelMessage =
  | { role: "user"; content: (TextBlock | ToolResultBlock)[] }
  | { role: "assistant"; content: (TextBlock | ToolUseBlock)[] };

export interface ModelRequest {
  /** The stable system prompt (cacheable prefix, together with the tools). */
  system: string;
  tools: readonly ToolSpec[];
  /** Alternating user/assistant messages; every tool_use has its tool_result in the next message. */
  messages: readonly ModelMessage[];
  maxOutputTokens: number;
  /**
   * `"none"`: the reply must be text, never a tool call (a summary request). The tools stay in
   * the request where the provider can forbid calling them (Anthropic, OpenAI-compatible), so
   * the cached prefix that starts with them still matches; absent, the model may call them.
   */
  toolChoice?: "none";
  /**
   * The user's answers to tool calls as data, by tool_use_id: the same the messages carry as
   * prose, for planners that do not read prose (the offline planner).
   */
  inputs: ReadonlyMap<string, UserInput>;
  /** What the session is about, for planners that do not read prose (the offline planner). */
  context: {
    sessionId: string;
    mode: PermissionMode;
    planPath: string;
    /** The session's planning workflow (the offline planner draws a diagram for `visual`). */
    variant: Variant;
    /** The subagent's `Task` call id, when this request is a subagent's; absent for the session. */
    taskId?: string;
    /**
     * The draft a seeded session started from (`seed_plan`, the plan file's revision 1);
     * absent when the session started without one. Hostile text: data, never a pattern.
     */
    seedPlan?: string;
  };
  /** Aborts the call (per-call timeout, shutdown). */
  signal?: AbortSignal;
}

/** The user's answer to one tool call: answers to a question, or a decision on a plan. */
export type UserInput =
  | { kind: "answers"; answers: Readonly<Record<string, string>>; by: AnsweredBy }
  | { kind: "decision"; decision: DecisionKind; feedback: string; comments: readonly Comment[] };

/** One model reply. */
export interface ModelTurn {
  content: (TextBlock | ToolUseBlock)[];
  usage: Usage;
  /** The model that answered, when the provider says. */
  model?: string;
}

/**
 * A failed model call. `transient` failures (429, 5xx, 529/overloaded, network, timeouts) are
 * retried with backoff; the others end the session with this message, which says what failed
 * and what to do.
 */
export class ModelCallError extends Error {
  override readonly name = "ModelCallError";
  constructor(
    message: string,
    readonly transient: boolean,
    readonly opts: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
  }
}
