import { terminalJson, terminalText } from "../terminal/text.ts";
import { errorText } from "./advice.ts";
import type { ServerSource } from "./connection.ts";
import {
  type ErrorReason,
  exitCodeForError,
  exitCodeForReason,
  reasonForExitCode,
} from "./exit-codes.ts";
import { SessionEndedError } from "./sentences.ts";

/**
 * How the commands other than `plan` and `attach` (whose reporter.ts does it) answer: with
 * `--json`, results and errors as JSON lines on stdout and nothing else there; without it,
 * results on stdout and sentences on stderr. The error line has the shape of plan's
 * (docs/PROTOCOL.md "CLI"): `{"event":"error","reason","message","session_id"?}`.
 *
 * @example
 * const out = commandOutput(flags.json === true);
 * out.result({ event: "stopped", id });
 * return out.fail(err, { sessionId: id }); // → the exit code
 */
export interface CommandOutput {
  readonly json: boolean;
  /** One JSON line on stdout (`--json` only; nothing without it). */
  result(line: Record<string, unknown>): void;
  /** A sentence for people, on stderr (both modes: stdout stays JSON only). */
  say(message: string): void;
  /**
   * Reports a failure — the error line with `--json`, else `planport: <sentence>` on stderr —
   * and returns its exit code. Extra fields go on the JSON line.
   */
  fail(
    err: unknown,
    context?: { source?: ServerSource; sessionId?: string },
    extra?: Record<string, unknown>,
  ): number;
  /** Reports a failure of the given reason in these words; returns the reason's exit code. */
  error(reason: ErrorReason, message: string, sessionId?: string): number;
}

export function commandOutput(
  json: boolean,
  streams: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = {
    stdout: process.stdout,
    stderr: process.stderr,
  },
): CommandOutput {
  const line = (o: Record<string, unknown>) => streams.stdout.write(`${terminalJson(o)}\n`);
  const report = (
    reason: ErrorReason,
    message: string,
    sessionId: string | undefined,
    extra: Record<string, unknown>,
  ) => {
    if (json) {
      line({
        event: "error",
        reason,
        message,
        ...(sessionId === undefined ? {} : { session_id: sessionId }),
        ...extra,
      });
    } else streams.stderr.write(`planport: ${terminalText(message)}\n`);
  };
  return {
    json,
    result: (o) => {
      if (json) line(o);
    },
    say: (m) => streams.stderr.write(`${terminalText(m)}\n`),
    fail: (err, context = {}, extra = {}) => {
      const code = exitCodeForError(err);
      report(reasonForExitCode(code), errorText(err, context), context.sessionId, {
        // How it ended, for a script: approved, teleport, stopped, superseded or failed.
        ...(err instanceof SessionEndedError ? { ended: err.ending } : {}),
        ...extra,
      });
      return code;
    },
    error: (reason, message, sessionId) => {
      report(reason, message, sessionId, {});
      return exitCodeForReason(reason);
    },
  };
}
