import { type BenchRow, infoRow, quantile, ratioRow } from "./rows.ts";
import { type BenchWorker, planTurns } from "./worker.ts";

/**
 * P1 and P2: the cost of the poll a waiting terminal makes every few seconds — an events
 * request after the newest event, which returns an empty page — against `GET /v1/healthz`
 * (the same worker, no auth, no Durable Object), on a session with ~10 events and on one with
 * 10,000. The three requests are interleaved in a rotating order, so a noisy neighbour slows
 * all three alike.
 *
 * @example
 * const { rows, rttMs } = await benchFeed(worker, { samples: 3000 });
 */

export const SMALL_LOG_EVENTS = 10;
export const LARGE_LOG_EVENTS = 10_000;
const SAMPLES = 3_000;
const WARMUP_SAMPLES = 200;
/** Message posts in flight while seeding the large log. */
const SEED_CONCURRENCY = 8;
const P1_MAX_RATIO = 1.3;
/**
 * A session stores a terminal's poll time at most every 10 s, so back-to-back samples never
 * make that write while a real terminal (one poll every 3 s) makes it on about one poll in
 * four. The "as terminals poll" variant spreads its polls over this many sessions, each polled
 * at the real cadence ({@link TERMINAL_ROUND_MIN_MS}), with a pause before every request
 * (healthz too), so its samples carry the writes in their real proportion.
 */
const TERMINAL_SESSIONS = 120;
const TERMINAL_ROUND_MIN_MS = 3_000;
const TERMINAL_PAUSE_MS = 4;
const TERMINAL_SAMPLES = 1_000;
const P2_MAX_RATIO = 1.2;

export interface FeedResult {
  rows: BenchRow[];
  /** healthz p50 in ms: the round trip P3 adds to its interval. */
  rttMs: number;
}

/**
 * Seeds the two sessions, then samples healthz and both empty polls in rotating order; also
 * samples the poll "as a terminal polls" (see {@link TERMINAL_SESSIONS}).
 *
 * @example const { rows, rttMs } = await benchFeed(worker, { samples: 500 });
 */
export async function benchFeed(
  worker: BenchWorker,
  options: { samples?: number; largeEvents?: number; terminalSamples?: number } = {},
): Promise<FeedResult> {
  const samples = options.samples ?? SAMPLES;
  const terminalSamples = options.terminalSamples ?? TERMINAL_SAMPLES;
  const largeEvents = options.largeEvents ?? LARGE_LOG_EVENTS;
  const small = await sessionWithEvents(worker, SMALL_LOG_EVENTS);
  const large = await sessionWithEvents(worker, largeEvents);

  const probes: Record<"healthz" | "small" | "large", () => Promise<unknown>> = {
    healthz: () => healthz(worker),
    small: () => emptyPoll(worker, small),
    large: () => emptyPoll(worker, large),
  };
  const order = ["healthz", "small", "large"] as const;
  const times: Record<(typeof order)[number], number[]> = { healthz: [], small: [], large: [] };
  for (let i = 0; i < WARMUP_SAMPLES + samples; i++) {
    for (let k = 0; k < order.length; k++) {
      // Rotate who goes first, so no probe always follows the same one.
      const name = order[(i + k) % order.length] as (typeof order)[number];
      const started = performance.now();
      await probes[name]();
      const ms = performance.now() - started;
      if (i >= WARMUP_SAMPLES) times[name].push(ms);
    }
  }

  const terminal = await terminalPolls(worker, terminalSamples);

  const p = (name: keyof typeof times, q: number) => quantile(times[name], q);
  const n = samples.toLocaleString("en-US");
  const rows: BenchRow[] = [
    ratioRow({
      id: "P1",
      name: `empty events poll p50, session with ${small.events} events (${n} samples, interleaved)`,
      unit: "ms",
      value: p("small", 0.5),
      baseline: p("healthz", 0.5),
      baselineName: "GET /v1/healthz p50",
      maxRatio: P1_MAX_RATIO,
    }),
    infoRow({
      id: "P1",
      name: "empty events poll p99, same samples",
      unit: "ms",
      value: p("small", 0.99),
      baseline: p("healthz", 0.99),
      baselineName: "GET /v1/healthz p99",
    }),
    ratioRow({
      id: "P1",
      name: `empty events poll p50 as terminals poll: each session every 3 s, its poll time stored at most every 10 s (${terminal.sessions} sessions round-robin, ${terminal.samples.toLocaleString("en-US")} samples, ${TERMINAL_PAUSE_MS} ms pause before each request)`,
      unit: "ms",
      value: quantile(terminal.poll, 0.5),
      baseline: quantile(terminal.healthz, 0.5),
      baselineName: "GET /v1/healthz p50, same pauses",
      maxRatio: P1_MAX_RATIO,
    }),
    ratioRow({
      id: "P2",
      name: `empty events poll p50, session with ${large.events.toLocaleString("en-US")} events`,
      unit: "ms",
      value: p("large", 0.5),
      baseline: p("small", 0.5),
      baselineName: `same poll p50 at ${small.events} events`,
      maxRatio: P2_MAX_RATIO,
    }),
    infoRow({
      id: "P2",
      name: `empty events poll p99, ${large.events.toLocaleString("en-US")} events`,
      unit: "ms",
      value: p("large", 0.99),
      baseline: p("small", 0.99),
      baselineName: `same poll p99 at ${small.events} events`,
    }),
  ];
  return { rows, rttMs: p("healthz", 0.5) };
}

/**
 * Interleaved healthz / empty-poll samples where every poll is a session's first in over a
 * second, so each one also stores the terminal's poll time, as a real terminal's poll does.
 */
async function terminalPolls(
  worker: BenchWorker,
  samples: number,
): Promise<{ poll: number[]; healthz: number[]; sessions: number; samples: number }> {
  const sessions: SeededSession[] = [];
  // Seeding reads the feed with the token too, which counts as a poll.
  const lastPolled = new Map<string, number>();
  for (let i = 0; i < TERMINAL_SESSIONS; i++) {
    const session = await sessionWithEvents(worker, 0);
    sessions.push(session);
    lastPolled.set(session.id, performance.now());
  }
  const poll: number[] = [];
  const healthzTimes: number[] = [];
  const pause = () => new Promise((r) => setTimeout(r, TERMINAL_PAUSE_MS));
  for (let i = 0; i < samples; i++) {
    const session = sessions[i % sessions.length] as SeededSession;
    const since = performance.now() - (lastPolled.get(session.id) ?? 0);
    if (since < TERMINAL_ROUND_MIN_MS) {
      await new Promise((r) => setTimeout(r, TERMINAL_ROUND_MIN_MS - since));
    }
    await pause();
    let started = performance.now();
    await healthz(worker);
    healthzTimes.push(performance.now() - started);
    await pause();
    started = performance.now();
    await emptyPoll(worker, session);
    poll.push(performance.now() - started);
    lastPolled.set(session.id, performance.now());
  }
  return { poll, healthz: healthzTimes, sessions: sessions.length, samples };
}

interface SeededSession {
  id: string;
  events: number;
  lastId: string;
}

/** `GET /v1/healthz`, checked by status only (like the poll, nothing parsed). */
async function healthz(worker: BenchWorker): Promise<void> {
  const answer = await worker.call("GET", "/v1/healthz");
  if (answer.status !== 200) throw new Error(`healthz answered ${answer.status}`);
}

/** One bearer-token events poll after the newest event: the page must be empty. */
async function emptyPoll(worker: BenchWorker, session: SeededSession): Promise<void> {
  const answer = await worker.call(
    "GET",
    `/v1/sessions/${session.id}/events?after_id=${session.lastId}`,
    { token: worker.token },
  );
  if (answer.status !== 200 || !answer.text.startsWith('{"data":[]')) {
    throw new Error(`the empty poll answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  }
}

/**
 * A session waiting on its plan whose log holds at least `count` events: the scripted planner
 * submits a plan, then free-text messages are posted — each appends one event and, with the
 * review open, does not wake the loop.
 */
export async function sessionWithEvents(
  worker: BenchWorker,
  count: number,
): Promise<SeededSession> {
  const session = await worker.createScripted(planTurns());
  const settled = await worker.settled(session.id);
  if (settled.phase !== "plan_ready") {
    throw new Error(`the seeded session should wait on its plan, but is ${settled.phase}`);
  }
  const opening = (await worker.allEvents(session.id)).length;
  let next = opening;
  const post = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      await worker.expect(202, "POST", `/v1/sessions/${session.id}/messages`, {
        token: worker.token,
        json: { text: `Note ${next}: also keep the existing behaviour for older clients.` },
      });
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, post));
  const events = await worker.allEvents(session.id);
  const last = events.at(-1);
  if (last === undefined) throw new Error("the seeded session has no events");
  return { id: session.id, events: events.length, lastId: last.id };
}
