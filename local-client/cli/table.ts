import { personText, type Session } from "../../src/protocol/index.ts";
import { formatAge } from "../duration.ts";
import { terminalLine, truncateLine } from "../terminal/text.ts";
import { outcomeLabel } from "./sentences.ts";

/**
 * Readable views of sessions for `list` and `status`. Pure: the time is passed in. Every field
 * comes from the server, so each is made terminal-safe ({@link terminalLine}) before it is cut
 * to width: cutting first could leave half an escape sequence that swallows the rest of the row.
 */

const TITLE_MAX_CHARS = 40;

/** Phase in the words the CLI uses while polling. */
export function phaseLabel(phase: Session["phase"]): string {
  switch (phase) {
    case "running":
      return "researching";
    case "needs_input":
      return "needs input";
    case "plan_ready":
      return "plan ready";
    case "executing":
      return "executing";
    case "done":
      return "done";
  }
}

/**
 * A model cost in US dollars, or "—" when unknown (null, or a server that does not say):
 * cents from a cent on, four decimals below.
 *
 * @example
 * costLabel(0.01234) // → "$0.0123"; costLabel(null) // → "—"
 */
export function costLabel(usd: number | null | undefined): string {
  if (typeof usd !== "number" || !Number.isFinite(usd)) return "—";
  return usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/**
 * One row per session: id, title, status, phase, outcome (approved, sent to terminal, stopped,
 * superseded, failed, or "—": `done` alone does not say which), how often it was asked to keep
 * planning (the review page's button), cost, age, review link.
 */
export function sessionTable(
  sessions: readonly Session[],
  nowMs: number,
  opts: { requester?: boolean } = {},
): string {
  if (sessions.length === 0) return "No sessions yet. Start one with: planport plan <task…>";
  // `--awaiting-me` (team review) adds who asked for the approval, after the title.
  const from = opts.requester === true;
  const header = [
    "ID",
    "TITLE",
    ...(from ? ["FROM"] : []),
    "STATUS",
    "PHASE",
    "OUTCOME",
    KEEP_PLANNING_COLUMN,
    "COST",
    "AGE",
    "REVIEW",
  ];
  const rows = sessions.map((s) =>
    [
      s.id,
      truncateLine(terminalLine(s.title), TITLE_MAX_CHARS),
      ...(from ? [s.requested_by ?? "—"] : []),
      s.status,
      phaseLabel(s.phase),
      outcomeLabel(s),
      String(s.reject_count),
      costLabel(s.usage.cost_usd),
      formatAge(nowMs - Date.parse(s.created_at)),
      s.review_url,
    ].map(terminalLine),
  );
  return alignColumns(header, rows).join("\n");
}

/**
 * A header and rows of terminal-safe cells as aligned lines (two spaces between columns; the
 * last column is not padded). Shared by `list` and `watch`.
 *
 * @example
 * alignColumns(["ID", "PHASE"], [["ses_a", "done"]]) // → ["ID     PHASE", "ses_a  done"]
 */
export function alignColumns(header: readonly string[], rows: readonly string[][]): string[] {
  const width = (cell: string) => Array.from(cell).length;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat((widths[i] ?? 0) - width(c))))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The column of `reject_count`, in the review page's words (src/protocol/decision-words.ts). */
export const KEEP_PLANNING_COLUMN = "KEEP PLANNING";

/**
 * One session, field per line. Its two links say which is which: the review link decides, the
 * share link (team review) only reads.
 */
export function sessionDetails(
  s: Session,
  nowMs: number,
  /** More fields, shown after the outcome (status's plan adherence). */
  extra: readonly [string, string][] = [],
): string {
  const outcome = s.outcome
    ? `${s.outcome.kind}${s.outcome.execution_target ? ` (${s.outcome.execution_target})` : ""}${s.outcome.subtype ? ` ${s.outcome.subtype}` : ""}`
    : "none yet";
  const fields: [string, string][] = [
    ["id", s.id],
    ["title", s.title],
    ["status", s.status],
    ["phase", phaseLabel(s.phase)],
    ["planner", s.planner + (s.can_execute_remotely ? "" : " (cannot execute remotely)")],
    ["variant", s.variant ?? "simple"],
    ...(s.group ? ([["group", s.group]] as [string, string][]) : []),
    ...teamFields(s),
    ["keep planning", String(s.reject_count)],
    ["outcome", outcome],
    ...extra,
    ["age", formatAge(nowMs - Date.parse(s.created_at))],
    ["tokens", `${s.usage.input_tokens} in / ${s.usage.output_tokens} out`],
    ["cost", s.usage.cost_usd == null ? "unknown" : costLabel(s.usage.cost_usd)],
    ["review (decides)", s.review_url],
    ...(s.share_url !== undefined && s.share_url !== s.review_url
      ? ([["share (read-only)", s.share_url]] as [string, string][])
      : []),
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${k.padEnd(width)}  ${terminalLine(v)}`).join("\n");
}

/** Who asked, who must approve and who decided (team review); nothing from older servers. */
function teamFields(s: Session): [string, string][] {
  const fields: [string, string][] = [];
  if (s.requested_by !== undefined) fields.push(["requester", s.requested_by]);
  if (s.approvers !== undefined && s.approvers.length > 0) {
    fields.push(["approvers", s.approvers.join(", ")]);
  }
  if (s.decided_by) fields.push(["decided by", personText(s.decided_by)]);
  return fields;
}
