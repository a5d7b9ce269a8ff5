import { readFileSync } from "node:fs";
import { type BenchRow, formatNumber } from "./rows.ts";

/**
 * The figures test/bench/RESULTS.md records, in a form the bench can read
 * (test/bench/recorded.json, updated with RESULTS.md), and the comparison that warns when a
 * row of this run is worse than its record by more than the row's noise — so a row that slides
 * (issue 34: P4 from 1.22× to 1.62×, P8 from 3.6 to 1.0 M events/s) is named by the run that
 * shows it, not found a week later.
 *
 * @example
 * const warnings = compareWithRecord(rows, loadRecords());
 * for (const line of warnings.map(formatWarning)) console.error(line);
 */

/** One recorded figure: which row, which of its numbers, which way is better, and how noisy. */
export interface RecordedFigure {
  /** The row's id ("P4"). */
  id: string;
  /** Text the row's name contains, to tell rows of one id apart ("first snapshot"). */
  match: string;
  /** `ratio`: value ÷ baseline of the same run; `value`: the figure itself, in `unit`. */
  metric: "ratio" | "value";
  better: "lower" | "higher";
  /** The recorded figure (a ratio, or a value in `unit`). */
  recorded: number;
  /** How far runs of the same code spread around it; worse by more than this warns. */
  noise: number;
  /** Where in RESULTS.md the figure comes from (a date and a run), for the reader. */
  source: string;
}

export interface RecordWarning {
  figure: RecordedFigure;
  measured: number;
  unit: string;
}

/**
 * The recorded figures that this run's rows fall short of by more than their noise. Figures
 * whose row is not in this run (`--only`) are skipped; a row measured but not recorded is no
 * warning (a new row has nothing to slide from).
 *
 * @example
 * // p4Row: ratio 1.62
 * compareWithRecord([p4Row], [{ id: "P4", match: "first snapshot", metric: "ratio",
 *   better: "lower", recorded: 1.22, noise: 0.1, source: "" }]).length // 1
 */
export function compareWithRecord(
  rows: readonly BenchRow[],
  figures: readonly RecordedFigure[],
): RecordWarning[] {
  const warnings: RecordWarning[] = [];
  for (const figure of figures) {
    const row = rows.find((r) => r.id === figure.id && r.name.includes(figure.match));
    if (row === undefined) continue;
    const measured = figure.metric === "ratio" ? row.ratio : row.value;
    if (measured === null || !Number.isFinite(measured)) continue;
    const worse =
      figure.better === "lower"
        ? measured > figure.recorded + figure.noise
        : measured < figure.recorded - figure.noise;
    if (worse)
      warnings.push({ figure, measured, unit: figure.metric === "ratio" ? "×" : row.unit });
  }
  return warnings;
}

/**
 * The warning's line.
 *
 * @example
 * formatWarning(w) // "WARNING: P4 is 1.62× (recorded 1.22× ± 0.1; lower is better) — first snapshot …"
 */
export function formatWarning(warning: RecordWarning): string {
  const { figure, measured, unit } = warning;
  const show = (n: number) =>
    unit === "×" ? `${Number(n.toPrecision(3))}×` : `${formatNumber(n)} ${unit}`;
  const noise =
    unit === "×" ? `${Number(figure.noise.toPrecision(3))}` : formatNumber(figure.noise);
  return `WARNING: ${figure.id} is ${show(measured)} (recorded ${show(figure.recorded)} ± ${noise}; ${figure.better} is better; ${figure.source}) — ${figure.match}`;
}

/**
 * Reads and checks the recorded figures (throws naming the entry that is malformed, so a bad
 * edit of the file fails the run instead of silencing its warnings).
 *
 * @example parseRecords('[{"id":"P4","match":"first snapshot","metric":"ratio","better":"lower","recorded":1.22,"noise":0.1,"source":"2026-12-01"}]')
 */
export function parseRecords(json: string): RecordedFigure[] {
  const data: unknown = JSON.parse(json);
  if (!Array.isArray(data)) throw new Error("recorded.json: expected an array of figures");
  return data.map((entry: unknown, i) => {
    const e = entry as Partial<Record<keyof RecordedFigure, unknown>>;
    const problem =
      typeof e !== "object" || e === null
        ? "not an object"
        : typeof e.id !== "string" || typeof e.match !== "string"
          ? "id and match must be strings"
          : e.metric !== "ratio" && e.metric !== "value"
            ? 'metric must be "ratio" or "value"'
            : e.better !== "lower" && e.better !== "higher"
              ? 'better must be "lower" or "higher"'
              : typeof e.recorded !== "number" || !Number.isFinite(e.recorded)
                ? "recorded must be a number"
                : typeof e.noise !== "number" || !(e.noise >= 0)
                  ? "noise must be a number ≥ 0"
                  : typeof e.source !== "string"
                    ? "source must be a string"
                    : null;
    if (problem !== null) throw new Error(`recorded.json entry ${i}: ${problem}`);
    return e as RecordedFigure;
  });
}

/** test/bench/recorded.json, beside RESULTS.md. */
export function loadRecords(
  path: URL = new URL("./recorded.json", import.meta.url),
): RecordedFigure[] {
  return parseRecords(readFileSync(path, "utf8"));
}
