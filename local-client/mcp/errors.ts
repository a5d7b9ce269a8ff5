import { errorText } from "../cli/advice.ts";
import type { ServerSource } from "../cli/connection.ts";
import { terminalText } from "../terminal/text.ts";
import { type ToolText, toolError } from "./texts.ts";

/**
 * Any failure of a tool as a tool error (`isError: true`) with the CLI's sentence
 * (cli/advice.ts, cli/sentences.ts), made safe to show: the server's and git's messages are
 * not ours.
 *
 * @example
 * errorResult(new ApiError(404, "not_found", "no such session"), { sessionId: "ses_…" })
 * // → { isError: true, content: [{ text: "No session ses_… is visible to this token: …" }] }
 */
export function errorResult(
  err: unknown,
  context: { source?: ServerSource; sessionId?: string } = {},
): ToolText {
  return toolError(terminalText(errorText(err, context)));
}
