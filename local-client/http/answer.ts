import type { z } from "zod";
import { ErrorBodySchema, MissingBlobsSchema } from "../../src/protocol/index.ts";
import { ApiError } from "./error.ts";
import { parseRetryAfter } from "./retry-after.ts";

/**
 * What a planport answer means: a 2xx body validated against its schema (a server that answers
 * something else is reported, never trusted), or the {@link ApiError} a non-2xx answer stands
 * for.
 */

/** The body as `schema` describes it; an {@link ApiError} `malformed_response` otherwise. */
export function parseBody<S extends z.ZodType>(
  res: { status: number; body: Uint8Array },
  schema: S,
  what: string,
): z.infer<S> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(res.body));
  } catch {
    throw new ApiError(
      res.status,
      "malformed_response",
      `${what} answered ${res.status} with a body that is not JSON`,
    );
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? ` (${issue.path.join(".") || "body"}: ${issue.message})` : "";
    throw new ApiError(
      res.status,
      "malformed_response",
      `${what} answered a body planport does not understand${where}; is the server a planport worker of a matching version?`,
    );
  }
  return parsed.data;
}

/**
 * The error a non-2xx answer stands for: the server's code and sentence when it sent the
 * protocol's error body, else `http_<status>`. `body` is null when it was too long to read.
 */
export function errorFrom(res: Response, body: Uint8Array | null): ApiError {
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), Date.now());
  let parsedBody: unknown = null;
  try {
    parsedBody = body === null ? null : JSON.parse(new TextDecoder().decode(body));
  } catch {
    // Not JSON: a proxy or a crashed worker; described below by status.
  }
  const parsed = ErrorBodySchema.safeParse(parsedBody);
  if (parsed.success) {
    const missing = MissingBlobsSchema.safeParse(parsedBody);
    return new ApiError(res.status, parsed.data.error.code, parsed.data.error.message, {
      retryAfterMs,
      ...(missing.success && { missing: missing.data.missing }),
    });
  }
  const said = `the server answered ${res.status} ${res.statusText}`.trim();
  return new ApiError(res.status, `http_${res.status}`, said, { retryAfterMs });
}
