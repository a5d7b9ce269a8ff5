import { pathToFileURL } from "node:url";
import { type BenchRow, formatTable, infoRow, limitRow, quantile } from "./rows.ts";
import { type BenchWorker, planTurns, startBenchWorker } from "./worker.ts";

/**
 * P7, the load run: 200 sessions, each polled every 3 s for 60 s by a load generator on
 * loopback — what 200 terminals waiting on their plans do. Each poll is the request the real
 * poller makes on a quiet tick (bearer-token events read after its cursor, limit 100); the
 * pollers' phases are spread evenly over the interval, requests go over keep-alive
 * connections (undici). Target: zero errors (any non-200, network error or malformed page).
 * Reported: p50/p99 under load next to the same poll unloaded (measured just before), and the
 * request rate.
 *
 *   npm run load                      # starts its own wrangler dev, prints the table
 *   npm run load -- --quick           # 20 s
 *   import { benchLoad } from "./load.ts"; await benchLoad(worker);
 */

const SESSIONS = 200;
const INTERVAL_MS = 3_000;
const DURATION_MS = 60_000;
const UNLOADED_SAMPLES = 1_000;
const CREATE_CONCURRENCY = 8;
const FEED_PAGE_LIMIT = 100;
/** Polls slower than this are listed on stderr with when they happened. */
const SLOW_POLL_MS = 100;

export interface LoadOptions {
  sessions?: number;
  intervalMs?: number;
  durationMs?: number;
}

interface Poller {
  id: string;
  cursor: string;
}

/**
 * Creates the sessions, samples the poll unloaded, then runs the pollers for `durationMs`.
 *
 * @example const rows = await benchLoad(worker, { durationMs: 15_000 });
 */
export async function benchLoad(
  worker: BenchWorker,
  options: LoadOptions = {},
): Promise<BenchRow[]> {
  const sessions = options.sessions ?? SESSIONS;
  const intervalMs = options.intervalMs ?? INTERVAL_MS;
  const durationMs = options.durationMs ?? DURATION_MS;
  const pollers = await waitingSessions(worker, sessions);

  const unloaded: number[] = [];
  for (let i = 0; i < UNLOADED_SAMPLES; i++) {
    const poller = pollers[i % pollers.length] as Poller;
    const outcome = await poll(worker, poller);
    if (!outcome.ok) throw new Error(`an unloaded poll failed: ${outcome.error}`);
    unloaded.push(outcome.ms);
  }

  const latencies: number[] = [];
  const errors: string[] = [];
  /** When (s into the run) each slow poll started, to tell a stall from steady slowness. */
  const slow: string[] = [];
  const started = performance.now();
  await Promise.all(
    pollers.map(async (poller, i) => {
      // Tick k of poller i is due at offset_i + k·interval: spread phases, no drift.
      const offset = (i * intervalMs) / pollers.length;
      for (let due = offset; due < durationMs; due += intervalMs) {
        const wait = started + due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const at = (performance.now() - started) / 1000;
        const outcome = await poll(worker, poller);
        if (outcome.ok) latencies.push(outcome.ms);
        else errors.push(outcome.error);
        if (outcome.ok && outcome.ms > SLOW_POLL_MS)
          slow.push(`${at.toFixed(2)} s: ${outcome.ms.toFixed(0)} ms`);
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const requests = latencies.length + errors.length;
  const health = await worker.call("GET", "/v1/healthz");
  if (health.status !== 200) errors.push(`healthz after the run answered ${health.status}`);
  if (slow.length > 0) {
    console.error(
      `load run: ${slow.length} polls over ${SLOW_POLL_MS} ms (start time: duration): ${slow.slice(0, 20).join(", ")}`,
    );
  }
  if (errors.length > 0) {
    console.error(
      `load run errors (first 5 of ${errors.length}):\n${errors.slice(0, 5).join("\n")}`,
    );
  }

  const what = `${pollers.length} sessions × 1 poll / ${intervalMs / 1000} s for ${Math.round(elapsedS)} s`;
  const p50 = latencies.length > 0 ? quantile(latencies, 0.5) : Number.NaN;
  const p99 = latencies.length > 0 ? quantile(latencies, 0.99) : Number.NaN;
  return [
    limitRow({
      id: "P7",
      name: `load: errors in ${requests.toLocaleString("en-US")} polls (${what})`,
      unit: "errors",
      value: errors.length,
      baseline: null,
      baselineName: "—",
      atMost: 0,
    }),
    infoRow({
      id: "P7",
      name: "load: events poll p50 under load",
      unit: "ms",
      value: p50,
      baseline: quantile(unloaded, 0.5),
      baselineName: `the same polls unloaded, p50 of ${UNLOADED_SAMPLES}`,
    }),
    infoRow({
      id: "P7",
      name: "load: events poll p99 under load",
      unit: "ms",
      value: p99,
      baseline: quantile(unloaded, 0.99),
      baselineName: "the same polls unloaded, p99",
    }),
    infoRow({
      id: "P7",
      name: "load: request rate served",
      unit: "req/s",
      value: requests / elapsedS,
      baseline: pollers.length / (intervalMs / 1000),
      baselineName: "the offered rate",
    }),
  ];
}

/** The request a real poller makes on a quiet tick; ok with its time, or why it failed. */
async function poll(
  worker: BenchWorker,
  poller: Poller,
): Promise<{ ok: true; ms: number } | { ok: false; error: string }> {
  const path = `/v1/sessions/${poller.id}/events?after_id=${poller.cursor}&limit=${FEED_PAGE_LIMIT}`;
  const started = performance.now();
  try {
    const answer = await worker.call("GET", path, { token: worker.token });
    const ms = performance.now() - started;
    if (answer.status !== 200) {
      return { ok: false, error: `${answer.status} ${answer.text.slice(0, 200)}` };
    }
    const page = JSON.parse(answer.text) as { data?: unknown; has_more?: unknown };
    if (!Array.isArray(page.data) || page.has_more !== false) {
      return { ok: false, error: `a malformed page: ${answer.text.slice(0, 200)}` };
    }
    return { ok: true, ms };
  } catch (error) {
    return { ok: false, error: `network: ${String(error)}` };
  }
}

/** `count` sessions, each waiting on its plan (the loop asleep), with their newest event id. */
async function waitingSessions(worker: BenchWorker, count: number): Promise<Poller[]> {
  const pollers: Poller[] = [];
  let next = 0;
  const create = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      const session = await worker.createScripted(planTurns(), { title: `load session ${next}` });
      const settled = await worker.settled(session.id);
      if (settled.phase !== "plan_ready") {
        throw new Error(
          `load session ${session.id} should wait on its plan, but is ${settled.phase}`,
        );
      }
      const last = (await worker.allEvents(session.id)).at(-1);
      if (last === undefined) throw new Error(`load session ${session.id} has no events`);
      pollers.push({ id: session.id, cursor: last.id });
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, create));
  return pollers;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  const worker = await startBenchWorker();
  try {
    const rows = await benchLoad(worker, quick ? { durationMs: 20_000 } : {});
    console.log(formatTable(rows));
    process.exitCode = rows.every((r) => r.met !== false) ? 0 : 1;
  } finally {
    await worker.stop();
  }
}
