import { type Session, TERMINAL_POLL_WINDOW_MS } from "../protocol/index.ts";
import { pageTime, type Sentence, sentence } from "./times.ts";
import { type SessionDeadlines, terminalIsPolling } from "./view.ts";

/**
 * "What happens next, and when": the sentences the review page shows while something is
 * live — an open question with an ask timeout, a plan waiting for a decision (with or without
 * a terminal to send it to), a long-running planner, an ended session's retention. Pure: the
 * session, its deadlines and the time in, sentences out. Silent timeouts lost people work
 * (anthropics/claude-code#44804, #46213): every timer the session has is named with its time.
 */

export interface NextStep {
  /** `soon`: the deadline is near (within {@link SOON_MS}); `info` otherwise. */
  tone: "info" | "soon";
  /** What to say; its times are shown in the reader's time zone (times.ts). */
  sentence: Sentence;
}

/** A planner working longer than this is called long-running. */
export const LONG_RUNNING_MS = 10 * 60_000;
/** A deadline closer than this is shown as approaching. */
export const SOON_MS = 5 * 60_000;
/** A purge closer than this is shown as approaching. */
export const PURGE_SOON_MS = 24 * 60 * 60_000;

/**
 * The next steps of a session at `nowMs`, most urgent first; none when nothing is live.
 *
 * @example
 * nextSteps(session, { ask_timeout_s: 600, afk_due_at: "2026-05-01T14:32:00Z", purge_due_at: null }, now)
 * // [{ tone: "info", sentence: ["If nobody answers by ", {iso, text: "14:32 UTC", …}, …] }]
 */
export function nextSteps(
  session: Session,
  deadlines: SessionDeadlines | undefined,
  nowMs: number,
): NextStep[] {
  const steps: NextStep[] = [];
  const pending = session.pending ?? null;
  const over = session.status === "archived" || session.phase === "done";
  if (!over && pending?.kind === "question") steps.push(questionStep(deadlines, nowMs));
  if (!over && pending?.kind === "plan")
    steps.push(...planSteps(session, pending.opened_at, nowMs));
  if (!over && !pending && (session.phase === "running" || session.phase === "executing")) {
    const started = Date.parse(session.created_at);
    if (Number.isFinite(started) && nowMs - started >= LONG_RUNNING_MS) {
      const doing =
        session.phase === "executing"
          ? "carrying out the approved plan"
          : "researching and planning";
      steps.push({
        tone: "info",
        sentence: sentence`The planner has been ${doing} for ${minutes(nowMs - started)} (since ${pageTime(started, nowMs)}). It goes on by itself: you can close this page and come back, or stop the session below.`,
      });
    }
  }
  if (over && deadlines?.purge_due_at) {
    const purge = Date.parse(deadlines.purge_due_at);
    if (Number.isFinite(purge)) {
      steps.push({
        tone: purge - nowMs <= PURGE_SOON_MS ? "soon" : "info",
        sentence: sentence`This session is kept until ${pageTime(purge, nowMs)}; then its plan, transcript and changes are deleted for good. Pull or copy what you need before then.`,
      });
    }
  }
  return steps;
}

function questionStep(deadlines: SessionDeadlines | undefined, nowMs: number): NextStep {
  const due = deadlines?.afk_due_at ? Date.parse(deadlines.afk_due_at) : Number.NaN;
  if (Number.isFinite(due)) {
    return {
      tone: due - nowMs <= SOON_MS ? "soon" : "info",
      sentence:
        due <= nowMs
          ? [
              "The time to answer is up: the planner goes on with its best judgment at its next step.",
            ]
          : sentence`If nobody answers by ${pageTime(due, nowMs)} (in ${minutes(due - nowMs)}), the planner goes on with its best judgment.`,
    };
  }
  return {
    tone: "info",
    sentence: [
      "The planner waits for your answer, with no time limit: nothing happens until you answer or stop the session.",
    ],
  };
}

function planSteps(session: Session, openedAt: string, nowMs: number): NextStep[] {
  const steps: NextStep[] = [{ tone: "info", sentence: [waitingText(session)] }];
  const polled = session.terminal_polled_at ? Date.parse(session.terminal_polled_at) : Number.NaN;
  if (terminalIsPolling(session, nowMs) && Number.isFinite(polled)) {
    steps.push({
      tone: "info",
      sentence: sentence`A terminal is polling this session: send to terminal is offered while it keeps polling (at the latest by ${pageTime(polled + TERMINAL_POLL_WINDOW_MS, nowMs, "second")} unless it polls again).`,
    });
  } else {
    steps.push({
      tone: "info",
      sentence: sentence`No terminal is polling: start planport attach ${session.id} to enable send-to-terminal.`,
    });
  }
  const opened = Date.parse(openedAt);
  if (Number.isFinite(opened) && nowMs - opened >= LONG_RUNNING_MS) {
    steps.push({
      tone: "info",
      sentence: sentence`The plan has been ready for ${minutes(nowMs - opened)} (since ${pageTime(opened, nowMs)}).`,
    });
  }
  return steps;
}

/**
 * Who the plan waits for, as the reader of the page sees it: their own decision, an approver's
 * (team review: the session names approvers), or — on a share link — the people deciding.
 */
function waitingText(session: Session): string {
  const approvers = session.approvers ?? [];
  const role = session.your_role;
  const names = approvers.join(", ");
  if (role === "viewer") {
    return approvers.length > 0
      ? `The plan waits for the approval of ${names}. This is a share link: you can read along and leave comments, but not decide.`
      : "The plan waits for its requester's decision. This is a share link: you can read along and leave comments, but not decide.";
  }
  if (approvers.length === 0 || role === "approver") {
    return "The plan waits for your decision, with no time limit: nothing is carried out until you approve it. Keep planning sends it back to the planner with your feedback.";
  }
  const who = approvers.length === 1 ? names : `one of ${names}`;
  return `The plan waits for the approval of ${who}, with no time limit: nothing is carried out until ${approvers.length === 1 ? "they approve" : "one of them approves"} it. You can still keep planning with your feedback.`;
}

/**
 * A duration in whole minutes (at least one), or hours and minutes past an hour.
 *
 * @example
 * minutes(95 * 60_000) // "1 h 35 min"
 */
export function minutes(ms: number): string {
  const total = Math.max(1, Math.round(ms / 60_000));
  if (total < 60) return `${total} min`;
  const h = Math.floor(total / 60);
  const m = total % 60;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}
