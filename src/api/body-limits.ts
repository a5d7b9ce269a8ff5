import {
  AnswerMessageSchema,
  CreateSessionSchema,
  DecisionSchema,
  MAX_COMMENT_CHARS,
  MissingBlobsRequestSchema,
  SuggestionBodySchema,
  TextMessageSchema,
} from "../protocol/index.ts";
import { MAX_STORED_JSON_CHARS } from "../session/schema.ts";
import { jsonBytesAtMost } from "./json-size.ts";

/**
 * The most bytes each JSON route reads, sized to its schema (issue 30, finding 6): a comment,
 * which anyone with the read-only share link may post, needs ~140 KB, not the 4 MiB every
 * route used to accept. Each limit is the largest body its schema accepts (json-size.ts:
 * every field at its maximum, free text at 6 bytes a character) plus {@link SLACK_BYTES}.
 * Computed once, on first use.
 */

/** Room for what a schema does not count: fields it ignores, extra whitespace, long numbers. */
export const SLACK_BYTES = 16 * 1024;

/**
 * What a scripted session's turns may add (only where `PLANPORT_ALLOW_SCRIPTED` is on): the
 * script is stored as at most {@link MAX_STORED_JSON_CHARS} characters of JSON, and each
 * arrives as at most 3 bytes of UTF-8 from a client that writes it as JSON.stringify does.
 * The turns' tool inputs have no schema of their own to size them by.
 */
export const SCRIPT_BODY_BYTES = 3 * MAX_STORED_JSON_CHARS;

/** A route's limit and what it is for, as the 413 names it. */
export interface BodyLimit {
  bytes: number;
  what: string;
}

/** Each JSON route's limit, by route. */
export type JsonRoute =
  | "session"
  | "scripted_session"
  | "message"
  | "decision"
  | "comment"
  | "blobs";

let limits: Record<JsonRoute, BodyLimit> | null = null;

/**
 * The limit of one JSON route.
 *
 * @example
 * bodyLimit("comment") // { bytes: 137_… , what: "a comment (a quote and a note of at most 10,000 characters each)" }
 */
export function bodyLimit(route: JsonRoute): BodyLimit {
  limits ??= deriveLimits();
  return limits[route];
}

function deriveLimits(): Record<JsonRoute, BodyLimit> {
  const sized = (bytes: number, what: string): BodyLimit => ({ bytes: bytes + SLACK_BYTES, what });
  const session = jsonBytesAtMost(CreateSessionSchema.omit({ script: true }));
  const chars = MAX_COMMENT_CHARS.toLocaleString("en-US");
  return {
    session: sized(session, "a session request (a prompt, instructions and a draft plan)"),
    scripted_session: sized(session + SCRIPT_BODY_BYTES, "a session request with a script"),
    message: sized(
      Math.max(jsonBytesAtMost(TextMessageSchema), jsonBytesAtMost(AnswerMessageSchema)),
      "a message or the answers to a question",
    ),
    decision: sized(
      jsonBytesAtMost(DecisionSchema),
      "a decision (an edited plan, feedback and comments)",
    ),
    comment: sized(
      jsonBytesAtMost(SuggestionBodySchema),
      `a comment (a quote and a note of at most ${chars} characters each)`,
    ),
    blobs: sized(jsonBytesAtMost(MissingBlobsRequestSchema), "a list of blob ids"),
  };
}
