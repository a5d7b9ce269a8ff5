import { UsageError } from "../errors.ts";
import type { ChangeCheck } from "../handoff/apply-changes.ts";
import { terminalLine } from "../terminal/text.ts";

/** `planport pull --check` and `--branch`, for people: the flags' rules and the check's report. */

export interface PullFlags {
  apply?: boolean;
  check?: boolean;
  branch?: string;
  repo?: string;
}

/**
 * What `pull` is asked to do; a {@link UsageError} for flags that do not go together.
 *
 * @example
 * pullMode({ check: true }) // → "check"
 * pullMode({ branch: "x" }) // throws: --branch needs --apply
 */
export function pullMode(flags: PullFlags): "print" | "check" | "apply" {
  if (flags.check && flags.apply) {
    throw new UsageError(
      "--check is a dry run and --apply applies: use one of them (--check first, then --apply)",
    );
  }
  if (flags.branch !== undefined && !flags.apply) {
    throw new UsageError("--branch NAME applies on a new branch: it needs --apply");
  }
  if (flags.check) return "check";
  return flags.apply ? "apply" : "print";
}

/**
 * The report of `pull --check`: either that every touched file would apply cleanly, or each
 * file in the way and why, with what to do. Names come from a diff a remote session wrote:
 * each is printed as one terminal-safe line.
 *
 * @example
 * checkText(check, "/src/shop", "ses_1")
 * // → "The changes of ses_1 would apply cleanly in /src/shop (2 files):\n  src/a.ts\n  …"
 */
export function checkText(check: ChangeCheck, repo: string, sessionId: string): string {
  const name = (p: string) => terminalLine(p);
  const count = `${check.paths.length} ${check.paths.length === 1 ? "file" : "files"}`;
  const lines: string[] = [];
  if (check.appliesCleanly) {
    lines.push(`The changes of ${sessionId} would apply cleanly in ${repo} (${count}):`);
    for (const p of check.paths) lines.push(`  ${name(p)}`);
    lines.push(
      `Apply them with \`planport pull ${sessionId} --apply\` (or --apply --branch NAME).`,
    );
  } else {
    lines.push(`The changes of ${sessionId} would not apply cleanly in ${repo} (${count}):`);
    for (const p of check.conflicts) lines.push(`  conflict     ${name(p)}`);
    for (const p of check.dirty) lines.push(`  uncommitted  ${name(p)}`);
    for (const u of check.unappliable)
      lines.push(`  cannot apply ${name(u.path)} (${terminalLine(u.reason)})`);
    for (const p of check.problems) lines.push(`  git: ${terminalLine(p)}`);
    if (check.dirty.length > 0)
      lines.push("Commit or stash the uncommitted files first: --apply refuses to touch them.");
    if (check.conflicts.length > 0)
      lines.push(
        "--apply would leave conflict markers in the conflicting files, for you to resolve.",
      );
    if (check.unappliable.length > 0 || check.problems.length > 0)
      lines.push(
        `Save the changes with \`planport pull ${sessionId} > changes.diff\` and merge by hand.`,
      );
  }
  for (const w of check.warnings) lines.push(`git: ${terminalLine(w)}`);
  return lines.join("\n");
}
