import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import type { Event, FeedPage, ScriptedTurn, Session } from "../../src/protocol/index.ts";

/**
 * The worker every benchmark section talks to: a real `wrangler dev` on loopback with its own
 * temporary persist directory (nothing is cached across runs), the scripted planner allowed,
 * and a lean keep-alive HTTP client (undici) so the client's own cost stays small next to the
 * server's.
 *
 * @example
 * const worker = await startBenchWorker();
 * const session = await worker.createSession(worker.token, { prompt: "…", planner: "scripted", script });
 * await worker.stop();
 */

/** Owners the bench can use: one main token, and fresh ones for uploads that must not dedupe. */
export const BENCH_TOKEN = "bench-token";
export const FRESH_OWNER_TOKENS = 32;
/** Loop-step settle probes. */
const SETTLE_PROBE_MS = 50;
const SETTLE_DEADLINE_MS = 120_000;
const LOG_LINES_KEPT = 100;

export interface Answer {
  status: number;
  text: string;
}

export interface CallOptions {
  token?: string;
  json?: unknown;
  body?: Uint8Array;
  headers?: Record<string, string>;
}

export class BenchWorker {
  readonly token = BENCH_TOKEN;
  /** Connections enough for the load run's 200 pollers, reused across requests. */
  readonly pool: Pool;

  constructor(
    readonly process: WorkerProcess,
    private readonly persistDir: string,
    /** wrangler's latest output lines (warn level and above), for a failed run's report. */
    readonly recentLog: readonly string[],
  ) {
    this.pool = new Pool(process.url, { connections: 64, keepAliveTimeout: 60_000 });
  }

  get url(): string {
    return this.process.url;
  }

  /** A token of its own per `n` (0 ≤ n < FRESH_OWNER_TOKENS): an owner with no uploads yet. */
  freshOwner(n: number): string {
    if (n < 0 || n >= FRESH_OWNER_TOKENS) throw new RangeError(`no fresh owner ${n}`);
    return `bench-owner-${n}`;
  }

  /** One request; the body is read in full. */
  async call(method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Uint8Array | undefined = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] = "application/json";
    }
    const res = await this.pool.request({
      method: method as "GET",
      path,
      headers,
      body,
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  /** A call that must answer `status`; returns the parsed JSON body. */
  async expect<T>(
    status: number,
    method: string,
    path: string,
    opts: CallOptions = {},
  ): Promise<T> {
    const answer = await this.call(method, path, opts);
    if (answer.status !== status) {
      throw new Error(
        `${method} ${path} answered ${answer.status} (expected ${status}): ${answer.text.slice(0, 300)}`,
      );
    }
    return (answer.text === "" ? null : JSON.parse(answer.text)) as T;
  }

  createSession(token: string, body: Record<string, unknown>): Promise<Session> {
    return this.expect<Session>(201, "POST", "/v1/sessions", { token, json: body });
  }

  /** A scripted session: the planner replays `script`, one turn per model call. */
  createScripted(
    script: readonly ScriptedTurn[],
    extra: Record<string, unknown> = {},
  ): Promise<Session> {
    return this.createSession(this.token, {
      prompt: "Benchmark session",
      planner: "scripted",
      script,
      ...extra,
    });
  }

  getSession(id: string): Promise<Session> {
    return this.expect<Session>(200, "GET", `/v1/sessions/${id}`, { token: this.token });
  }

  events(id: string, afterId: string | null, limit = 1000): Promise<FeedPage> {
    const query = new URLSearchParams({ limit: String(limit) });
    if (afterId !== null) query.set("after_id", afterId);
    return this.expect<FeedPage>(200, "GET", `/v1/sessions/${id}/events?${query}`, {
      token: this.token,
    });
  }

  /** Every event of the session, oldest first. */
  async allEvents(id: string): Promise<Event[]> {
    const all: Event[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await this.events(id, after);
      all.push(...page.data);
      if (!page.has_more) return all;
      after = page.last_id;
    }
  }

  /** Waits until the session's loop has stopped (plan ready, question open, idle or ended). */
  async settled(id: string): Promise<Session> {
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    for (;;) {
      const session = await this.getSession(id);
      if (session.status !== "running") return session;
      if (Date.now() > deadline) {
        throw new Error(`session ${id} was still running after ${SETTLE_DEADLINE_MS / 1000} s`);
      }
      await new Promise((r) => setTimeout(r, SETTLE_PROBE_MS));
    }
  }

  async stop(): Promise<void> {
    await this.pool.close();
    await this.process.stop();
    rmSync(this.persistDir, { recursive: true, force: true });
  }
}

/**
 * Starts `wrangler dev` for the benchmark in a fresh temporary persist directory; `vars` adds
 * to (or replaces) the benchmark's settings.
 *
 * @example
 * const worker = await startBenchWorker();
 */
export async function startBenchWorker(vars: Record<string, string> = {}): Promise<BenchWorker> {
  const recentLog: string[] = [];
  const persistDir = mkdtempSync(join(tmpdir(), "planport-bench-worker-"));
  const tokens = [
    BENCH_TOKEN,
    ...Array.from({ length: FRESH_OWNER_TOKENS }, (_, n) => `bench-owner-${n}`),
  ];
  try {
    const process = await startWorkerProcess({
      persistDir,
      vars: {
        PLANPORT_TOKENS: tokens.join(","),
        PLANPORT_ALLOW_SCRIPTED: "true",
        PLANPORT_PLANNER: "offline",
        // The sections seed thousands of events and sessions and poll back to back, far past
        // the per-owner limits; what rate limiting costs a poll is measured on its own
        // (test/bench/rate-limit-cost.ts).
        PLANPORT_RATE_LIMITS: "off",
        ...vars,
      },
      log: (line: string) => {
        recentLog.push(line);
        if (recentLog.length > LOG_LINES_KEPT) recentLog.shift();
        // PLANPORT_BENCH_LOG=1 shows wrangler's own output (warnings and errors) as it comes.
        if (globalThis.process.env.PLANPORT_BENCH_LOG === "1") console.error(`[wrangler] ${line}`);
      },
    });
    return new BenchWorker(process, persistDir, recentLog);
  } catch (error) {
    rmSync(persistDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A first model turn that writes a short plan and submits it: the session then waits for a
 * decision (phase plan_ready) and its loop sleeps.
 *
 * @example const session = await worker.createScripted(planTurns());
 */
export function planTurns(plan = "# Plan\n\n1. Measure.\n2. Improve.\n"): ScriptedTurn[] {
  return [
    {
      content: [
        { type: "text", text: "I have read enough; here is the plan." },
        { type: "tool_use", name: "Write", input: { file_path: "$PLAN_PATH", content: plan } },
        { type: "tool_use", name: "ExitPlanMode", input: {} },
      ],
    },
  ];
}

/** The tool_use id of the open ExitPlanMode call in `events` (the newest one). */
export function exitPlanModeCall(events: readonly Event[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event?.type !== "assistant") continue;
    for (const block of event.message.content) {
      if (block.type === "tool_use" && block.name === "ExitPlanMode") return block.id;
    }
  }
  throw new Error("no ExitPlanMode call in the session's events");
}
