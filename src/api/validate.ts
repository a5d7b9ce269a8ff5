import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { type Failure, fail, ok, type Result } from "../protocol/index.ts";
import type { AppEnv } from "./auth.ts";
import { sendFailure } from "./errors.ts";

/**
 * Input at the edge: JSON bodies and query strings checked with zod, every failure a 4xx with
 * a code and a sentence that names the field; bodies over the limit are cut off with 413.
 */

/** Large enough for a 200,000-character plan edited by the user, or a long scripted session. */
export const MAX_JSON_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Deepest nesting of arrays and objects a body may have. Every request shape is a few levels
 * deep; refusing deeper bodies before parsing keeps a 5,000-deep body from overflowing a stack
 * anywhere later (zod, structured clone to the Durable Object, JSON.stringify).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether JSON text nests `[`/`{` deeper than `limit`, in one linear pass that skips strings.
 *
 * @example
 * jsonDepthExceeds('{"a":"[[[["}', 1) // false: brackets inside a string do not count
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Refuses JSON bodies over {@link MAX_JSON_BODY_BYTES} with 413 (counted while streaming when
 * there is no Content-Length).
 */
export const jsonBodyLimit = bodyLimit({
  maxSize: MAX_JSON_BODY_BYTES,
  onError: (c) =>
    sendFailure(
      c,
      413,
      "payload_too_large",
      `The body is larger than ${MAX_JSON_BODY_BYTES} bytes; send a smaller request.`,
    ),
});

/**
 * Reads and validates a JSON body; `schema` may be chosen by looking at the parsed JSON.
 *
 * @example
 * const body = await readJson(c, DecisionSchema);
 * if (!body.ok) return sendError(c, body.error);
 */
export async function readJson<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S | ((json: unknown) => S),
): Promise<Result<z.infer<S>, Failure>> {
  const type = mediaType(c);
  if (type !== "application/json" && !type.endsWith("+json")) {
    return fail(
      400,
      "invalid_body",
      "Send the body as JSON with the header Content-Type: application/json.",
    );
  }
  const text = await c.req.text();
  if (text.trim() === "")
    return fail(400, "invalid_json", "The body is empty; send a JSON object.");
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    return fail(
      400,
      "invalid_json",
      `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep; no request needs that.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : "unparseable";
    return fail(400, "invalid_json", `The body is not valid JSON (${reason}).`);
  }
  const parsed = (typeof schema === "function" ? schema(json) : schema).safeParse(json);
  return parsed.success
    ? ok(parsed.data)
    : fail(400, "invalid_body", `Invalid request body: ${describeIssue(parsed.error)}.`);
}

/**
 * The request's media type, without parameters, lower case ("" when absent).
 *
 * @example mediaType(c) // "application/json" for "Application/JSON; charset=utf-8"
 */
export function mediaType(c: Context): string {
  return (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Reads and validates the query string (the first value of each parameter).
 *
 * @example const query = readQuery(c, ListSessionsQuerySchema);
 */
export function readQuery<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Result<z.infer<S>, Failure> {
  const parsed = schema.safeParse(c.req.query());
  return parsed.success
    ? ok(parsed.data)
    : fail(400, "invalid_query", `Invalid query: ${describeIssue(parsed.error)}.`);
}

/** The first issue as "field: what is wrong" (the body as a whole has no field name). */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "it does not match the expected shape";
  const where = issue.path.length > 0 ? issue.path.map(String).join(".") : "body";
  return `${where}: ${issue.message}`;
}
