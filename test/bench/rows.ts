/**
 * The one row shape every benchmark section returns, the statistics they share, and the table
 * `npm run bench` prints. A row pairs planport's figure with a baseline measured in the same
 * run (or, where the target is absolute, the budget itself) and says whether the target is met.
 *
 * @example
 * const row = ratioRow({ id: "P1", name: "empty poll p50", unit: "ms", value: 1.2,
 *   baseline: 1.0, baselineName: "GET /v1/healthz p50", maxRatio: 1.3 });
 * console.log(formatTable([row]));
 */

export interface BenchRow {
  /** Which promise this row measures: "P1" … "P8". */
  id: string;
  /** What was measured, in product words, with the sample size. */
  name: string;
  /** planport's figure. */
  value: number;
  /** Unit of `value` and `baseline` ("ms", "%", "events/s"…). */
  unit: string;
  /** The reference figure, same unit; null when the row has none. */
  baseline: number | null;
  /** What the baseline is. */
  baselineName: string;
  /** value / baseline, when both exist. */
  ratio: number | null;
  /** The target as a reader would say it ("ratio ≤ 1.3", "≥ 1,000,000 events/s"). */
  target: string;
  /** Whether the target is met; null for rows that only inform. */
  met: boolean | null;
}

/**
 * A row whose target is a bound on value / baseline.
 *
 * @example ratioRow({ id: "P2", name: "poll p50 at 10,000 events", unit: "ms", value: 1.1,
 *   baseline: 1.0, baselineName: "poll p50 at 10 events", maxRatio: 1.2 }).met // true
 */
export function ratioRow(row: {
  id: string;
  name: string;
  unit: string;
  value: number;
  baseline: number;
  baselineName: string;
  maxRatio: number;
}): BenchRow {
  const ratio = row.value / row.baseline;
  return {
    id: row.id,
    name: row.name,
    value: row.value,
    unit: row.unit,
    baseline: row.baseline,
    baselineName: row.baselineName,
    ratio,
    target: `ratio ≤ ${row.maxRatio}`,
    met: ratio <= row.maxRatio,
  };
}

/**
 * A row whose target is an absolute bound on the value; the baseline only gives scale.
 *
 * @example limitRow({ id: "P8", name: "classifier", unit: "events/s", value: 9e6,
 *   baseline: 4e6, baselineName: "JSON.parse", atLeast: 1e6 }).met // true
 */
export function limitRow(row: {
  id: string;
  name: string;
  unit: string;
  value: number;
  baseline: number | null;
  baselineName: string;
  atMost?: number;
  atLeast?: number;
}): BenchRow {
  const parts: string[] = [];
  let met = true;
  if (row.atMost !== undefined) {
    parts.push(`≤ ${formatNumber(row.atMost)} ${row.unit}`);
    met &&= row.value <= row.atMost;
  }
  if (row.atLeast !== undefined) {
    parts.push(`≥ ${formatNumber(row.atLeast)} ${row.unit}`);
    met &&= row.value >= row.atLeast;
  }
  return {
    id: row.id,
    name: row.name,
    value: row.value,
    unit: row.unit,
    baseline: row.baseline,
    baselineName: row.baselineName,
    ratio: row.baseline === null || row.baseline === 0 ? null : row.value / row.baseline,
    target: parts.join(" and ") || "—",
    met: parts.length === 0 ? null : met,
  };
}

/** A figure reported for context, with no target of its own. */
export function infoRow(row: {
  id: string;
  name: string;
  unit: string;
  value: number;
  baseline: number | null;
  baselineName: string;
}): BenchRow {
  return {
    ...row,
    ratio: row.baseline === null || row.baseline === 0 ? null : row.value / row.baseline,
    target: "—",
    met: null,
  };
}

/**
 * The rows as one Markdown table (it reads well in a terminal too).
 *
 * @example console.log(formatTable(rows));
 */
export function formatTable(rows: readonly BenchRow[]): string {
  const header = ["", "measured", "value", "baseline (same run)", "ratio", "target", "met"];
  const lines = rows.map((r) => [
    r.id,
    r.name,
    `${formatNumber(r.value)} ${r.unit}`,
    r.baseline === null
      ? r.baselineName
      : `${formatNumber(r.baseline)} ${r.unit} — ${r.baselineName}`,
    r.ratio === null ? "—" : `${r.ratio.toFixed(2)}×`,
    r.target,
    r.met === null ? "—" : r.met ? "met" : "**not met**",
  ]);
  const escapePipes = (cell: string) => cell.replaceAll("|", "\\|");
  return [
    `| ${header.join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...lines.map((cells) => `| ${cells.map(escapePipes).join(" | ")} |`),
  ].join("\n");
}

/** Three significant digits, thousands separated: 0.512, 12.3, 1,234, 9,870,000. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString("en-US");
  if (abs === 0) return "0";
  return Number(n.toPrecision(3)).toString();
}

/**
 * The q-quantile (0…1) of the samples, by the nearest-rank method.
 *
 * @example quantile([3, 1, 2], 0.5) // 2
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new RangeError("quantile of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/**
 * The median (mean of the middle two for an even count).
 *
 * @example median([4, 1, 3, 2]) // 2.5
 */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new RangeError("median of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
