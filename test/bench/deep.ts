import { startAnthropicDouble } from "../client/anthropic-double.ts";
import type { ScriptedResponse } from "../client/anthropic-double-types.ts";
import { call, reply, say } from "../support/provider-replies.ts";
import { type BenchRow, infoRow, median, ratioRow } from "./rows.ts";
import { type BenchWorker, startBenchWorker } from "./worker.ts";

/**
 * P10: a `deep` session's explorers run concurrently. A real `wrangler dev` runs the anthropic
 * planner against the Anthropic Messages API TEST DOUBLE (in this process, over HTTP); each
 * explorer subagent makes two model calls (a Read, then its report) that the double holds for
 * 2 s each. The figure is the exploration's wall time — from the session's reply that launches
 * the Tasks to the last Task result, both as the session's events record them — for three
 * explorers, against one explorer in the same run. Run one after another, three would take
 * about 3×; the target is ≤ 1.3×.
 *
 * @example
 * const rows = await benchDeep({ trials: 3 });
 */

const LANE = "bench-deep";
export const DEEP_MODEL_CALL_MS = 2_000;
const TURNS_PER_EXPLORER = 2;
const TRIALS = 3;

export async function benchDeep(options: { trials?: number } = {}): Promise<BenchRow[]> {
  const trials = options.trials ?? TRIALS;
  const double = await startAnthropicDouble();
  let worker: BenchWorker | null = null;
  try {
    worker = await startBenchWorker({
      PLANPORT_PLANNER: "anthropic",
      ANTHROPIC_API_KEY: "sk-bench-double",
      ANTHROPIC_BASE_URL: `${double.url}/t/${LANE}`,
      ANTHROPIC_MODEL: "claude-bench",
    });
    const one: number[] = [];
    const three: number[] = [];
    // Interleaved, so a slow patch of the machine weighs on both.
    for (let trial = 0; trial < trials; trial++) {
      one.push(await exploration(worker, double, `t${trial}-one`, 1));
      three.push(await exploration(worker, double, `t${trial}-three`, 3));
    }
    const explorerMs = DEEP_MODEL_CALL_MS * TURNS_PER_EXPLORER;
    return [
      ratioRow({
        id: "P10",
        name: `deep session: exploration by 3 explorers, each ${TURNS_PER_EXPLORER} model calls held ${DEEP_MODEL_CALL_MS / 1000} s by the provider double, median of ${trials}`,
        unit: "ms",
        value: median(three),
        baseline: median(one),
        baselineName: "the same exploration by 1 explorer",
        maxRatio: 1.3,
      }),
      infoRow({
        id: "P10",
        name: "the same, 1 explorer, over its model time (planport's own overhead)",
        unit: "ms",
        value: median(one),
        baseline: explorerMs,
        baselineName: `${TURNS_PER_EXPLORER} model calls × ${DEEP_MODEL_CALL_MS} ms`,
      }),
    ];
  } finally {
    await worker?.stop();
    await double.close();
  }
}

/** One deep session with `explorers` Tasks; its exploration's wall time in ms. */
async function exploration(
  worker: BenchWorker,
  double: { script(lane: string, responses: ScriptedResponse[]): Promise<void> },
  trial: string,
  explorers: number,
): Promise<number> {
  const session = `SESSION-${trial}`;
  const explorer = (i: number) => `EXPLORER-${trial}-${i}`;
  const r = (x: Parameters<typeof reply>[1]) => reply("anthropic", x);
  await double.script(LANE, [
    r({
      match: session,
      content: Array.from({ length: explorers }, (_, i) =>
        call(`toolu_${trial}_${i}`, "Task", {
          description: `Explorer ${i + 1}`,
          prompt: `${explorer(i)}: report on the README.`,
        }),
      ),
    }),
    ...Array.from({ length: explorers }, (_, i) => [
      r({
        match: explorer(i),
        delay_ms: DEEP_MODEL_CALL_MS,
        content: [call(`toolu_${trial}_${i}_read`, "Read", { file_path: "README.md" })],
      }),
      r({ match: explorer(i), delay_ms: DEEP_MODEL_CALL_MS, content: [say(`Report ${i + 1}.`)] }),
    ]).flat(),
    r({ match: session, content: [call(`toolu_${trial}_exit`, "ExitPlanMode", {})] }),
  ]);
  const created = await worker.createSession(worker.token, {
    prompt: `${session}: plan a change to the README`,
    variant: "deep",
  });
  const done = await worker.settled(created.id);
  if (done.phase !== "plan_ready")
    throw new Error(`P10 session ${created.id} ended ${done.phase}, not plan_ready`);
  const events = await worker.allEvents(created.id);
  const launched = events.find(
    (e) =>
      e.type === "assistant" &&
      e.message.content.some((b) => b.type === "tool_use" && b.name === "Task"),
  );
  const taskIds = new Set(
    (launched?.type === "assistant" ? launched.message.content : []).flatMap((b) =>
      b.type === "tool_use" ? [b.id] : [],
    ),
  );
  const answered = events.filter(
    (e) =>
      e.type === "user" &&
      Array.isArray(e.message.content) &&
      e.message.content.some((b) => b.type === "tool_result" && taskIds.has(b.tool_use_id)),
  );
  if (launched === undefined || answered.length !== explorers)
    throw new Error(`P10 session ${created.id}: ${answered.length} of ${explorers} Tasks answered`);
  return Date.parse(answered.at(-1)!.created_at) - Date.parse(launched.created_at);
}
