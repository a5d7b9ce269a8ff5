import { TOP_FILES } from "./bm25.ts";

/** The numbers the benchmark reports. Pure. */

/**
 * recall@k = |gold ∩ first k named| / |gold|; 0 for an empty gold (never the case in tasks.json).
 *
 * @example
 * recallAt(["a.ts", "b.ts"], ["c.ts", "a.ts"]); // 0.5
 */
export function recallAt(
  gold: readonly string[],
  named: readonly string[],
  k: number = TOP_FILES,
): number {
  if (gold.length === 0) return 0;
  const first = new Set(named.slice(0, k));
  return gold.filter((path) => first.has(path)).length / gold.length;
}

/**
 * Acc@k: 1 when the first k named files hold a gold file, else 0 (so its mean is the share of
 * tasks where the method put a file the fix changed among its first k).
 *
 * @example
 * hitAt(["a.ts", "b.ts"], ["c.ts", "b.ts"], 1); // 0
 * hitAt(["a.ts", "b.ts"], ["c.ts", "b.ts"], 5); // 1
 */
export function hitAt(gold: readonly string[], named: readonly string[], k: number): number {
  const first = new Set(named.slice(0, k));
  return gold.some((path) => first.has(path)) ? 1 : 0;
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The nearest-rank percentile: the smallest value with at least `p`% of the values at or
 * below it.
 *
 * @example
 * percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95); // 10
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** A markdown table; cells are written as given. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]) {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** 0.8333 → "0.83"; null → "—". */
export function formatRecall(value: number | null): string {
  return value === null ? "—" : value.toFixed(2);
}

/** 1234.5 → "1,235 ms"; null → "—". */
export function formatMs(value: number | null): string {
  return value === null ? "—" : `${Math.round(value).toLocaleString("en-US")} ms`;
}
