/**
 * What `git apply --check --3way` says it would do, read from its messages (run with
 * `LC_ALL=C`, so they are git's English ones). Pure. git's exit code alone does not tell: a
 * three-way merge that would leave conflict markers still exits 0 under `--check`.
 */

/** A file the diff cannot be applied to at all, and git's reason. */
export interface UnappliableFile {
  path: string;
  reason: string;
}

export interface ApplyCheckReport {
  /** Files the diff would change without conflicts. */
  clean: string[];
  /** Files a three-way merge would leave with conflict markers. */
  conflicts: string[];
  /** Files it would not apply to at all (context gone, already exists, does not exist…). */
  unappliable: UnappliableFile[];
  /** git's other error lines, verbatim: the check failed in a way not listed above. */
  problems: string[];
  /** git's warnings (a file mode that differs…), verbatim: worth showing, not a failure. */
  warnings: string[];
}

// Each anchored at the end: a name may hold quotes or colons, never a line break (the names
// were checked before git ran: repo-names.ts refuses control characters).
const APPLIED_CLEANLY = /^Applied patch to '(.+)' cleanly\.$/;
const APPLIED_WITH_CONFLICTS = /^Applied patch to '(.+)' with conflicts\.$/;
const PATCH_FAILED = /^error: patch failed: (.+):\d+$/;
const FILE_ERROR =
  /^error: (.+): (patch does not apply|does not match index|already exists in (?:working directory|index)|does not exist in index|No such file or directory|wrong type|does not exist)$/;
/** Said on the way to a successful direct application: not a problem in itself. */
const INFORMATIONAL =
  /^(?:error: repository lacks the necessary blob to (?:perform 3-way merge|fall back on 3-way merge)\.|Falling back to direct application\.\.\.|Falling back to three-way merge\.\.\.|Checking patch .*\.\.\.|Performing three-way merge\.\.\.)$/;

/**
 * @example
 * parseApplyCheck("Applied patch to 'a.ts' with conflicts.\nApplied patch to 'b.ts' cleanly.\n")
 * // → { clean: ["b.ts"], conflicts: ["a.ts"], unappliable: [], problems: [], warnings: [] }
 */
export function parseApplyCheck(output: string): ApplyCheckReport {
  const report: ApplyCheckReport = {
    clean: [],
    conflicts: [],
    unappliable: [],
    problems: [],
    warnings: [],
  };
  const failedAt = new Set<string>();
  for (const line of output.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    let m = APPLIED_CLEANLY.exec(line);
    if (m?.[1] !== undefined) {
      report.clean.push(m[1]);
      continue;
    }
    m = APPLIED_WITH_CONFLICTS.exec(line);
    if (m?.[1] !== undefined) {
      report.conflicts.push(m[1]);
      continue;
    }
    m = PATCH_FAILED.exec(line);
    if (m?.[1] !== undefined) {
      // "patch failed: a.ts:3" comes before "a.ts: patch does not apply"; one entry per file.
      failedAt.add(m[1]);
      continue;
    }
    m = FILE_ERROR.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) {
      failedAt.delete(m[1]);
      if (!report.unappliable.some((u) => u.path === m?.[1] && u.reason === m?.[2]))
        report.unappliable.push({ path: m[1], reason: m[2] });
      continue;
    }
    if (INFORMATIONAL.test(line)) continue;
    if (line.startsWith("warning: ")) {
      report.warnings.push(line);
      continue;
    }
    report.problems.push(line);
  }
  for (const path of failedAt) report.unappliable.push({ path, reason: "patch does not apply" });
  return report;
}
