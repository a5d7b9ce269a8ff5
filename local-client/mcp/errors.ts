import { errorText } from "../cli/advice.ts";
import type { ServerSource } from "../cli/connection.ts";
import { ApiError } from "../http/api.ts";
import { terminalText } from "../terminal/text.ts";
import { type ToolText, toolError } from "./texts.ts";

/**
 * Any failure of a tool as a tool error (`isError: true`) with the CLI's sentence
 * (cli/advice.ts), made safe to show: the server's and git's messages are not ours.
 *
 * @example
 * errorResult(new ApiError(404, "not_found", "no such session"), { sessionId: "ses_…" })
 * // → { isError: true, content: [{ text: "Session ses_… was not found: check the id, …" }] }
 */
export function errorResult(
  err: unknown,
  context: { source?: ServerSource; sessionId?: string } = {},
): ToolText {
  const message =
    err instanceof ApiError && err.status === 404 && context.sessionId
      ? `Session ${context.sessionId} was not found: check the id, and that the token is the one that created it.`
      : errorText(err, context);
  return toolError(terminalText(message));
}
