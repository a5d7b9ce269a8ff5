import { z } from "zod";
import { DECISIONS, FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, TextBlockSchema } from "./events.ts";
import {
  MAX_APPROVABLE_PLAN_CHARS,
  MAX_COMMENT_CHARS,
  MAX_COMMENTS,
  MAX_COMMENTS_TOTAL_CHARS,
  MAX_QUESTIONS,
} from "./limits.ts";
import {
  GROUP_PATTERN,
  MAX_APPROVERS,
  OWNER_LABEL_PATTERN,
  PERMISSION_MODES,
  PLANNER_NAMES,
  VARIANTS,
} from "./session.ts";

/** Request bodies and query strings of docs/PROTOCOL.md "HTTP API", validated at the edge. */

export const SNAPSHOT_ID_PATTERN = /^[0-9a-f]{64}$/;
export const SESSION_ID_PATTERN = /^ses_[0-9a-z]{26}$/;

export const SnapshotIdSchema = z
  .string()
  .regex(SNAPSHOT_ID_PATTERN, "must be the 64-character hex sha256 of the snapshot body");

/** One model turn for the `scripted` planner (tests; replay of a recorded session). */
export const ScriptedTurnSchema = z.object({
  content: z
    .array(
      z.union([
        TextBlockSchema,
        z.object({
          type: z.literal("tool_use"),
          id: z.string().min(1).max(100).optional(),
          name: z.string().min(1).max(100),
          input: z.record(z.string(), z.unknown()),
        }),
      ]),
    )
    .min(1)
    .max(50),
  usage: z
    .object({
      input_tokens: z.number().int().nonnegative(),
      output_tokens: z.number().int().nonnegative(),
    })
    .optional(),
  /** Simulated model latency, so tests can act in the middle of a step. */
  delay_ms: z.number().int().min(0).max(60_000).optional(),
});
export type ScriptedTurn = z.infer<typeof ScriptedTurnSchema>;

export const CreateSessionSchema = z.object({
  prompt: z.string().trim().min(1, "must not be empty").max(100_000),
  snapshot_id: SnapshotIdSchema.optional(),
  title: z.string().trim().min(1).max(200).optional(),
  planner: z.enum(PLANNER_NAMES).optional(),
  /** The mode the session returns to after approval; planning always starts in `plan`. */
  permission_mode: z.enum(PERMISSION_MODES).optional(),
  /** AFK timeout for clarifying questions, off when absent. */
  ask_timeout_s: z.number().int().min(1).max(86_400).optional(),
  /** Custom planning instructions: replace the middle of the plan-mode workflow only. */
  instructions: z.string().max(20_000).optional(),
  /** Model turns for the `scripted` planner (only where the server allows it). */
  script: z.array(ScriptedTurnSchema).max(500).optional(),
  /** The planning workflow (default `simple`); 400 `variant_unavailable` if the planner cannot. */
  variant: z.enum(VARIANTS).optional(),
  /** Best-of-N: sessions started together to compare plans; deciding one supersedes the rest. */
  group: z.string().regex(GROUP_PATTERN, "must be 1–64 of a-z, 0-9, _ and -").optional(),
  /**
   * A draft written elsewhere (the user's local agent, an editor): the plan file holds it as
   * revision 1 before the first model call, and the planner refines it instead of starting over.
   */
  seed_plan: z
    .string()
    .min(1, "must not be empty")
    .max(MAX_APPROVABLE_PLAN_CHARS, `must be at most ${MAX_APPROVABLE_PLAN_CHARS} characters`)
    .optional(),
  /**
   * Owner labels whose approval the plan needs (docs/PROTOCOL.md "Team review"): approve and
   * teleport are then accepted only from one of their bearer tokens.
   */
  approvers: z
    .array(z.string().regex(OWNER_LABEL_PATTERN, "must be owner labels (a-z, 0-9, _ and -)"))
    .min(1, "must name at least one owner label (leave it out for no required approval)")
    .max(MAX_APPROVERS)
    .optional(),
});
export type CreateSession = z.infer<typeof CreateSessionSchema>;

export const ListSessionsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** A session id: list the sessions created before it. */
  before: z.string().regex(SESSION_ID_PATTERN, "must be a session id").optional(),
  /** Only the sessions of this best-of-N group. */
  group: z
    .string()
    .regex(GROUP_PATTERN, "must be a group name (1–64 of a-z, 0-9, _ and -)")
    .optional(),
  /** `me`: the sessions waiting for the caller's approval instead (docs/PROTOCOL.md "Team review"). */
  awaiting: z.literal("me", { error: "must be me" }).optional(),
});

export const FeedQuerySchema = z.object({
  after_id: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(FEED_LIMIT_MAX).default(FEED_LIMIT_DEFAULT),
});

/** `GET /v1/sessions/:id/plan?revision=N`: one stored revision instead of the latest. */
export const PlanQuerySchema = z.object({
  revision: z.coerce.number().int().min(1).max(1_000_000).optional(),
});

export const TextMessageSchema = z.object({ text: z.string().trim().min(1).max(100_000) });
export const AnswerMessageSchema = z.object({
  tool_use_id: z.string().min(1).max(200),
  /** Question text → answer (an option label, several joined by ", ", or free text). */
  answers: z
    .record(z.string().max(2_000), z.string().max(10_000))
    .refine((answers) => Object.keys(answers).length <= MAX_QUESTIONS, {
      error: `must answer at most ${MAX_QUESTIONS} questions (a question asks no more)`,
    })
    // Declared for the body's size limit (src/api/body-limits.ts), which reads JSON Schema.
    .meta({ maxProperties: MAX_QUESTIONS }),
});
export const MessageSchema = z.union([AnswerMessageSchema.strict(), TextMessageSchema.strict()]);
export type Message = z.infer<typeof MessageSchema>;

export const CommentSchema = z.object({
  quote: z.string().min(1).max(MAX_COMMENT_CHARS),
  text: z.string().trim().min(1).max(MAX_COMMENT_CHARS),
});
export type Comment = z.infer<typeof CommentSchema>;

/** A comment left as a suggestion (`POST /v1/sessions/:id/comments`). */
export const SuggestionBodySchema = CommentSchema;

export const DecisionSchema = z.object({
  tool_use_id: z.string().min(1).max(200),
  decision: z.enum(DECISIONS),
  feedback: z.string().max(100_000).optional(),
  /** A user-edited plan; replaces the plan file and marks it edited. */
  plan: z
    .string()
    .max(
      MAX_APPROVABLE_PLAN_CHARS,
      `must be at most ${MAX_APPROVABLE_PLAN_CHARS} characters: no longer plan can be approved`,
    )
    .optional(),
  comments: z
    .array(CommentSchema)
    .max(MAX_COMMENTS)
    .refine((comments) => commentChars(comments) <= MAX_COMMENTS_TOTAL_CHARS, {
      error: `must hold at most ${MAX_COMMENTS_TOTAL_CHARS} characters of quotes and notes together; send fewer or shorter comments`,
    })
    // Declared for the body's size limit (src/api/body-limits.ts): the strings inside hold at
    // most this many characters together.
    .meta({ maxTextChars: MAX_COMMENTS_TOTAL_CHARS })
    .optional(),
  permission_mode: z.enum(PERMISSION_MODES).optional(),
});
export type Decision = z.infer<typeof DecisionSchema>;

/** The characters of comments' quotes and notes together. */
function commentChars(comments: readonly Comment[]): number {
  let chars = 0;
  for (const comment of comments) chars += comment.quote.length + comment.text.length;
  return chars;
}

export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
