import { pollForApprovedExitPlanMode } from "../../local-client/index.ts";
import { type BenchRow, infoRow, median, quantile, ratioRow } from "./rows.ts";
import { type BenchWorker, exitPlanModeCall, planTurns } from "./worker.ts";

/**
 * P3: how long after a decision the terminal knows. The real poller
 * (`pollForApprovedExitPlanMode`, 200 ms interval) watches a session whose plan is waiting;
 * the decision (teleport) is posted at a random moment of the poll cycle; the figure is the
 * time from the decision's answer to the poller's resolution. Target: ≤ interval + 1 RTT,
 * with the RTT measured in the same run (healthz p50).
 *
 * @example
 * const rows = await benchDecision(worker, { rttMs: 1.3, trials: 20 });
 */

export const P3_INTERVAL_MS = 200;
const TRIALS = 20;
/** The poller must have seen the pending plan before the decision goes out. */
const PLAN_SEEN_TIMEOUT_MS = 30_000;

/**
 * Runs `trials` decisions, each on a fresh session, and compares their median to the budget.
 *
 * @example const rows = await benchDecision(worker, { rttMs: feed.rttMs });
 */
export async function benchDecision(
  worker: BenchWorker,
  options: { rttMs: number; trials?: number },
): Promise<BenchRow[]> {
  const trials = options.trials ?? TRIALS;
  const latencies: number[] = [];
  for (let trial = 0; trial < trials; trial++) {
    latencies.push(await oneDecision(worker));
  }
  const budget = P3_INTERVAL_MS + options.rttMs;
  return [
    ratioRow({
      id: "P3",
      name: `decision → CLI outcome, median of ${trials} (real poller at ${P3_INTERVAL_MS} ms; p90 ${quantile(latencies, 0.9).toFixed(0)} ms)`,
      unit: "ms",
      value: median(latencies),
      baseline: budget,
      baselineName: `interval + 1 RTT (${P3_INTERVAL_MS} + healthz p50 ${options.rttMs.toFixed(2)})`,
      maxRatio: 1,
    }),
    infoRow({
      id: "P3",
      name: "decision → CLI outcome, slowest trial",
      unit: "ms",
      value: Math.max(...latencies),
      baseline: budget,
      baselineName: "interval + 1 RTT",
    }),
  ];
}

/** One trial: a fresh session with its plan pending, a poller, a teleport decision. */
async function oneDecision(worker: BenchWorker): Promise<number> {
  const session = await worker.createScripted(planTurns());
  const settled = await worker.settled(session.id);
  if (settled.phase !== "plan_ready") {
    throw new Error(`the decision session should wait on its plan, but is ${settled.phase}`);
  }
  const toolUseId = exitPlanModeCall(await worker.allEvents(session.id));

  const controller = new AbortController();
  let planSeen: () => void = () => {};
  const seen = new Promise<void>((resolve) => {
    planSeen = resolve;
  });
  let resolvedAt = 0;
  const poll = pollForApprovedExitPlanMode({
    server: worker.url,
    token: worker.token,
    sessionId: session.id,
    intervalMs: P3_INTERVAL_MS,
    timeoutMs: 120_000,
    signal: controller.signal,
    onPhaseChange: (phase) => {
      if (phase === "plan_ready") planSeen();
    },
  }).then((outcome) => {
    resolvedAt = performance.now();
    return outcome;
  });
  try {
    await planSeenOrFail(seen, poll);
    // Decide at a random point of the poll cycle, as a person would.
    await new Promise((r) => setTimeout(r, Math.random() * P3_INTERVAL_MS));
    await worker.expect(200, "POST", `/v1/sessions/${session.id}/decision`, {
      token: worker.token,
      json: { tool_use_id: toolUseId, decision: "teleport" },
    });
    const decidedAt = performance.now();
    const outcome = await poll;
    if (outcome.executionTarget !== "local") {
      throw new Error(`a teleport should end in local execution, got ${outcome.executionTarget}`);
    }
    return resolvedAt - decidedAt;
  } finally {
    controller.abort();
    await poll.catch(() => undefined);
  }
}

/** Resolves once the poller reports plan_ready; rejects if it ends first or never sees it. */
async function planSeenOrFail(seen: Promise<void>, poll: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    seen.then(() => "seen" as const),
    poll.then(
      () => "resolved" as const,
      () => "failed" as const,
    ),
    new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), PLAN_SEEN_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === "resolved") throw new Error("the poller resolved before any decision was made");
  if (outcome === "failed") await poll;
  if (outcome === "late") throw new Error("the poller never saw the pending plan");
}
