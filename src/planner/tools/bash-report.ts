import type { CommandOutput, RunResult } from "../../protocol/index.ts";

/**
 * A `Bash` run as the model reads it: stdout, then stderr, each with what was cut; how the
 * command ended (exit code, or the timeout that stopped it); what it changed in the tree and
 * what of that did not become part of the session's changes. Pure.
 *
 * @example
 * describeRun(result, { timeoutMs: 120_000, refused: [] })
 * // "1 passing\n\nExit code 0\n\nChanged by the command: created out.txt"
 */
export function describeRun(
  result: RunResult,
  opts: { timeoutMs: number; refused: readonly { path: string; why: string }[] },
): string {
  const parts: string[] = [];
  const stdout = streamText(result.stdout, "stdout");
  const stderr = streamText(result.stderr, "stderr");
  if (stdout !== "") parts.push(stdout);
  if (stderr !== "") parts.push(stdout === "" ? stderr : `stderr:\n${stderr}`);
  if (stdout === "" && stderr === "") parts.push("(no output)");
  parts.push(
    result.timed_out
      ? `Command timed out after ${opts.timeoutMs} ms and was stopped (every process it started was killed).`
      : result.exit_code === null
        ? "The command was ended by a signal."
        : `Exit code ${result.exit_code}`,
  );
  const changed = result.changes.map((c) => `${c.kind} ${c.path}`);
  if (changed.length > 0) parts.push(`Changed by the command: ${changed.join(", ")}`);
  if (opts.refused.length > 0) {
    const list = opts.refused.map((r) => `${r.path} (${r.why})`).join(", ");
    parts.push(`Not part of the session's changes: ${list}.`);
  }
  return parts.join("\n\n");
}

function streamText(output: CommandOutput, name: string): string {
  const text = output.text.replace(/\n$/, "");
  if (!output.cut) return text;
  const kept = new TextEncoder().encode(output.text).length;
  return `${text}\n[${name} cut: the first ${kept} of ${output.bytes} bytes are shown]`;
}
