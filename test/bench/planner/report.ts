import { formatMs, formatRecall, markdownTable, mean, median, percentile } from "./metrics.ts";
import { HELD_OUT } from "./repositories.ts";

/**
 * The benchmark's results file and its tables. Pure: per-task results in, markdown out.
 */

export const VARIANTS = ["area", "bare"] as const;
export type Variant = (typeof VARIANTS)[number];

/** What the offline planner did with one prompt. */
export interface PlannerResult {
  /** `plan`: an ExitPlanMode is pending; `question`: it asked instead (no files); `failure`. */
  outcome: "plan" | "question" | "failure";
  recall: number;
  /** The first 8 files the plan names (`+` marks a proposed new file). */
  top: string[];
  /** recall@8 counting only the first file named on each line (plan-files.ts). */
  recall_leading: number;
  top_leading: string[];
  /** How many files the plan names in all. */
  named: number;
  /** Session created → ExitPlanMode (or question) pending, by the session's own clock. */
  server_ms: number | null;
  /** The same as the client saw it (polling every 100 ms). */
  client_ms: number;
  reason?: string;
}

export interface Bm25Result {
  recall: number;
  top: string[];
}

export interface VariantResult {
  prompt: string;
  planner: PlannerResult | null;
  bm25: Bm25Result;
}

/** One task's results, or why it could not be measured at all (same for every method). */
export interface TaskResult {
  id: string;
  repo: string;
  language: string;
  parent_files: number;
  snapshot_files: number | null;
  gold: string[];
  error?: string;
  variants?: Record<Variant, VariantResult>;
}

export interface ResultsFile {
  meta: Record<string, string | number | null>;
  results: TaskResult[];
  scale?: ScaleResult[];
}

/** Plan time on a repository of a given size (generated; scale.ts). */
export interface ScaleResult {
  label: string;
  files: number;
  runs: number;
  outcome: string;
  server_ms: number[];
  client_ms: number[];
}

/** Size buckets of the parent tree (files in git). */
export const SIZE_BUCKETS: { label: string; max: number }[] = [
  { label: "< 200 files", max: 199 },
  { label: "200–999 files", max: 999 },
  { label: "≥ 1,000 files", max: Number.POSITIVE_INFINITY },
];

function measured(results: readonly TaskResult[]): TaskResult[] {
  return results.filter((r) => r.variants !== undefined);
}

interface Cell {
  recall: number | null;
  recallLeading: number | null;
  n: number;
  medianMs: number | null;
  p95Ms: number | null;
  questions: number;
  failures: number;
}

function plannerCell(results: readonly TaskResult[], variant: Variant): Cell {
  const runs = results.flatMap((r) => {
    const p = r.variants?.[variant].planner;
    return p ? [p] : [];
  });
  const times = runs.flatMap((p) => (p.server_ms === null ? [] : [p.server_ms]));
  return {
    recall: mean(runs.map((p) => p.recall)),
    recallLeading: mean(runs.map((p) => p.recall_leading)),
    n: runs.length,
    medianMs: median(times),
    p95Ms: percentile(times, 95),
    questions: runs.filter((p) => p.outcome === "question").length,
    failures: runs.filter((p) => p.outcome === "failure").length,
  };
}

function bm25Cell(results: readonly TaskResult[], variant: Variant): Cell {
  const runs = results.flatMap((r) => (r.variants ? [r.variants[variant].bm25] : []));
  return {
    recall: mean(runs.map((b) => b.recall)),
    recallLeading: null,
    n: runs.length,
    medianMs: null,
    p95Ms: null,
    questions: 0,
    failures: 0,
  };
}

/**
 * The main table: variant × method, recall@8 mean, n, plan time median and p95.
 *
 * @example
 * console.log(summaryTable(results));
 */
export function summaryTable(results: readonly TaskResult[]): string {
  const tasks = measured(results);
  const rows: string[][] = [];
  for (const variant of VARIANTS) {
    const label = variant === "area" ? "with area hint" : "bare subject";
    const planner = plannerCell(tasks, variant);
    const bm25 = bm25Cell(tasks, variant);
    if (planner.n > 0) {
      rows.push([
        label,
        "offline planner",
        formatRecall(planner.recall),
        formatRecall(planner.recallLeading),
        String(planner.n),
        formatMs(planner.medianMs),
        formatMs(planner.p95Ms),
        `${planner.questions} questions, ${planner.failures} failures`,
      ]);
    }
    rows.push([label, "BM25", formatRecall(bm25.recall), "—", String(bm25.n), "—", "—", ""]);
  }
  return markdownTable(
    [
      "variant",
      "method",
      "recall@8",
      "recall@8, first path per line",
      "n",
      "plan time median",
      "plan time p95",
      "notes",
    ],
    rows,
  );
}

/** Recall per group (repository, language, size bucket): one row per group. */
function breakdown(
  results: readonly TaskResult[],
  title: string,
  groupOf: (r: TaskResult) => string,
  order?: readonly string[],
): string {
  const groups = new Map<string, TaskResult[]>();
  for (const result of measured(results)) {
    const key = groupOf(result);
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  const keys = order?.filter((k) => groups.has(k)) ?? [...groups.keys()].sort();
  const rows = keys.map((key) => {
    const tasks = groups.get(key)!;
    const area = plannerCell(tasks, "area");
    const bare = plannerCell(tasks, "bare");
    return [
      key,
      String(tasks.length),
      area.n > 0 ? formatRecall(area.recall) : "—",
      formatRecall(bm25Cell(tasks, "area").recall),
      bare.n > 0 ? formatRecall(bare.recall) : "—",
      formatRecall(bm25Cell(tasks, "bare").recall),
      formatMs(median([...times(tasks, "area"), ...times(tasks, "bare")])),
    ];
  });
  return markdownTable(
    [
      title,
      "tasks",
      "planner, area",
      "BM25, area",
      "planner, bare",
      "BM25, bare",
      "plan time median",
    ],
    rows,
  );
}

function times(tasks: readonly TaskResult[], variant: Variant): number[] {
  return tasks.flatMap((t) => {
    const ms = t.variants?.[variant].planner?.server_ms;
    return ms === null || ms === undefined ? [] : [ms];
  });
}

const SPLIT_DEVELOPMENT = "development repositories";
const SPLIT_HELD_OUT = `held out (${HELD_OUT.map((r) => r.split("/")[1]).join(", ")})`;

/** Whether a task's repository was one the planner was developed on, or held out. */
export function splitOf(result: { repo: string }): string {
  return HELD_OUT.includes(result.repo) ? SPLIT_HELD_OUT : SPLIT_DEVELOPMENT;
}

export function bucketOf(files: number): string {
  return SIZE_BUCKETS.find((b) => files <= b.max)!.label;
}

/** Every table of a run, as one markdown document body. */
export function reportMarkdown(file: ResultsFile): string {
  const { results } = file;
  const failed = results.filter((r) => r.error !== undefined);
  const out: string[] = [];
  out.push("### recall@8 and plan time\n", summaryTable(results));
  out.push(
    "\n### By repository\n",
    breakdown(results, "repository", (r) => r.repo),
  );
  out.push(
    "\n### By development split\n",
    breakdown(results, "split", splitOf, [SPLIT_DEVELOPMENT, SPLIT_HELD_OUT]),
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
        [
          "repository",
          "files",
          "runs",
          "outcome",
          "median (server)",
          "p95 (server)",
          "median (client)",
        ],
        file.scale.map((s) => [
          s.label,
          s.files.toLocaleString("en-US"),
          String(s.runs),
          s.outcome,
          formatMs(median(s.server_ms)),
          formatMs(percentile(s.server_ms, 95)),
          formatMs(median(s.client_ms)),
        ]),
      ),
    );
  }
  const plannerFailures = measured(results).flatMap((r) =>
    VARIANTS.flatMap((v) => {
      const p = r.variants?.[v].planner;
      return p?.outcome === "failure" ? [`- ${r.id} (${v}): ${p.reason ?? "unknown"}`] : [];
    }),
  );
  if (failed.length > 0 || plannerFailures.length > 0) {
    out.push(
      "\n### Failures\n",
      [...failed.map((r) => `- ${r.id}: not measured — ${r.error}`), ...plannerFailures].join("\n"),
    );
  }
  return `${out.join("\n")}\n`;
}
