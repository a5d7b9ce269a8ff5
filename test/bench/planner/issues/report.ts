import { TOP_FILES } from "../bm25.ts";
import { formatMs, hitAt, markdownTable, mean, median, percentile, recallAt } from "../metrics.ts";
import { bucketOf, type PlannerResult, type ScaleResult, SIZE_BUCKETS } from "../report.ts";
import type { Split } from "./rules.ts";

/**
 * The issue benchmark's results file and its tables. Pure: per-task results in, markdown out.
 * Every method is scored the same way on the files it names, in order: Acc@1, Acc@5 (a gold
 * file among the first 1 or 5) and recall@8.
 */

/** One issue task's results, or why it could not be measured (the same for every method). */
export interface IssueTaskResult {
  id: string;
  repo: string;
  language: string;
  split: Split;
  /** Held out and chosen blind in issue 31 (sources.ts `blind`); absent in older results. */
  blind?: boolean;
  parent_files: number;
  snapshot_files: number | null;
  gold: string[];
  prompt_chars: number;
  error?: string;
  /** null in a --bm25-only run. */
  planner?: PlannerResult | null;
  /** The first 8 non-test source files by BM25 on the issue text. */
  bm25?: { top: string[] };
  /** With --twice: whether the second plan was byte for byte the first. */
  repeat?: "same" | "different" | "failed";
}

export interface IssueResultsFile {
  meta: Record<string, string | number | null>;
  results: IssueTaskResult[];
  scale?: ScaleResult[];
}

/** The issue's targets for the planner on real issue text. */
export const ISSUE_TARGETS = { acc1: 0.45, acc5: 0.75, acc5OverBm25: 0.1 } as const;

/** Issue 31's targets for the held-out Python tasks. */
export const PYTHON_TARGETS = { acc1: 0.6, acc5: 0.85 } as const;

/** A planner's first named files as plain paths (a proposed new file is shown with a `+`). */
function plannerTop(p: PlannerResult): string[] {
  return p.top.map((path) => (path.startsWith("+") ? path.slice(1) : path));
}

interface Scores {
  acc1: number | null;
  acc5: number | null;
  recall8: number | null;
}

function scoresOf(rows: readonly { gold: readonly string[]; top: readonly string[] }[]): Scores {
  return {
    acc1: mean(rows.map((r) => hitAt(r.gold, r.top, 1))),
    acc5: mean(rows.map((r) => hitAt(r.gold, r.top, 5))),
    recall8: mean(rows.map((r) => recallAt(r.gold, r.top, TOP_FILES))),
  };
}

function measured(results: readonly IssueTaskResult[]): IssueTaskResult[] {
  return results.filter((r) => r.error === undefined && r.bm25 !== undefined);
}

interface Row {
  tasks: number;
  planner: Scores | null;
  bm25: Scores;
  medianMs: number | null;
  p95Ms: number | null;
}

function rowOf(results: readonly IssueTaskResult[]): Row {
  const tasks = measured(results);
  const runs = tasks.flatMap((r) => (r.planner ? [{ gold: r.gold, p: r.planner }] : []));
  const times = runs.flatMap(({ p }) => (p.server_ms === null ? [] : [p.server_ms]));
  return {
    tasks: tasks.length,
    planner:
      runs.length === 0
        ? null
        : scoresOf(runs.map(({ gold, p }) => ({ gold, top: plannerTop(p) }))),
    bm25: scoresOf(tasks.map((r) => ({ gold: r.gold, top: r.bm25!.top }))),
    medianMs: median(times),
    p95Ms: percentile(times, 95),
  };
}

/** 0.4523 → "45.2 %"; null → "—". */
export function formatShare(value: number | null): string {
  return value === null ? "—" : `${(value * 100).toFixed(1)} %`;
}

const HEADER = [
  "tasks",
  "Acc@1 planner",
  "Acc@1 BM25",
  "Acc@5 planner",
  "Acc@5 BM25",
  "recall@8 planner",
  "recall@8 BM25",
  "plan time median",
  "plan time p95",
];

function cells(row: Row): string[] {
  return [
    String(row.tasks),
    formatShare(row.planner?.acc1 ?? null),
    formatShare(row.bm25.acc1),
    formatShare(row.planner?.acc5 ?? null),
    formatShare(row.bm25.acc5),
    formatShare(row.planner?.recall8 ?? null),
    formatShare(row.bm25.recall8),
    formatMs(row.medianMs),
    formatMs(row.p95Ms),
  ];
}

/** The parts the issue reports separately, in order. */
export function partsOf(results: readonly IssueTaskResult[]): [string, IssueTaskResult[]][] {
  return [
    ["tuning repositories", results.filter((r) => r.split === "tuning")],
    ["held-out repositories", results.filter((r) => r.split === "held-out")],
    ["held-out Python", results.filter((r) => r.split === "held-out" && r.language === "Python")],
    [
      "held-out, chosen blind in issue 31",
      results.filter((r) => r.split === "held-out" && r.blind === true),
    ],
    ["tuning Python", results.filter((r) => r.split === "tuning" && r.language === "Python")],
    ["trees ≥ 1,000 files", results.filter((r) => bucketOf(r.parent_files) === "≥ 1,000 files")],
    ["all", [...results]],
  ];
}

/**
 * The main table: one row per part (tuning, held out, large trees, all), planner and BM25 side
 * by side.
 */
export function issueSummaryTable(results: readonly IssueTaskResult[]): string {
  return markdownTable(
    ["part", ...HEADER],
    partsOf(results)
      .filter(([, part]) => part.length > 0)
      .map(([label, part]) => [label, ...cells(rowOf(part))]),
  );
}

/** Whether the planner meets the issue's targets on a part, in words. */
export function targetVerdict(label: string, results: readonly IssueTaskResult[]): string {
  const row = rowOf(results);
  if (row.planner === null || row.tasks === 0) return `${label}: no planner runs`;
  const { acc1, acc5 } = row.planner;
  const margin = (acc5 ?? 0) - (row.bm25.acc5 ?? 0);
  const verdict = (ok: boolean) => (ok ? "met" : "**not met**");
  return `${label}: Acc@1 ${formatShare(acc1)} (≥ 45 %: ${verdict((acc1 ?? 0) >= ISSUE_TARGETS.acc1)}), Acc@5 ${formatShare(acc5)} (≥ 75 %: ${verdict((acc5 ?? 0) >= ISSUE_TARGETS.acc5)}), Acc@5 − BM25's ${(margin * 100).toFixed(1)} points (≥ 10: ${verdict(margin >= ISSUE_TARGETS.acc5OverBm25 - 1e-9)})`;
}

/** Issue 31's target for held-out Python, in words (nothing when the run has none). */
function pythonVerdict(results: readonly IssueTaskResult[]): string[] {
  const part = results.filter((r) => r.split === "held-out" && r.language === "Python");
  const row = rowOf(part);
  if (row.planner === null || row.tasks === 0) return [];
  const { acc1, acc5 } = row.planner;
  const verdict = (ok: boolean) => (ok ? "met" : "**not met**");
  return [
    `- held-out Python (issue 31): Acc@1 ${formatShare(acc1)} (≥ 60 %: ${verdict((acc1 ?? 0) >= PYTHON_TARGETS.acc1)}), Acc@5 ${formatShare(acc5)} (≥ 85 %: ${verdict((acc5 ?? 0) >= PYTHON_TARGETS.acc5)}) on ${row.tasks} tasks`,
  ];
}

function breakdown(
  results: readonly IssueTaskResult[],
  title: string,
  groupOf: (r: IssueTaskResult) => string,
  order?: readonly string[],
): string {
  const groups = new Map<string, IssueTaskResult[]>();
  for (const result of results) {
    const key = groupOf(result);
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  const keys =
    order?.filter((key) => groups.has(key)) ??
    [...groups.keys()].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
  return markdownTable(
    [title, ...HEADER],
    keys.map((key) => [key, ...cells(rowOf(groups.get(key)!))]),
  );
}

/** Every table of an issue run, as one markdown document body. */
export function issueReportMarkdown(file: IssueResultsFile): string {
  const { results } = file;
  const out: string[] = [];
  out.push(
    "### Real issue text: Acc@1, Acc@5, recall@8 and plan time\n",
    issueSummaryTable(results),
  );
  out.push(
    "\nTargets:\n",
    [
      ...partsOf(results)
        .filter(([label, part]) => label !== "trees ≥ 1,000 files" && part.length > 0)
        .map(([label, part]) => `- ${targetVerdict(label, part)}`),
      ...pythonVerdict(results),
    ].join("\n"),
  );
  const repeats = results.filter((r) => r.repeat !== undefined);
  if (repeats.length > 0) {
    const count = (kind: IssueTaskResult["repeat"]) => repeats.filter((r) => r.repeat === kind);
    const different = count("different");
    out.push(
      "\n### The same plan twice\n",
      `${repeats.length} tasks planned twice: ${count("same").length} identical byte for byte, ${different.length} different${different.length > 0 ? ` (${different.map((r) => r.id).join(", ")})` : ""}, ${count("failed").length} where a run failed.`,
    );
  }
  out.push(
    "\n### By repository\n",
    breakdown(results, "repository", (r) => `${r.repo} (${r.split})`),
  );
  out.push(
    "\n### By language\n",
    breakdown(results, "language", (r) => r.language),
  );
  out.push(
    "\n### By repository size (files in the parent tree)\n",
    breakdown(
      results,
      "size",
      (r) => bucketOf(r.parent_files),
      SIZE_BUCKETS.map((b) => b.label),
    ),
  );
  if (file.scale && file.scale.length > 0) {
    out.push(
      "\n### Plan time by repository size (generated repositories)\n",
      markdownTable(
        ["repository", "files", "runs", "outcome", "median (server)", "p95 (server)"],
        file.scale.map((s) => [
          s.label,
          s.files.toLocaleString("en-US"),
          String(s.runs),
          s.outcome,
          formatMs(median(s.server_ms)),
          formatMs(percentile(s.server_ms, 95)),
        ]),
      ),
    );
  }
  const problems = [
    ...results
      .filter((r) => r.error !== undefined)
      .map((r) => `- ${r.id}: not measured — ${r.error}`),
    ...measured(results).flatMap((r) =>
      r.planner?.outcome === "failure" ? [`- ${r.id}: planner failed — ${r.planner.reason}`] : [],
    ),
  ];
  const questions = measured(results).filter((r) => r.planner?.outcome === "question");
  if (questions.length > 0) {
    problems.push(
      `- ${questions.length} clarifying questions instead of a plan (scored as naming no file): ${questions.map((r) => r.id).join(", ")}`,
    );
  }
  if (problems.length > 0) out.push("\n### Failures and questions\n", problems.join("\n"));
  return `${out.join("\n")}\n`;
}
