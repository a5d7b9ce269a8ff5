import type { Context } from "hono";
import type { z } from "zod";
import { type Failure, fail, ok, type Result } from "../protocol/index.ts";
import { OVERSIZED_BODY_DRAIN_BYTES, readBodyWithin } from "../request-body.ts";
import type { AppEnv } from "./app-env.ts";
import type { BodyLimit } from "./body-limits.ts";

/**
 * Input at the edge: JSON bodies and query strings checked with zod, every failure a 4xx with
 * a code and a sentence that names the field; a body over its route's limit (body-limits.ts)
 * is refused with 413 as soon as its count passes the limit, never read whole.
 */

/**
 * Deepest nesting of arrays and objects a body may have. Every request shape is a few levels
 * deep; refusing deeper bodies before parsing keeps a 5,000-deep body from overflowing a stack
 * anywhere later (zod, structured clone to the Durable Object, JSON.stringify).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Most values (member names, strings, numbers, literals, arrays and objects) a body may hold.
 * `JSON.parse` builds every one before zod can refuse the shape, and 4 MiB of `{},` is 1.3
 * million objects: ~60 MiB of heap spent on one request. The largest real body, a 500-turn
 * script, holds fewer; 250,000 empty objects cost the worker ~8 MiB.
 */
export const MAX_JSON_VALUES = 250_000;

/**
 * Why JSON text must not be parsed — nested deeper than `maxDepth`, or more than `maxValues`
 * values — or null; one linear pass that skips the insides of strings. Only a cheap
 * over-estimate of what `JSON.parse` would build: invalid JSON is left for it to refuse.
 *
 * @example
 * jsonShapeProblem('{"a":"[[[["}', { maxDepth: 1, maxValues: 10 }) // null: brackets inside a string do not count
 * jsonShapeProblem("[1,2,3]", { maxDepth: 64, maxValues: 3 }) // "too_many_values" (the array is one)
 */
export function jsonShapeProblem(
  text: string,
  limits: { maxDepth: number; maxValues: number },
): "too_deep" | "too_many_values" | null {
  let depth = 0;
  let values = 0;
  let inString = false;
  // After `[`, `,`, `:` or at the start, a character that can begin a number or literal does.
  let valueNext = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE || c === OPEN_BRACKET || c === OPEN_BRACE || (valueNext && startsScalar(c))) {
      if (++values > limits.maxValues) return "too_many_values";
      if (c === QUOTE) inString = true;
      else if (c !== OPEN_BRACKET && c !== OPEN_BRACE) valueNext = false;
      else if (++depth > limits.maxDepth) return "too_deep";
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
    if (c === OPEN_BRACKET || c === COMMA || c === COLON) valueNext = true;
    else if (c !== SPACE && c !== TAB && c !== LF && c !== CR) valueNext = false;
  }
  return null;
}

/** `-`, a digit, or the first letter of true, false and null. */
function startsScalar(c: number): boolean {
  return c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9) || c === 0x74 || c === 0x66 || c === 0x6e;
}
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads and validates a JSON body of at most `limit.bytes` (declared or counted as it
 * arrives); `schema` may be chosen by looking at the parsed JSON.
 *
 * @example
 * const body = await readJson(c, DecisionSchema, bodyLimit("decision"));
 * if (!body.ok) return sendError(c, body.error);
 */
export async function readJson<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S | ((json: unknown) => S),
  limit: BodyLimit,
): Promise<Result<z.infer<S>, Failure>> {
  const type = mediaType(c);
  if (type !== "application/json" && !type.endsWith("+json")) {
    return fail(
      400,
      "invalid_body",
      "Send the body as JSON with the header Content-Type: application/json.",
    );
  }
  const tooLarge = fail(
    413,
    "payload_too_large",
    `The body is larger than ${limit.bytes.toLocaleString("en-US")} bytes, the most ${limit.what} can need; send a smaller request.`,
  );
  // A body at most OVERSIZED_BODY_DRAIN_BYTES over the limit (the usual mistake: a little too
  // much) is read to its end and dropped, so the client is done sending and reads the refusal;
  // one declared larger is refused before a byte of it is read, one that streams on is cut off.
  if (Number(c.req.header("content-length")) > limit.bytes + OVERSIZED_BODY_DRAIN_BYTES) {
    return tooLarge;
  }
  const bytes = await readBodyWithin(c.req.raw.body, limit.bytes);
  if (bytes === null) return tooLarge;
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "")
    return fail(400, "invalid_json", "The body is empty; send a JSON object.");
  const problem = jsonShapeProblem(text, {
    maxDepth: MAX_JSON_DEPTH,
    maxValues: MAX_JSON_VALUES,
  });
  if (problem === "too_deep") {
    return fail(
      400,
      "invalid_json",
      `The body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep; no request needs that.`,
    );
  }
  if (problem === "too_many_values") {
    return fail(
      413,
      "payload_too_large",
      `The body holds more than ${MAX_JSON_VALUES.toLocaleString("en-US")} JSON values; no request needs that many. Send a smaller request.`,
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
