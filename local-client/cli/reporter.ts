import { keepPlanningCount } from "../../src/protocol/index.ts";
import type { PollOutcome, PollPhase } from "../poll/poller.ts";
import { notificationBytes, notificationProtocol, notificationText } from "../terminal/notify.ts";
import { terminalJson, terminalLine, terminalText, truncateLine } from "../terminal/text.ts";
import type { ErrorReason } from "./exit-codes.ts";

/**
 * How `plan` and `attach` talk to the user, in three modes:
 * - `json`: only the NDJSON lines of docs/PROTOCOL.md on stdout (warnings still go to stderr);
 * - `tty`: the lines `plain` prints, and below them a one-line spinner on stderr animating what
 *   is under way (the phase, a snapshot's counters, the wait for a decision); a line that states
 *   a fact is never erased by it (issue 26: the README's transcript is what a terminal shows).
 *   When the plan is ready or input is needed it also rings the bell and sends a desktop
 *   notification where the terminal has one (notify.ts), unless `quiet`;
 * - `plain`: one line per change on stderr (logs, CI).
 * The words are the review page's (src/protocol/decision-words.ts): a rejection is "keep
 * planning" for people, while the JSON keeps CONTRACT's `rejected` and `reject_count`.
 * Everything it prints passes through {@link terminalText} (links, titles, the server's and the
 * session's messages are not ours); NDJSON lines are exact JSON with terminal-unsafe characters
 * escaped ({@link terminalJson}).
 */

/** The reasons of the error line live with the exit codes (exit-codes.ts). */
export type { ErrorReason };

/**
 * The poll's outcome, with the plan file a teleport was saved to; for a best-of-N group, also
 * the chosen session and the group.
 */
export type Outcome = PollOutcome & { planFile?: string; sessionId?: string; group?: string };

export interface Reporter {
  readonly mode: "json" | "tty" | "plain";
  /** A human line (dropped in json mode). */
  note(message: string): void;
  /** Always shown, on stderr. */
  warn(message: string): void;
  /**
   * A transient status, such as a counter ticking up (the spinner text on a TTY; throttled
   * lines otherwise). A fact that must stay on screen is a `note`.
   */
  status(message: string): void;
  session(id: string, reviewUrl: string): void;
  /** A best-of-N group was started: its name and sessions (in place of `session`). */
  group(name: string, sessions: readonly GroupSession[]): void;
  phase(phase: PollPhase, reviewUrl: string): void;
  /** How many plans of a group wait for review. */
  progress(ready: number, total: number): void;
  /** The reviewer asked to keep planning; `sessionId` names the session of a group it happened in. */
  rejected(rejectCount: number, sessionId?: string): void;
  outcome(outcome: Outcome): void;
  error(e: {
    reason: ErrorReason;
    message: string;
    sessionId: string | null;
    rejectCount: number;
  }): void;
  /**
   * The server answers again after transient failures: the spinner goes back to what it
   * showed before them (a TTY; a line otherwise), with no phase line printed twice.
   */
  recovered(): void;
  /** Stops the spinner (before prompts and on exit). */
  pause(): void;
}

/** What the reporter shows of each session of a group. */
export interface GroupSession {
  id: string;
  review_url: string;
  planner: string;
}

/**
 * How many plans of a group are ready, in words.
 *
 * @example
 * progressText(2, 3) // → "2 of 3 plans ready"
 */
export function progressText(ready: number, total: number): string {
  return `${ready} of ${total} ${total === 1 ? "plan" : "plans"} ready`;
}

export interface ReporterStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/**
 * @example
 * const reporter = createReporter({ json: opts.json });
 * reporter.phase("plan_ready", session.review_url);
 */
export function createReporter(
  opts: { json: boolean; quiet?: boolean },
  streams: ReporterStreams = { stdout: process.stdout, stderr: process.stderr },
  env: NodeJS.ProcessEnv = process.env,
): Reporter {
  if (opts.json) return jsonReporter(streams);
  const tty = streams.stderr.isTTY === true && !env.CI;
  return humanReporter(streams, tty, tty && opts.quiet !== true ? env : null);
}

/**
 * The words for a poll phase, as the spinner and plain lines show them.
 *
 * @example
 * phaseText("plan_ready", url) // → "plan ready — review at <url>"
 */
export function phaseText(phase: PollPhase, reviewUrl: string): string {
  switch (phase) {
    case "running":
      return "researching…";
    case "needs_input":
      return `needs your input — open ${reviewUrl}`;
    case "plan_ready":
      return `plan ready — review at ${reviewUrl}`;
  }
}

function jsonReporter({ stdout, stderr }: ReporterStreams): Reporter {
  const line = (o: Record<string, unknown>) => stdout.write(`${terminalJson(o)}\n`);
  return {
    mode: "json",
    note: () => {},
    warn: (m) => stderr.write(`planport: ${terminalText(m)}\n`),
    status: () => {},
    session: (id, reviewUrl) => line({ event: "session", id, review_url: reviewUrl }),
    // docs/PROTOCOL.md "CLI": the one `session` line (the group's first session, with the
    // group's name), then one `group` line listing every session.
    group: (name, sessions) => {
      const first = sessions[0];
      if (first)
        line({ event: "session", id: first.id, review_url: first.review_url, group: name });
      line({
        event: "group",
        group: name,
        sessions: sessions.map((s) => ({ id: s.id, review_url: s.review_url, planner: s.planner })),
      });
    },
    phase: (phase) => line({ event: "phase", phase }),
    progress: (ready, total) => line({ event: "progress", ready, total }),
    rejected: (n, sessionId) =>
      line({
        event: "rejected",
        reject_count: n,
        ...(sessionId === undefined ? {} : { session_id: sessionId }),
      }),
    outcome: (o) =>
      line({
        event: "outcome",
        kind: o.kind,
        execution_target: o.executionTarget,
        plan: o.plan,
        ...(o.planFile === undefined ? {} : { plan_file: o.planFile }),
        reject_count: o.rejectCount,
        ...(o.sessionId === undefined ? {} : { session_id: o.sessionId }),
        ...(o.group === undefined ? {} : { group: o.group }),
      }),
    error: (e) =>
      line({
        event: "error",
        reason: e.reason,
        message: e.message,
        session_id: e.sessionId,
        reject_count: e.rejectCount,
      }),
    recovered: () => {},
    pause: () => {},
  };
}

const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_FRAME_MS = 120;
/** Non-TTY status lines (snapshot progress) at most this often, so logs stay readable. */
const PLAIN_STATUS_EVERY_MS = 2_000;

/**
 * What the spinner shows while a phase lasts: the phase's own line for research (kept as a
 * line when the phase ends, as `plain` prints it), and for a plan or a question, whose line with
 * the whole link is printed at once, the wait for the reader.
 */
function phaseSpin(phase: PollPhase, reviewUrl: string): { text: string; keep: boolean } {
  switch (phase) {
    case "running":
      return { text: phaseText(phase, reviewUrl), keep: true };
    case "needs_input":
      return { text: "waiting for your answer…", keep: false };
    case "plan_ready":
      return { text: "waiting for your decision…", keep: false };
  }
}

/**
 * The line for "the reviewer asked to keep planning", with the count so far.
 *
 * @example
 * keepPlanningLine(1) // → "keep planning (1 so far): the planner is revising"
 */
export function keepPlanningLine(n: number, sessionId?: string): string {
  const who = sessionId === undefined ? "" : `${terminalLine(sessionId)}: `;
  return `${who}keep planning (${n} so far): the planner is revising`;
}

/**
 * How a poll ended, in the decisions' words.
 *
 * @example
 * outcomeLine({ kind: "teleport", rejectCount: 1, planFile: "/p.md", … })
 * // → "plan approved and sent to terminal (after keep planning ×1): /p.md"
 */
export function outcomeLine(o: Outcome): string {
  const after = o.rejectCount > 0 ? ` (after ${keepPlanningCount(o.rejectCount)})` : "";
  return o.kind === "approved"
    ? `plan approved to run in the cloud${after}`
    : `plan approved and sent to terminal${after}${o.planFile ? `: ${terminalLine(o.planFile)}` : ""}`;
}

/**
 * `notifyEnv`: the environment that says which notification the terminal shows; null sends
 * none (not a TTY, or `--quiet`).
 */
function humanReporter(
  { stderr }: ReporterStreams,
  tty: boolean,
  notifyEnv: NodeJS.ProcessEnv | null,
): Reporter {
  // The spinner's text, and whether it is a fact to keep as a line once it stops showing.
  let spinning = { text: "", keep: false };
  // What a notification names: the session (or group) being waited for.
  let subject = "";
  const notify = (phase: PollPhase) => {
    if (notifyEnv === null || phase === "running") return;
    const protocol = notificationProtocol(notifyEnv);
    stderr.write(notificationBytes(protocol, "planport", notificationText(phase, subject)));
  };
  let frame = 0;
  let timer: NodeJS.Timeout | null = null;
  // What the spinner showed for the phase, to show again once the server answers again.
  let phaseWait: { text: string; keep: boolean } | null = null;
  let lastPlainStatus = 0;
  let lastPlainKind = "";

  const clear = () => {
    if (tty && timer) stderr.write("\r\x1b[2K");
  };
  const draw = () => {
    // A line that wraps cannot be redrawn with \r; keep it within the terminal's width.
    const columns = stderr.columns || 80;
    const shown = truncateLine(spinning.text, columns - 3);
    stderr.write(`\r\x1b[2K${SPINNER_FRAMES[frame % SPINNER_FRAMES.length]} ${shown}`);
    frame += 1;
  };
  /** Ends the spinner's line: a fact is left as a plain line, anything else is erased. */
  const settle = () => {
    if (!tty || !timer) return;
    clear();
    if (spinning.keep) stderr.write(`${spinning.text}\n`);
    spinning = { text: "", keep: false };
  };
  const print = (m: string) => {
    clear();
    stderr.write(`${terminalText(m)}\n`);
    if (tty && timer) draw();
  };
  const spin = (m: string, keep = false) => {
    if (!tty) return;
    settle();
    spinning = { text: terminalLine(m), keep };
    if (!timer) {
      // A hand-drawn spinner rather than @clack's: clack's puts stdin in raw mode and exits
      // with 0 on Ctrl-C, which would skip saving the cursor and the 130 exit code.
      timer = setInterval(draw, SPINNER_FRAME_MS);
      timer.unref();
    }
    draw();
  };
  const pause = () => {
    settle();
    if (timer) clearInterval(timer);
    timer = null;
  };

  return {
    mode: tty ? "tty" : "plain",
    note: print,
    warn: (m) => print(`warning: ${m}`),
    status: (m) => {
      if (tty) return spin(m);
      // A new kind of status always shows; a counter ticking up shows every few seconds.
      const kind = m.replace(/\d+/g, "#");
      const now = performance.now();
      if (kind === lastPlainKind && now - lastPlainStatus < PLAIN_STATUS_EVERY_MS) return;
      lastPlainKind = kind;
      lastPlainStatus = now;
      print(m);
    },
    session: (id, reviewUrl) => {
      subject = `session ${id}`;
      print(`session ${terminalLine(id)}\nreview: ${terminalLine(reviewUrl)}`);
    },
    group: (name, sessions) => {
      subject = `group ${name}`;
      print(`group ${terminalLine(name)}: ${sessions.length} sessions on the same snapshot`);
      for (const s of sessions) {
        print(
          `session ${terminalLine(s.id)} (${terminalLine(s.planner)} planner)\nreview: ${terminalLine(s.review_url)}`,
        );
      }
    },
    progress: (ready, total) => {
      const text = progressText(ready, total);
      if (tty) spin(text);
      else print(text);
    },
    phase: (phase, url) => {
      // One line: a link with a line break in it could fake the lines around it.
      const reviewUrl = terminalLine(url);
      if (!tty) print(phaseText(phase, reviewUrl));
      else {
        // The line with the link is printed whole, once (a spinner line is cut to the width).
        const wait = phaseSpin(phase, reviewUrl);
        phaseWait = wait;
        if (!wait.keep) {
          settle();
          print(phaseText(phase, reviewUrl));
        }
        spin(wait.text, wait.keep);
      }
      notify(phase);
    },
    rejected: (n, sessionId) => print(keepPlanningLine(n, sessionId)),
    recovered: () => {
      if (!tty) return print("the server answers again");
      // Shown again as it was, never kept as a second line of the same fact.
      if (phaseWait !== null) spin(phaseWait.text, false);
    },
    outcome: (o) => {
      pause();
      stderr.write(`${outcomeLine(o)}\n`);
    },
    error: (e) => {
      pause();
      stderr.write(`planport: ${terminalText(e.message)}\n`);
    },
    pause,
  };
}
