import type { Session, SessionPhase } from "../../src/protocol/index.ts";
import { outcomeLabel } from "../cli/sentences.ts";
import { costLabel, phaseLabel } from "../cli/table.ts";
import { formatAge } from "../duration.ts";
import { retryWait } from "../http/retry-after.ts";
import { terminalLine, truncateLine } from "../terminal/text.ts";

/**
 * The functional core of `planport watch` (docs/PROTOCOL.md "CLI"): which phase changes one
 * list answer holds compared with what was seen before, the table's rows, and the bytes that
 * redraw the table in place. Pure: no I/O, no timers, the time and the terminal's size are
 * passed in. Every field comes from the server, so each is made terminal-safe
 * ({@link terminalLine}) before it is cut to width.
 */

/** One `--json` line: a session's phase changed (or was seen for the first time). */
export interface PhaseChange {
  event: "phase";
  id: string;
  phase: SessionPhase;
}

/** The last phase seen of each session, by id. */
export type SeenPhases = ReadonlyMap<string, SessionPhase>;

/**
 * The phase changes in `sessions` (a list answer, newest first) since `seen`, oldest session
 * first so a log reads in the order the sessions were started; and what has now been seen.
 * The first tick (`seen` empty) reports every listed session's current phase as a change from
 * nothing. A session that drops off the list (more than one page newer sessions) keeps its
 * last phase, so it is not reported again unless it comes back in another phase. A hostile
 * server that lists one id twice is read by its first (newest) entry.
 *
 * @example
 * const first = phaseChanges(new Map(), [{ id: "ses_a", phase: "running" }]);
 * // first.changes → [{ event: "phase", id: "ses_a", phase: "running" }]
 * phaseChanges(first.seen, [{ id: "ses_a", phase: "running" }]).changes // → []
 */
export function phaseChanges(
  seen: SeenPhases,
  sessions: readonly Pick<Session, "id" | "phase">[],
): { changes: PhaseChange[]; seen: Map<string, SessionPhase> } {
  const next = new Map(seen);
  const listed = new Set<string>();
  const changes: PhaseChange[] = [];
  for (const s of sessions) {
    if (listed.has(s.id)) continue;
    listed.add(s.id);
    if (next.get(s.id) !== s.phase) changes.push({ event: "phase", id: s.id, phase: s.phase });
    next.set(s.id, s.phase);
  }
  return { changes: changes.reverse(), seen: next };
}

/** The columns of the watch table. */
export const WATCH_HEADER = [
  "ID",
  "TITLE",
  "PHASE",
  "OUTCOME",
  // How often the reviewer asked to keep planning (the review page's button).
  "KEEP PLANNING",
  "AGE",
  "PLANNER",
  "COST",
] as const;

const TITLE_MAX_CHARS = 40;

/**
 * One row of cells per session (in {@link WATCH_HEADER}'s order), each one terminal-safe line.
 * Outcome (cli/sentences.ts) and cost are "—" while there is none.
 *
 * @example
 * watchRows([session], Date.parse(session.created_at) + 90_000)
 * // → [["ses_…", "Add OAuth login", "plan ready", "—", "0", "1m", "offline", "$0.00"]]
 */
export function watchRows(sessions: readonly Session[], nowMs: number): string[][] {
  return sessions.map((s) =>
    [
      s.id,
      truncateLine(terminalLine(s.title), TITLE_MAX_CHARS),
      phaseLabel(s.phase),
      outcomeLabel(s),
      String(s.reject_count),
      formatAge(nowMs - Date.parse(s.created_at)),
      s.planner,
      costLabel(s.usage.cost_usd),
    ].map(terminalLine),
  );
}

/**
 * The line printed for one phase change (the lines above the live table, and every line of
 * `watch` without a terminal): id, phase in the CLI's words with the outcome once there is one,
 * title. `session` is the listed session, when the list answer had it.
 *
 * @example
 * changeLine({ event: "phase", id: "ses_a", phase: "plan_ready" }, { title: "Add OAuth" })
 * // → "ses_a  plan ready  Add OAuth"
 * changeLine({ event: "phase", id: "ses_a", phase: "done" }, { title: "x", status: "archived", outcome: null })
 * // → "ses_a  done (stopped)  x"
 */
export function changeLine(
  change: PhaseChange,
  session?: Pick<Session, "title"> & Partial<Pick<Session, "status" | "outcome">>,
): string {
  const title = session ? truncateLine(terminalLine(session.title), TITLE_MAX_CHARS) : "";
  const outcome =
    session?.status === undefined
      ? "—"
      : outcomeLabel({
          status: session.status,
          phase: change.phase,
          outcome: session.outcome ?? null,
        });
  const phase = phaseLabel(change.phase) + (outcome === "—" ? "" : ` (${outcome})`);
  return [terminalLine(change.id), phase, title].filter((c) => c !== "").join("  ");
}

/**
 * The lines of the live table fitted to the terminal: each cut to `columns` (a line that wraps
 * would break the redraw, which counts lines), and at most `rows - 1` of them (the cursor can
 * only move back up over lines still on the screen), the last then saying how many are hidden.
 *
 * @example
 * fitToScreen(["ID  TITLE", "ses_a  x", "ses_b  y"], { columns: 80, rows: 3 })
 * // → ["ID  TITLE", "… 2 more"]
 */
export function fitToScreen(
  lines: readonly string[],
  screen: { columns: number; rows: number },
): string[] {
  const columns = Math.max(1, Math.floor(screen.columns));
  const room = Math.max(1, Math.floor(screen.rows) - 1);
  const cut = (l: string) => truncateLine(l, columns);
  if (lines.length <= room) return lines.map(cut);
  const kept = lines.slice(0, Math.max(0, room - 1));
  return [...kept, `… ${lines.length - kept.length} more`].map(cut);
}

/**
 * The bytes that erase a table of `height` lines drawn last (the cursor sits on the line below
 * it): up to its first line, then clear to the end of the screen. Nothing when there was none.
 *
 * @example
 * eraseLines(3) // → "\x1b[3F\x1b[J"
 */
export function eraseLines(height: number): string {
  return height > 0 ? `\x1b[${height}F\x1b[J` : "";
}

/** What a failed refresh leads to: another try after `waitMs`, or giving up. */
export type AfterFailure =
  | { kind: "retry"; failures: number; waitMs: number }
  | { kind: "give_up"; failures: number };

/**
 * The watch loop's rule for a failed refresh, as the poller's: a failure that may go away on
 * its own (no answer, 5xx, 429) is tolerated up to `maxFailures` in a row, the next refresh
 * coming after the usual interval or the server's `Retry-After` if longer (capped at 60 s: see
 * {@link retryWait}); anything else (401, a bad answer) gives up at once.
 *
 * @example
 * afterFailure(0, { transient: true, retryAfterMs: 10_000 }, 3_000, 5)
 * // → { kind: "retry", failures: 1, waitMs: 10_000 }
 */
export function afterFailure(
  failuresBefore: number,
  error: { transient: boolean; retryAfterMs?: number },
  intervalMs: number,
  maxFailures: number,
): AfterFailure {
  const failures = failuresBefore + 1;
  if (!error.transient || failures >= maxFailures) return { kind: "give_up", failures };
  return { kind: "retry", failures, waitMs: retryWait(error.retryAfterMs, intervalMs) };
}
