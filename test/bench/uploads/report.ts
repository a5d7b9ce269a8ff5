import { formatMs, markdownTable, median } from "../planner/metrics.ts";

/**
 * The uploads benchmark's figures (pure): per client, how many uploads failed and how, how many
 * plans came back, and the medians of the uploads and plans that worked.
 */

export type ClientName = "fetch" | "planport";

/** One tree as a client got through it. */
export interface TreeResult {
  client: ClientName;
  repo: string;
  commit: string;
  bodyBytes: number;
  /** Milliseconds from the client's last answer to the upload being sent. */
  sentAfterMs: number;
  /** "ok", or how the upload failed (`fetch failed (EPIPE)`, `413 payload_too_large` …). */
  upload: string;
  uploadMs: number;
  /** "plan" / "question", or how planning failed; null when the upload failed. */
  plan: string | null;
  planMs: number | null;
}

/** Workerd closes a keep-alive connection this long after its last answer. */
export const IDLE_CLOSE_MS = 5_000;

export interface ClientSummary {
  client: ClientName;
  trees: number;
  /** Trees whose upload went out after the server's idle close of the last connection. */
  sentAfterIdleClose: number;
  uploadsFailed: number;
  /** Failure → how many times. */
  failures: Record<string, number>;
  plans: number;
  planFailures: number;
  uploadMedianMs: number | null;
  planMedianMs: number | null;
  medianBodyBytes: number | null;
}

/**
 * @example
 * summarize("planport", results) // { trees: 100, uploadsFailed: 0, plans: 100, … }
 */
export function summarize(client: ClientName, results: readonly TreeResult[]): ClientSummary {
  const mine = results.filter((r) => r.client === client);
  const failures: Record<string, number> = {};
  for (const r of mine) if (r.upload !== "ok") failures[r.upload] = (failures[r.upload] ?? 0) + 1;
  const uploaded = mine.filter((r) => r.upload === "ok");
  const planned = uploaded.filter((r) => r.plan === "plan" || r.plan === "question");
  return {
    client,
    trees: mine.length,
    sentAfterIdleClose: mine.filter((r) => r.sentAfterMs > IDLE_CLOSE_MS).length,
    uploadsFailed: mine.length - uploaded.length,
    failures,
    plans: planned.length,
    planFailures: uploaded.length - planned.length,
    uploadMedianMs: median(uploaded.map((r) => r.uploadMs)),
    planMedianMs: median(planned.map((r) => r.planMs ?? Number.NaN)),
    medianBodyBytes: median(mine.map((r) => r.bodyBytes)),
  };
}

/** The table: one row per client, and the ratio of the medians (planport over plain fetch). */
export function reportMarkdown(summaries: readonly ClientSummary[]): string {
  const rows = summaries.map((s) => [
    s.client === "fetch"
      ? "Node's fetch, as a script calls it (what the client did before)"
      : "planport's client (local-client/http)",
    String(s.trees),
    String(s.sentAfterIdleClose),
    `${s.uploadsFailed}${describeFailures(s.failures)}`,
    `${s.plans} (${s.planFailures} failed)`,
    formatMs(s.uploadMedianMs),
    formatMs(s.planMedianMs),
  ]);
  const table = markdownTable(
    [
      "client",
      "trees",
      "uploads sent after the 5 s idle close",
      "failed uploads",
      "plans",
      "upload, median",
      "plan, median",
    ],
    rows,
  );
  const [before, after] = [
    summaries.find((s) => s.client === "fetch"),
    summaries.find((s) => s.client === "planport"),
  ];
  const ratio =
    before?.uploadMedianMs && after?.uploadMedianMs
      ? `\n\nUpload median, planport's client over plain fetch: ${(after.uploadMedianMs / before.uploadMedianMs).toFixed(2)}×.`
      : "";
  return `${table}${ratio}\n`;
}

function describeFailures(failures: Record<string, number>): string {
  const kinds = Object.entries(failures).map(([what, n]) => `${n}× ${what}`);
  return kinds.length === 0 ? "" : ` (${kinds.join(", ")})`;
}
