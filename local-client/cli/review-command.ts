import type { PlanFile, Session } from "../../src/protocol/index.ts";
import { UsageError } from "../errors.ts";
import { ApiError, withRetry } from "../http/api.ts";
import { PollError } from "../poll/error.ts";
import { type PollOutcome, pollForApprovedExitPlanMode } from "../poll/poller.ts";
import {
  acquirePollLock,
  assertSessionId,
  loadSidecar,
  PollLockedError,
  RESUMABLE,
  removeSidecar,
  saveSidecar,
} from "../poll/sidecar.ts";
import { act, ask, PromptCancelled } from "../review/prompts.ts";
import { renderPlan, renderWidth, wrapToWidth } from "../review/render.ts";
import { type ReviewScreen, type ReviewState, reviewScreen, screenKey } from "../review/screen.ts";
import { terminalLine, terminalText } from "../terminal/text.ts";
import { pollErrorText } from "./advice.ts";
import { type Connection, connect } from "./connection.ts";
import { EXIT, exitCodeForReason } from "./exit-codes.ts";
import { pollSettings, type Settings } from "./flags.ts";
import { handOff } from "./handoff.ts";
import { commandOutput } from "./output.ts";
import { createReporter } from "./reporter.ts";
import { refuseWait } from "./sentences.ts";

/**
 * `planport review <id>`: the review page in the terminal. It draws the plan (review/render.ts)
 * and offers what the page offers (review/screen.ts), sending the same API calls. While it is
 * open it polls the session's events exactly as `attach` does (poller.ts, with the sidecar and
 * the poll lock), so it counts as the polling terminal and "Approve and send to terminal" is allowed;
 * the poll's outcome is handed off as `plan` hands it off (handoff.ts). Beside the poll, it
 * reads the session and plan every interval and draws the screen again when they change.
 */

export interface ReviewFlags {
  server?: string;
  token?: string;
  plansDir?: string;
  onTeleport?: string;
  repo?: string;
  interval?: string;
  /** Refused: the review is a conversation in the terminal, not a stream of lines. */
  json?: boolean;
}

const REVIEW_INTERVAL_MS = 3_000;
// Clear the screen and its scrollback, then home: each drawing is the whole current state.
const CLEAR_SCREEN = "\x1b[2J\x1b[3J\x1b[H";

/** Why the action prompt was closed without an answer. */
type Interruption = "changed" | "finished" | "interrupted";

export async function runReview(sessionId: string, flags: ReviewFlags): Promise<number> {
  const interrupt = new AbortController();
  const onSigint = () => {
    if (interrupt.signal.aborted) process.exit(EXIT.interrupted);
    interrupt.abort();
  };
  process.on("SIGINT", onSigint);
  let conn: Connection | null = null;
  let release: (() => void) | null = null;
  try {
    assertSessionId(sessionId);
    if (flags.json) {
      throw new UsageError(
        `planport review is interactive and has no --json; read the session with \`planport status ${sessionId} --json\`, or wait for its plan with \`planport attach ${sessionId} --json\``,
      );
    }
    const settings = pollSettings({
      repo: flags.repo,
      plansDir: flags.plansDir,
      onTeleport: flags.onTeleport,
      interval: flags.interval,
    });
    const intervalMs = settings.intervalMs ?? REVIEW_INTERVAL_MS;
    conn = await connect(flags, {
      note: (m) => process.stderr.write(`${terminalText(m)}\n`),
      status: (m) => process.stderr.write(`${terminalText(m)}\n`),
      signal: interrupt.signal,
    });
    const api = conn.api;
    const session = await withRetry(() => api.getSession(sessionId), interrupt.signal);
    // Nothing to decide or receive: said before asking for a terminal.
    refuseWait(session);
    if (!(process.stdin.isTTY && process.stdout.isTTY)) {
      process.stderr.write(
        `planport review needs a terminal (stdin and stdout must be a TTY). Review ${terminalLine(session.id)} in the browser instead:\n${terminalLine(session.review_url)}\n`,
      );
      return EXIT.usage;
    }
    // Another planport on this machine may already wait for this plan (`plan`, `attach`): it
    // then receives a teleport, and this review only decides.
    let waiter: number | null = null;
    // An approver's review only decides: the plan goes to the requester's polling terminal.
    if (session.your_role !== "approver") {
      try {
        release = acquirePollLock(sessionId);
      } catch (err) {
        if (!(err instanceof PollLockedError)) throw err;
        waiter = err.pid;
      }
    }
    return await review(conn, session, settings, intervalMs, interrupt.signal, waiter);
  } catch (err) {
    if (interrupt.signal.aborted) {
      process.stderr.write(
        `Interrupted; session ${sessionId} stays open: planport review ${sessionId} (or attach) picks it up.\n`,
      );
      return EXIT.interrupted;
    }
    return commandOutput(flags.json === true).fail(err, { source: conn?.source, sessionId });
  } finally {
    process.off("SIGINT", onSigint);
    release?.();
    await conn?.release().catch(() => {});
  }
}

async function review(
  conn: Connection,
  first: Session,
  settings: Settings,
  intervalMs: number,
  signal: AbortSignal,
  waiter: number | null,
): Promise<number> {
  const { api } = conn;
  const id = first.id;
  // Another planport here waits for the plan, or this is an approver's review (team review):
  // either way this review only decides, and never receives a teleport itself.
  const approver = first.your_role === "approver";
  const decidesOnly = waiter !== null || approver;
  const readPlan = async (): Promise<PlanFile | null> => {
    const plan = await api.plan(id, { signal });
    return plan.revision > 0 ? plan : null;
  };
  let state: ReviewState = { session: first, plan: await readPlan() };
  let key = screenKey(state);
  /** Aborts the open action prompt (a change to draw, the poll's end, Ctrl-C). */
  let prompt = new AbortController();
  let reason: Interruption | null = null;
  const closePrompt = (why: Interruption) => {
    // Ctrl-C wins over a change to draw: it must not be lost to a redraw.
    if (reason === null || why === "interrupted") reason = why;
    prompt.abort();
  };
  signal.addEventListener("abort", () => closePrompt("interrupted"));

  // The poll (the polling terminal): resolves with the outcome, or the PollError that ends it.
  const pollStop = new AbortController();
  signal.addEventListener("abort", () => pollStop.abort());
  const sidecar = decidesOnly ? null : loadSidecar(id);
  type PollEnd = { outcome: PollOutcome } | { error: unknown };
  let ended: PollEnd | null = null;
  const poll: Promise<PollEnd> = decidesOnly
    ? new Promise<PollEnd>(() => {})
    : pollForApprovedExitPlanMode({
        server: conn.server,
        token: conn.token,
        sessionId: id,
        intervalMs,
        // A review stays open as long as the user keeps it open.
        timeoutMs: 7 * 24 * 3_600_000,
        signal: pollStop.signal,
        resume: sidecar ? { cursor: sidecar.cursor, scanner: sidecar.scanner } : undefined,
      }).then(
        (outcome) => ({ outcome }),
        (error: unknown) => ({ error }),
      );
  void poll.then((end) => {
    ended = end;
    closePrompt("finished");
  });

  // The screen's own refresh: session and plan, drawn again when they change.
  const refresh = (async () => {
    // Ends with the poll too: a review that only decides has no poll to end it (its `ended`
    // stays null), and an aborted sleep returns at once, so without this it would spin.
    while (!signal.aborted && !pollStop.signal.aborted && ended === null) {
      await sleep(intervalMs, pollStop.signal);
      if (signal.aborted || pollStop.signal.aborted || ended !== null) return;
      try {
        const next = { session: await api.getSession(id, { signal }), plan: await readPlan() };
        if (screenKey(next) !== key) {
          state = next;
          key = screenKey(next);
          closePrompt("changed");
        }
      } catch {
        // A missed refresh is retried next interval; the poll counts real failures.
      }
    }
  })();

  let notice = approver
    ? "You review this plan as an approver: a plan you send to a terminal goes to the requester's terminal."
    : waiter === null
      ? ""
      : `planport (process ${waiter}) on this machine is waiting for this plan: a plan you approve and send to terminal goes to it.`;
  try {
    for (;;) {
      if (ended !== null || signal.aborted || reason === "interrupted") break;
      reason = null;
      prompt = new AbortController();
      const screen = reviewScreen(state, { waiter });
      draw(state, screen, notice);
      notice = "";
      if (screen.over && decidesOnly) {
        // The planport that waits for this plan hands it off; nothing more happens here.
        process.stdout.write(
          approver
            ? "The session is over; the requester's planport hands off its plan.\n"
            : `The session is over; planport (process ${waiter}) hands off its plan.\n`,
        );
        return overExitCode(state.session);
      }
      const choice = await ask(screen, prompt.signal);
      if (choice === "changed") continue;
      if (choice === "cancelled" || reason === "interrupted") {
        closePrompt("interrupted");
        break;
      }
      if (choice === "finished" || reason === "finished") break;
      try {
        notice = await act(api, state, screen, choice, signal);
      } catch (err) {
        if (err instanceof PromptCancelled) continue;
        notice = `planport: ${err instanceof ApiError ? `${err.message} (${err.code})` : String(err)}`;
      }
      // After an action, read the new state at once rather than at the next interval.
      try {
        const next = { session: await api.getSession(id, { signal }), plan: await readPlan() };
        state = next;
        key = screenKey(next);
      } catch {
        // Drawn from the last known state; the refresh tries again.
      }
    }
  } finally {
    pollStop.abort();
    await refresh.catch(() => {});
  }

  pollStop.abort();
  const end: PollEnd | null = ended ?? (decidesOnly ? null : await poll);
  if (end !== null && "outcome" in end) {
    removeSidecar(id);
    process.stdout.write("\n");
    return await handOff(state.session, end.outcome, settings, createReporter({ json: false }));
  }
  const pollError = end !== null && end.error instanceof PollError ? end.error : null;
  if (pollError) {
    if (RESUMABLE.has(pollError.reason)) {
      saveSidecar({
        sessionId: id,
        server: conn.server,
        reviewUrl: state.session.review_url,
        repo: settings.repoRoot,
        progress: pollError.progress,
      });
    } else removeSidecar(id);
  }
  if (signal.aborted || reason === "interrupted" || end === null) {
    process.stderr.write(
      `\nInterrupted; session ${id} stays open: planport review ${id} (or planport attach ${id}) picks it up.\n`,
    );
    return EXIT.interrupted;
  }
  if (pollError) {
    process.stderr.write(`\nplanport: ${terminalText(pollErrorText(pollError))}\n`);
    return exitCodeForReason(pollError.reason);
  }
  throw end.error;
}

/** A review that only decided (another planport waits for the plan) ends as `plan` would. */
function overExitCode(session: Session): number {
  const kind = session.outcome?.kind;
  return kind === "approved" || kind === "teleport" ? EXIT.ok : EXIT.terminated;
}

function draw(state: ReviewState, screen: ReviewScreen, notice: string): void {
  const width = renderWidth(process.stdout.columns);
  const rule = "─".repeat(Math.min(width, 80));
  const lines = [
    ...screen.header,
    terminalText(screen.hint),
    rule,
    state.plan ? renderPlan(state.plan.content, width) : "(no plan yet)",
    rule,
    // The header scrolls away above a long plan: the state is repeated next to the prompt.
    ...(screen.header[1] ? [screen.header[1]] : []),
    ...screen.withheld.map((w) => `note: ${terminalText(w)}`),
    ...(notice ? [terminalText(notice)] : []),
  ];
  process.stdout.write(`${CLEAR_SCREEN}${wrapToWidth(lines.join("\n"), width)}\n`);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
