import { describe, expect, it } from "vitest";
import {
  compareWithRecord,
  formatWarning,
  loadRecords,
  parseRecords,
  type RecordedFigure,
} from "../bench/recorded.ts";
import { type BenchRow, limitRow, ratioRow } from "../bench/rows.ts";

const p4 = (value: number): BenchRow =>
  ratioRow({
    id: "P4",
    name: "first snapshot of 10,000 files: collect + incremental upload of every blob, median of 7",
    unit: "ms",
    value,
    baseline: 1000,
    baselineName: "git archive HEAD | gzip -6, same tree",
    maxRatio: 1.5,
  });
const p8 = (value: number, baseline: number): BenchRow =>
  limitRow({
    id: "P8",
    name: "classifier throughput, 200,006 events in pages of 1,000, median of 9",
    unit: "events/s",
    value,
    baseline,
    baselineName: "JSON.parse of the same feed pages",
    atLeast: 1_000_000,
  });
const figure = (f: Partial<RecordedFigure>): RecordedFigure => ({
  id: "P4",
  match: "first snapshot",
  metric: "ratio",
  better: "lower",
  recorded: 1.22,
  noise: 0.1,
  source: "RESULTS 2026-12-01",
  ...f,
});

describe("compareWithRecord", () => {
  it("warns when a lower-is-better ratio rose by more than its noise, and only then", () => {
    expect(compareWithRecord([p4(1620)], [figure({})])).toEqual([
      { figure: figure({}), measured: 1.62, unit: "×" },
    ]);
    expect(compareWithRecord([p4(1320)], [figure({})])).toEqual([]); // 1.32: within 1.22 ± 0.1
    expect(compareWithRecord([p4(1330)], [figure({})])).toHaveLength(1);
    expect(compareWithRecord([p4(900)], [figure({})])).toEqual([]); // better never warns
  });

  it("warns when a higher-is-better value or ratio fell by more than its noise", () => {
    const value = figure({
      id: "P8",
      match: "classifier throughput",
      metric: "value",
      better: "higher",
      recorded: 3_600_000,
      noise: 1_000_000,
    });
    const ratio = { ...value, metric: "ratio" as const, recorded: 4.2, noise: 0.8 };
    expect(compareWithRecord([p8(2_700_000, 700_000)], [value, ratio])).toEqual([]);
    const slid = compareWithRecord([p8(1_000_000, 600_000)], [value, ratio]);
    expect(slid.map((w) => [w.figure.metric, w.unit])).toEqual([
      ["value", "events/s"],
      ["ratio", "×"],
    ]);
    expect(slid[1]?.measured).toBeCloseTo(1.667, 3);
  });

  it("skips figures whose row is not in this run, and rows nobody recorded", () => {
    expect(
      compareWithRecord([p4(5000)], [figure({ id: "P1", match: "as terminals poll" })]),
    ).toEqual([]);
    expect(compareWithRecord([], [figure({})])).toEqual([]);
    // The same id, another row: the name must contain the figure's text.
    expect(compareWithRecord([p4(5000)], [figure({ match: "of which the upload" })])).toEqual([]);
  });

  it("a row without a baseline has no ratio to compare", () => {
    const row = limitRow({
      id: "P7",
      name: "load: errors in 4,000 polls",
      unit: "errors",
      value: 3,
      baseline: null,
      baselineName: "—",
      atMost: 0,
    });
    expect(compareWithRecord([row], [figure({ id: "P7", match: "load: errors" })])).toEqual([]);
    const errors = figure({
      id: "P7",
      match: "load: errors",
      metric: "value",
      recorded: 0,
      noise: 0,
    });
    expect(compareWithRecord([row], [errors]).map((w) => w.measured)).toEqual([3]);
  });
});

describe("formatWarning", () => {
  it("names the row, the measured and recorded figures and the noise", () => {
    const [warning] = compareWithRecord([p4(1620)], [figure({})]);
    expect(warning && formatWarning(warning)).toBe(
      "WARNING: P4 is 1.62× (recorded 1.22× ± 0.1; lower is better; RESULTS 2026-12-01) — first snapshot",
    );
    const [slow] = compareWithRecord(
      [p8(1_000_000, 600_000)],
      [
        figure({
          id: "P8",
          match: "classifier",
          metric: "value",
          better: "higher",
          recorded: 3_618_245,
          noise: 1e6,
        }),
      ],
    );
    expect(slow && formatWarning(slow)).toBe(
      "WARNING: P8 is 1,000,000 events/s (recorded 3,618,245 events/s ± 1,000,000; higher is better; RESULTS 2026-12-01) — classifier",
    );
  });
});

describe("the recorded figures", () => {
  it("recorded.json parses, and every entry names a row id of the bench", () => {
    const figures = loadRecords();
    expect(figures.length).toBeGreaterThan(0);
    for (const f of figures) expect(f.id).toMatch(/^P\d+$/);
    expect(figures.some((f) => f.id === "P4")).toBe(true);
    expect(figures.some((f) => f.id === "P8")).toBe(true);
  });

  it("a malformed entry fails loudly, naming it", () => {
    expect(() => parseRecords("{}")).toThrow(/array/);
    expect(() => parseRecords(JSON.stringify([figure({}), { ...figure({}), noise: -1 }]))).toThrow(
      /entry 1: noise/,
    );
    expect(() => parseRecords(JSON.stringify([{ ...figure({}), better: "up" }]))).toThrow(
      /entry 0: better/,
    );
  });
});
