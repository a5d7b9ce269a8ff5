import { setTimeout as delay } from "node:timers/promises";
import {
  type ExecutionTarget,
  executionTargetOf,
  type FeedPage,
  readableText,
} from "../../src/protocol/index.ts";
import {
  ApiError,
  type CallOptions,
  createApi,
  isTransient,
  REQUEST_TIMEOUT_MS,
  type SessionState,
} from "../http/api.ts";
import { retryWait } from "../http/retry-after.ts";
import { PollError, type PollErrorDetail, type PollProgress, pollTimeoutError } from "./error.ts";
import {
  ExitPlanModeScanner,
  isFinal,
  MarkerMissingError,
  type ScanResult,
  strongest,
} from "./scanner.ts";

/** The poll's error, where a caller of the poll looks for it. */
export { PollError } from "./error.ts";

/**
 * The poll loop around the pure scanner: the only place with sleeps, fetches and failure
 * counting. Every tick reads all new events after the cursor, feeds them to the scanner, and
 * either returns the plan, throws a {@link PollError}, or sleeps until the next tick. The
 * timeout is a deadline for everything: no request is given more time than the poll has left,
 * and a server's `Retry-After` is waited out only up to it.
 */

export const POLL_INTERVAL_MS = 3_000;
/**
 * A session this process just created is polled this often until its first plan (or question)
 * arrives, for at most {@link FIRST_PLAN_WINDOW_MS}: a fast planner (the offline one needs well
 * under a second) then shows "plan ready" within one round trip and a quarter second of finishing,
 * not at the next 3 s tick. At most 40 extra requests per session, far inside the request limit
 * (1,000 per 10 s).
 */
export const FIRST_PLAN_INTERVAL_MS = 250;
export const FIRST_PLAN_WINDOW_MS = 10_000;
export const POLL_TIMEOUT_MS = 1_800_000;
export const MAX_CONSECUTIVE_FAILURES = 5;
/** Bounds one tick's work when a long backlog builds up; the rest is read next tick. */
export const MAX_PAGES_PER_TICK = 50;
export const FEED_PAGE_SIZE = 100;

export type PollPhase = "running" | "needs_input" | "plan_ready";

export interface PollClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: PollClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => delay(ms, undefined, { signal }),
};

export interface PollOptions {
  server: string;
  token: string;
  sessionId: string;
  timeoutMs?: number;
  intervalMs?: number;
  maxConsecutiveFailures?: number;
  onPhaseChange?: (phase: PollPhase) => void;
  signal?: AbortSignal;
  // Beyond docs/PROTOCOL.md: resuming, hooks for the CLI, and seams for tests.
  /** Carry on from a saved cursor and scanner state instead of the start of the feed. */
  resume?: PollProgress;
  /**
   * The session was just created by this process: it begins researching, so that phase is
   * reported first even when the first poll already finds a plan (a fast planner).
   */
  created?: boolean;
  /** Called once per rejection, with the new count. */
  onRejected?: (rejectCount: number) => void;
  /** After every successful tick. */
  onProgress?: (progress: PollProgress) => void;
  /** A failed tick that will be retried (count so far, the error). */
  onTransientFailure?: (consecutive: number, error: ApiError) => void;
  /** The first answer after transient failures. */
  onRecovered?: () => void;
  pageSize?: number;
  /**
   * When the timeout started counting, on the clock's scale (default: when the poll starts);
   * `attach` counts its own first request too.
   */
  startedAt?: number;
  clock?: PollClock;
  fetch?: typeof fetch;
}

/**
 * The plan and its verdict. `kind` says it all; `executionTarget` (docs/PROTOCOL.md's field) is
 * read off it by the protocol's one rule, `executionTargetOf`.
 */
export interface PollOutcome {
  kind: "approved" | "teleport";
  /**
   * The plan as a reader sees it (protocol `readableText`): what the review page showed, every
   * hidden character a visible mark. This is where the plan enters the client, so every exit
   * after it — the plan file, `--on-teleport`, a preset's argv, `--json`, the MCP answer — hands
   * on what the reviewer saw. The feed keeps the planner's text as written (the scanner reads
   * it exactly; `GET …/plan` returns it).
   */
  plan: string;
  rejectCount: number;
  executionTarget: ExecutionTarget;
}

/**
 * Polls a remote session until its plan is approved (executed in the cloud) or teleported
 * (executed here), and says which.
 *
 * @example
 * const { plan, executionTarget } = await pollForApprovedExitPlanMode({
 *   server: "http://127.0.0.1:8787", token: "secret1", sessionId: "ses_…",
 *   onPhaseChange: (phase) => console.error(phase),
 * });
 */
export async function pollForApprovedExitPlanMode(opts: PollOptions): Promise<PollOutcome> {
  const clock = opts.clock ?? systemClock;
  const timeoutMs = positive(opts.timeoutMs ?? POLL_TIMEOUT_MS, "timeoutMs");
  const intervalMs = positive(opts.intervalMs ?? POLL_INTERVAL_MS, "intervalMs");
  const maxFailures = positive(
    opts.maxConsecutiveFailures ?? MAX_CONSECUTIVE_FAILURES,
    "maxConsecutiveFailures",
  );
  const pageSize = positive(opts.pageSize ?? FEED_PAGE_SIZE, "pageSize");
  const { sessionId, signal } = opts;
  const api = createApi({ server: opts.server, token: opts.token, signal, fetch: opts.fetch });

  const scanner = opts.resume
    ? ExitPlanModeScanner.restore(opts.resume.scanner)
    : new ExitPlanModeScanner();
  let cursor = opts.resume?.cursor ?? null;
  const progress = (): PollProgress => ({ cursor, scanner: scanner.state() });
  const fail = (detail: PollErrorDetail, cause?: unknown) =>
    new PollError(detail, sessionId, progress(), { cause });
  const stopped = () => fail({ reason: "stopped" });
  /** A failed request as data: `attempts` failed polls in a row, this one the last. */
  const requestFailed = (err: unknown, attempts: number) =>
    fail(
      {
        reason: "network_or_unknown",
        server: api.server,
        attempts,
        transient: isTransient(err),
        status: err instanceof ApiError ? err.status : null,
        code: err instanceof ApiError ? err.code : null,
        lastError: err instanceof ApiError ? err.message : String(err),
      },
      err,
    );

  const startedAt = opts.startedAt ?? clock.now();
  const deadline = startedAt + timeoutMs;
  let failures = 0;
  // Halved when a page of large events is more than one answer may hold.
  let pageLimit = pageSize;
  let phase: PollPhase | null = null;
  // A session's phase can only change when events are written, so the session is read once
  // after each burst of events rather than on every quiet tick.
  let sessionCheckDue = true;
  // A session just created, before its first plan or question: polled quickly (see above).
  let awaitingFirstPlan = opts.created === true && opts.resume === undefined;

  /**
   * Runs one request with no more time than the poll has left. Running out of it is the poll's
   * timeout (timeout_pending / timeout_no_plan), not a network error.
   */
  async function withinDeadline<T>(request: (call: CallOptions) => Promise<T>): Promise<T> {
    const left = deadline - clock.now();
    if (left <= 0) throw timeout();
    const timeoutMs = Math.min(REQUEST_TIMEOUT_MS, left);
    try {
      return await request({ timeoutMs });
    } catch (err) {
      const cutByDeadline = timeoutMs === left;
      if (cutByDeadline && err instanceof ApiError && err.code === "request_timeout") {
        throw timeout();
      }
      throw err;
    }
  }

  async function readPage(): Promise<FeedPage> {
    for (;;) {
      try {
        return await withinDeadline((call) =>
          api.events(sessionId, { afterId: cursor, limit: pageLimit }, call),
        );
      } catch (err) {
        const tooLarge = err instanceof ApiError && err.code === "response_too_large";
        if (!tooLarge || pageLimit === 1) throw err;
        pageLimit = Math.ceil(pageLimit / 2);
      }
    }
  }

  /** One tick: every new page (≤ MAX_PAGES_PER_TICK), then the phase. */
  async function tick(): Promise<{ result: ScanResult; phase: PollPhase; rejected: boolean }> {
    let result: ScanResult = { kind: "unchanged" };
    let newEvents = 0;
    const rejectedBefore = scanner.rejectCount;
    for (let page = 0; page < MAX_PAGES_PER_TICK; page += 1) {
      const feed = await readPage();
      const before = scanner.rejectCount;
      result = strongest(result, scanner.ingest(feed.data));
      newEvents += feed.data.length;
      cursor = feed.last_id ?? feed.data.at(-1)?.id ?? cursor;
      for (let n = before + 1; n <= scanner.rejectCount; n += 1) opts.onRejected?.(n);
      // Nothing after an approval or an end can change the verdict.
      if (isFinal(result) || !feed.has_more) break;
    }
    const rejected = scanner.rejectCount > rejectedBefore;
    if (isFinal(result)) return { result, phase: phase ?? "running", rejected };
    if (scanner.hasPendingPlan) return { result, phase: "plan_ready", rejected };
    // needs_input only on a quiet tick: events still arriving mean the session is at work,
    // whatever its phase said a moment ago.
    if (newEvents > 0) {
      sessionCheckDue = true;
      return { result, phase: "running", rejected };
    }
    if (!sessionCheckDue) return { result, phase: phase ?? "running", rejected };
    const session = await withinDeadline((call) => api.sessionState(sessionId, call));
    sessionCheckDue = false;
    return { result, phase: pollPhaseOf(session) ?? phase ?? "running", rejected };
  }

  for (;;) {
    if (signal?.aborted) throw stopped();
    if (deadline - clock.now() <= 0) throw timeout();
    let waitMs = intervalMs;
    try {
      const { result, phase: next, rejected } = await tick();
      if (failures > 0) opts.onRecovered?.();
      failures = 0;
      opts.onProgress?.(progress());
      if (result.kind === "approved" || result.kind === "teleport") {
        return {
          kind: result.kind,
          plan: readableText(result.plan),
          rejectCount: scanner.rejectCount,
          executionTarget: executionTargetOf(result.kind),
        };
      }
      if (result.kind === "terminated") {
        const { subtype, message } = result;
        throw fail({
          reason: "terminated",
          subtype,
          ...(message ? { sessionMessage: message } : {}),
        });
      }
      // A plan sent back went to the planner and a new one came within one tick: the phase
      // passed through running all the same, and the new plan is announced as the first was.
      if (phase === null && opts.created === true && next !== "running") {
        phase = "running";
        opts.onPhaseChange?.("running");
      }
      if (rejected && phase === "plan_ready") {
        phase = "running";
        opts.onPhaseChange?.("running");
      }
      if (next !== phase) {
        phase = next;
        opts.onPhaseChange?.(next);
      }
      if (awaitingFirstPlan && next !== "running") awaitingFirstPlan = false;
      if (awaitingFirstPlan && clock.now() - startedAt < FIRST_PLAN_WINDOW_MS) {
        waitMs = Math.min(intervalMs, FIRST_PLAN_INTERVAL_MS);
      }
    } catch (err) {
      if (err instanceof PollError) throw err;
      if (signal?.aborted) throw stopped();
      if (err instanceof MarkerMissingError) {
        const { toolUseId, markers } = err;
        throw fail({ reason: "extract_marker_missing", toolUseId, markers }, err);
      }
      if (!(err instanceof ApiError) || !isTransient(err)) throw requestFailed(err, failures + 1);
      failures += 1;
      opts.onTransientFailure?.(failures, err);
      // A rate-limited (or briefly unavailable) server says when to come back; sooner would be
      // refused again.
      waitMs = retryWait(err.retryAfterMs, intervalMs);
      if (failures >= maxFailures) throw requestFailed(err, failures);
    }
    const left = deadline - clock.now();
    if (left <= 0) throw timeout();
    try {
      await clock.sleep(Math.min(waitMs, left), signal);
    } catch {
      throw stopped();
    }
  }

  function timeout(): PollError {
    return pollTimeoutError(sessionId, timeoutMs, progress());
  }
}

/**
 * The poll phase a session's state stands for. planport's `phase` says it; a server without one
 * is read by its `status`, and so is `done` (archived: nothing new to report; ended or executed
 * and idle: the user's move). null: nothing to report.
 */
function pollPhaseOf(session: SessionState): PollPhase | null {
  switch (session.phase) {
    case "running":
    case "executing":
      return "running";
    case "needs_input":
    case "plan_ready":
      return session.phase;
    case "done":
    case undefined:
      break;
  }
  if (session.status === "idle" || session.status === "requires_action") return "needs_input";
  if (session.status === "running") return "running";
  return null;
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return value;
}
