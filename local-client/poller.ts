import { setTimeout as delay } from "node:timers/promises";
import type { Event, FeedPage, Session } from "../src/protocol/index.ts";
import { ApiError, type CallOptions, createApi, isTransient, REQUEST_TIMEOUT_MS } from "./api.ts";
import { formatDuration } from "./duration.ts";
import { retryWait } from "./retry-after.ts";
import {
  ExitPlanModeScanner,
  isFinal,
  MarkerMissingError,
  type ScannerState,
  type ScanResult,
  strongest,
} from "./scanner.ts";

/**
 * The poll loop around the pure scanner: the only place with sleeps, fetches and failure
 * counting. Every tick reads all new events after the cursor, feeds them to the scanner, and
 * either returns the plan, throws a {@link PollError}, or sleeps until the next tick. The
 * timeout is a deadline for everything: no request is given more time than the poll has left,
 * and a server's `Retry-After` is waited out only up to it.
 */

export const POLL_INTERVAL_MS = 3_000;
export const POLL_TIMEOUT_MS = 1_800_000;
export const MAX_CONSECUTIVE_FAILURES = 5;
/** Bounds one tick's work when a long backlog builds up; the rest is read next tick. */
export const MAX_PAGES_PER_TICK = 50;
export const FEED_PAGE_SIZE = 100;

export type PollPhase = "running" | "needs_input" | "plan_ready";

export type PollErrorReason =
  | "terminated"
  | "timeout_pending"
  | "timeout_no_plan"
  | "extract_marker_missing"
  | "network_or_unknown"
  | "stopped";

/** Where a poll got to: enough for `attach` to carry on without re-counting rejections. */
export interface PollProgress {
  cursor: string | null;
  scanner: ScannerState;
}

/** Why a poll ended without a plan; `message` says what the user can do next. */
export class PollError extends Error {
  constructor(
    readonly reason: PollErrorReason,
    message: string,
    readonly rejectCount: number,
    /** Where the poll got to, so it can be resumed. */
    readonly progress: PollProgress = {
      cursor: null,
      scanner: { rejectCount, openPlanCalls: [], everSeenPending: false },
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PollError";
  }
}

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
  // Beyond CONTRACT: resuming, hooks for the CLI, and seams for tests.
  /** Carry on from a saved cursor and scanner state instead of the start of the feed. */
  resume?: PollProgress;
  /** Called once per rejection, with the new count. */
  onRejected?: (rejectCount: number) => void;
  /** Every event, in feed order, before the scanner reads it. */
  onEvent?: (event: Event) => void;
  /** After every successful tick. */
  onProgress?: (progress: PollProgress) => void;
  /** A failed tick that will be retried (count so far, the error). */
  onTransientFailure?: (consecutive: number, error: ApiError) => void;
  pageSize?: number;
  /**
   * When the timeout started counting, on the clock's scale (default: when the poll starts);
   * `attach` counts its own first request too.
   */
  startedAt?: number;
  clock?: PollClock;
  fetch?: typeof fetch;
}

export interface PollOutcome {
  plan: string;
  rejectCount: number;
  executionTarget: "local" | "remote";
  /** The last event read (beyond CONTRACT). */
  cursor: string | null;
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
  const attach = `planport attach ${sessionId}`;

  const scanner = opts.resume
    ? ExitPlanModeScanner.restore(opts.resume.scanner)
    : new ExitPlanModeScanner();
  let cursor = opts.resume?.cursor ?? null;
  const progress = (): PollProgress => ({ cursor, scanner: scanner.state() });
  const fail = (reason: PollErrorReason, message: string, cause?: unknown) =>
    new PollError(reason, message, scanner.rejectCount, progress(), { cause });
  const stopped = () =>
    fail(
      "stopped",
      `Stopped polling; the remote session keeps running. Re-attach with \`${attach}\`.`,
    );

  const deadline = (opts.startedAt ?? clock.now()) + timeoutMs;
  let failures = 0;
  // Halved when a page of large events is more than one answer may hold.
  let pageLimit = pageSize;
  let phase: PollPhase | null = null;
  // Status can only change when events are written, so the session is read once after each
  // burst of events rather than on every quiet tick.
  let sessionCheckDue = true;

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
  async function tick(): Promise<{ result: ScanResult; phase: PollPhase }> {
    let result: ScanResult = { kind: "unchanged" };
    let newEvents = 0;
    for (let page = 0; page < MAX_PAGES_PER_TICK; page += 1) {
      const feed = await readPage();
      const before = scanner.rejectCount;
      for (const event of feed.data) opts.onEvent?.(event);
      result = strongest(result, scanner.ingest(feed.data));
      newEvents += feed.data.length;
      cursor = feed.last_id ?? feed.data.at(-1)?.id ?? cursor;
      for (let n = before + 1; n <= scanner.rejectCount; n += 1) opts.onRejected?.(n);
      // Nothing after an approval or an end can change the verdict.
      if (isFinal(result) || !feed.has_more) break;
    }
    if (isFinal(result)) return { result, phase: phase ?? "running" };
    if (scanner.hasPendingPlan) return { result, phase: "plan_ready" };
    if (newEvents > 0) {
      sessionCheckDue = true;
      return { result, phase: "running" };
    }
    if (!sessionCheckDue) return { result, phase: phase ?? "running" };
    const session = await withinDeadline((call) => api.getSession(sessionId, call));
    sessionCheckDue = false;
    return { result, phase: phaseOf(session) ?? phase ?? "running" };
  }

  for (;;) {
    if (signal?.aborted) throw stopped();
    if (deadline - clock.now() <= 0) throw timeout();
    let waitMs = intervalMs;
    try {
      const { result, phase: next } = await tick();
      failures = 0;
      opts.onProgress?.(progress());
      if (result.kind === "approved" || result.kind === "teleport") {
        return {
          plan: result.plan,
          rejectCount: scanner.rejectCount,
          executionTarget: result.kind === "approved" ? "remote" : "local",
          cursor,
        };
      }
      if (result.kind === "terminated") throw fail("terminated", terminatedMessage(result));
      if (next !== phase) {
        phase = next;
        opts.onPhaseChange?.(next);
      }
    } catch (err) {
      if (err instanceof PollError) throw err;
      if (signal?.aborted) throw stopped();
      if (err instanceof MarkerMissingError) {
        throw fail(
          "extract_marker_missing",
          `${err.message}. Open the session's review page to read the plan (\`planport status ${sessionId}\` shows the link).`,
          err,
        );
      }
      if (!(err instanceof ApiError) || !isTransient(err)) {
        throw fail("network_or_unknown", permanentMessage(err, sessionId, attach), err);
      }
      failures += 1;
      opts.onTransientFailure?.(failures, err);
      // A rate-limited (or briefly unavailable) server says when to come back; sooner would be
      // refused again.
      waitMs = retryWait(err.retryAfterMs, intervalMs);
      if (failures >= maxFailures) {
        throw fail(
          "network_or_unknown",
          `Lost contact with ${api.server} after ${failures} failed polls in a row (last: ${err.message}). ` +
            `The remote session may still be running: re-attach with \`${attach}\`.`,
          err,
        );
      }
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
 * The error for a poll whose time ran out: `timeout_pending` when a plan was ever seen waiting
 * for review, else `timeout_no_plan`.
 *
 * @example
 * throw pollTimeoutError("ses_…", 600_000, sidecar.progress);
 */
export function pollTimeoutError(
  sessionId: string,
  timeoutMs: number,
  progress: PollProgress,
): PollError {
  const waited = formatDuration(timeoutMs);
  const attach = `planport attach ${sessionId}`;
  const { rejectCount } = progress.scanner;
  if (progress.scanner.everSeenPending) {
    return new PollError(
      "timeout_pending",
      `A plan was submitted for review, but no decision arrived within ${waited}. The session keeps ` +
        `waiting: review it (\`planport status ${sessionId}\` shows the link), then \`${attach}\`.`,
      rejectCount,
      progress,
    );
  }
  return new PollError(
    "timeout_no_plan",
    `No plan was submitted within ${waited}. The remote session may have failed to start, or the ` +
      `session id ${sessionId} is wrong; check with \`planport status ${sessionId}\`.`,
    rejectCount,
    progress,
  );
}

/** needs_input when the session waits on the user (idle, or an open question); null = unknown. */
function phaseOf(session: Session): PollPhase | null {
  if (session.status === "idle" || session.status === "requires_action") return "needs_input";
  if (session.status === "running") return "running";
  return null;
}

function terminatedMessage(result: { subtype: string; message?: string }): string {
  if (result.subtype === "archived") {
    return "The session was stopped (archived) before a plan was approved.";
  }
  const why = result.message ? `: ${result.message}` : ".";
  return `The remote session ended (${result.subtype}) before a plan was approved${why}`;
}

function permanentMessage(err: unknown, sessionId: string, attach: string): string {
  if (!(err instanceof ApiError)) return `Polling failed: ${String(err)}`;
  if (err.status === 401 || err.status === 403) {
    return `The server refused the token (${err.status} ${err.code}: ${err.message}). Check --token or PLANPORT_TOKEN, then \`${attach}\`.`;
  }
  if (err.status === 404) {
    return `Session ${sessionId} was not found (404 ${err.code}). Check the session id, and that the token is the one that created it.`;
  }
  return `Polling failed (${err.status} ${err.code}: ${err.message}). The remote session may still be running: re-attach with \`${attach}\`.`;
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive number, got ${value}`);
  }
  return value;
}
