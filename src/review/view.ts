import {
  ENDING_RESULT_SUBTYPES,
  type Event,
  MAX_APPROVABLE_PLAN_CHARS,
  type PlanDecisionRecord,
  type PlanFile,
  type QuestionInput,
  QuestionInputSchema,
  reviewStateKey,
  type Session,
  type SessionPhase,
  type Suggestion,
  TERMINAL_POLL_WINDOW_MS,
} from "../protocol/index.ts";
import type { RevisionInfo } from "./revisions.ts";

/**
 * What the review page offers, decided from the session alone. Pure, so every rule (when a
 * teleport is offered, when approval is withheld, what an ended session says) is tested as a
 * table; the page only lays the answer out.
 */

/** What the review route loads for one page: the session as its review-key holder sees it. */
export interface ReviewData {
  session: Session;
  /** Null until the planner first writes the plan file. */
  plan: PlanFile | null;
  /** The event log, oldest first (the transcript). */
  events: readonly Event[];
  /** The session's decisions, oldest first (the transcript's feedback details); none when absent. */
  decisions?: readonly PlanDecisionRecord[];
  /** The session's best-of-N group (this session among its members); absent or null when none. */
  group?: ReviewGroup | null;
  /** Every stored plan revision without its text, oldest first; absent when not loaded. */
  revisions?: readonly RevisionInfo[];
  /** The text of the revisions the page asked for (the one shown, the two compared). */
  revisionTexts?: readonly PlanFile[];
  /** The session's deadlines (what happens next, and when); absent when not loaded. */
  deadlines?: SessionDeadlines;
  /** The remote execution's changes as a unified diff; absent or null when not loaded. */
  changes?: string | null;
  /** Comments readers left as suggestions for the decider (team review); none when absent. */
  suggestions?: readonly Suggestion[];
}

/** When the session does something by itself (the loader's shape). */
export interface SessionDeadlines {
  /** The ask timeout in seconds, or null when the planner waits for answers forever. */
  ask_timeout_s: number | null;
  /** ISO time the ask timeout answers the open question; null when none is due. */
  afk_due_at: string | null;
  /** ISO time an ended session's data is deleted; null while it runs. */
  purge_due_at: string | null;
}

/**
 * A best-of-N group as the loader gives it: every member is a session of the same owner and
 * group, read with the owner's access (so each carries its own review link).
 */
export interface ReviewGroup {
  name: string;
  members: readonly { session: Session; plan: PlanFile | null }[];
}

/** Phase names as the page shows them (SPEC: researching / needs your input / …). */
export const PHASE_LABELS: Readonly<Record<SessionPhase, string>> = {
  running: "researching",
  needs_input: "needs your input",
  plan_ready: "plan ready",
  executing: "executing",
  done: "done",
};

/** The terminated outcome's subtype of a session whose group chose another plan. */
export const SUPERSEDED = "superseded";

/** An action the page offers, or the sentence that says why it does not. */
export type Offer = { offered: true } | { offered: false; reason: string };

export type QuestionView =
  | { toolUseId: string; valid: true; questions: QuestionInput["questions"] }
  | { toolUseId: string; valid: false };

export interface DecisionView {
  toolUseId: string;
  planChars: number;
  /** Over {@link MAX_APPROVABLE_PLAN_CHARS}: approval withheld, keep planning offered with a request to shorten. */
  tooLarge: boolean;
  approve: Offer;
  teleport: Offer;
  /** Why send-to-terminal is missing when no terminal polls (shown by the script when one stops). */
  noTerminalReason: string;
  /** Why approve and send-to-terminal are not offered to this reader at all (team review). */
  approvalNeeded: string | null;
}

export interface OutcomeView {
  kind: "executing" | "executed" | "teleported" | "ended" | "stopped" | "superseded";
  title: string;
  text: string;
  /** Remote execution finished: show the diff and the pull command. */
  showChanges: boolean;
  /** The ending result's own message (what failed), when there is one. */
  detail?: string;
}

export interface ReviewView {
  phaseLabel: string;
  /** One sentence: what is happening and what the reader can do. */
  phaseHint: string;
  question: QuestionView | null;
  decision: DecisionView | null;
  /** A free-text message to the planner is possible (no open wait, session not over). */
  canMessage: boolean;
  /** Inline comments make sense while the plan can still be sent back (not after a decision). */
  canComment: boolean;
  canStop: boolean;
  outcome: OutcomeView | null;
  /** Changes of this string are what the page's script watches for (besides new events). */
  stateKey: string;
  /**
   * The page was opened with the share link (team review): no decision, answer, message or
   * stop controls; comments go to the decider as suggestions.
   */
  viewOnly: boolean;
}

/**
 * Whether a terminal polled the session recently enough for a teleport to be offered.
 *
 * @example
 * terminalIsPolling({ terminal_polled_at: "2026-05-01T10:00:00Z" }, Date.parse("2026-05-01T10:00:10Z")) // true
 */
export function terminalIsPolling(
  session: Pick<Session, "terminal_polled_at">,
  nowMs: number,
): boolean {
  if (!session.terminal_polled_at) return false;
  const polledMs = Date.parse(session.terminal_polled_at);
  return Number.isFinite(polledMs) && nowMs - polledMs <= TERMINAL_POLL_WINDOW_MS;
}

/**
 * Decides what the page shows for a session.
 *
 * @example
 * const view = reviewView(data, Date.now());
 * if (view.decision?.teleport.offered) …
 */
export function reviewView(data: ReviewData, nowMs: number): ReviewView {
  const { session, plan } = data;
  const pending = session.pending ?? null;
  const over = session.status === "archived" || session.phase === "done";
  const viewOnly = session.your_role === "viewer";
  const question: QuestionView | null =
    pending?.kind === "question" && !over && !viewOnly
      ? questionView(pending.tool_use_id, pending.input)
      : null;
  const decision: DecisionView | null =
    pending?.kind === "plan" && !over && !viewOnly
      ? decisionView(session, plan, pending.tool_use_id, nowMs)
      : null;
  return {
    phaseLabel: PHASE_LABELS[session.phase],
    // The share page never says "your review" or "answer it": the reader decides nothing.
    phaseHint: !viewOnly
      ? decision?.approvalNeeded
        ? "The plan is ready. Approving it is up to its approvers; you can still ask the planner to keep planning."
        : phaseHint(session, question !== null, decision !== null)
      : session.phase === "plan_ready" || session.phase === "needs_input"
        ? `${VIEW_ONLY_HINT}${approverHint(session)}`
        : `${phaseHint(session, false, false)} ${VIEW_ONLY_HINT}`,
    question,
    decision,
    canMessage: !pending && !over && !viewOnly,
    canComment: plan !== null && !over && session.outcome === null,
    canStop: session.status !== "archived" && session.phase !== "done" && !viewOnly,
    outcome: outcomeView(session, data.events),
    stateKey: reviewStateKey(session),
    viewOnly,
  };
}

/** What the share page says about itself. */
export const VIEW_ONLY_HINT =
  "You are viewing a read-only share link: you can read the plan and the transcript and leave comments, which the person deciding sees as suggestions.";

/**
 * What the share page adds for a plan that waits on approvers: an approver's own review_url is
 * this share link (it carries no decision key), so the page tells them where they decide.
 */
function approverHint(session: Session): string {
  const approvers = session.approvers ?? [];
  if (approvers.length === 0 || session.phase !== "plan_ready") return "";
  return ` This plan needs the approval of ${approvers.join(" or ")}: approvers decide with their own token (planport review ${session.id}).`;
}

/**
 * Why approve and send-to-terminal are missing when the plan needs someone else's approval
 * (team review), or null when the reader may approve.
 */
export function approvalNeededReason(session: Session): string | null {
  const approvers = session.approvers ?? [];
  if (approvers.length === 0 || session.your_role === "approver") return null;
  return `This plan needs the approval of ${approvers.join(" or ")}: they approve it with their own token (planport review ${session.id}). You can still ask the planner to keep planning.`;
}

function questionView(toolUseId: string, input: unknown): QuestionView {
  const parsed = QuestionInputSchema.safeParse(input);
  return parsed.success
    ? { toolUseId, valid: true, questions: parsed.data.questions }
    : { toolUseId, valid: false };
}

function decisionView(
  session: Session,
  plan: PlanFile | null,
  toolUseId: string,
  nowMs: number,
): DecisionView {
  const planChars = plan?.content.length ?? 0;
  const tooLarge = planChars > MAX_APPROVABLE_PLAN_CHARS;
  const tooLargeReason = `The plan is too large to review in full (${planChars.toLocaleString("en-US")} characters; the limit is ${MAX_APPROVABLE_PLAN_CHARS.toLocaleString("en-US")}), so it cannot be approved. Ask the planner to shorten it.`;
  const needsApproval = approvalNeededReason(session);
  const approve: Offer = tooLarge
    ? { offered: false, reason: tooLargeReason }
    : needsApproval !== null
      ? { offered: false, reason: needsApproval }
      : session.can_execute_remotely
        ? { offered: true }
        : {
            offered: false,
            reason: `The ${session.planner} planner cannot carry out plans in the cloud. Send the plan to your terminal instead, or keep planning.`,
          };
  const teleport: Offer = tooLarge
    ? { offered: false, reason: tooLargeReason }
    : needsApproval !== null
      ? { offered: false, reason: needsApproval }
      : terminalIsPolling(session, nowMs)
        ? { offered: true }
        : { offered: false, reason: noTerminalReason(session.id) };
  return {
    toolUseId,
    planChars,
    tooLarge,
    approve,
    teleport,
    noTerminalReason: noTerminalReason(session.id),
    approvalNeeded: needsApproval,
  };
}

/**
 * Why "send to terminal" is missing: the plan would go to a terminal that is not listening.
 * Also used by the browser script when a terminal stops polling while the page is open.
 */
export function noTerminalReason(sessionId: string): string {
  return `No terminal is waiting for this plan (none polled the session in the last ${TERMINAL_POLL_WINDOW_MS / 1000} seconds). Run planport attach ${sessionId} in your terminal, and this option appears here.`;
}

function phaseHint(session: Session, asking: boolean, deciding: boolean): string {
  switch (session.phase) {
    case "running":
      return "The planner is researching your repository and drafting the plan. This page updates by itself.";
    case "needs_input":
      return asking
        ? "The planner has a question for you. Answer it below to let it continue."
        : "The planner finished its turn and waits for a message from you.";
    case "plan_ready":
      return deciding
        ? "The plan is ready for your review. Approve it, or ask the planner to keep planning."
        : "The plan is ready for your review.";
    case "executing":
      return "The approved plan is being carried out in the cloud. This page updates by itself.";
    case "done":
      switch (session.outcome?.kind) {
        case "approved":
          return "The approved plan was carried out in the cloud. Review the changes, then pull them into your working tree.";
        case "teleport":
          return "The plan was approved and sent to your terminal.";
        case "terminated":
          return session.outcome.subtype === SUPERSEDED
            ? "Another plan of this group was chosen; this session is archived."
            : "The session ended before a plan was approved.";
        default:
          return session.status === "archived"
            ? "This session was stopped."
            : "This session is over.";
      }
  }
}

function outcomeView(session: Session, events: readonly Event[]): OutcomeView | null {
  const outcome = session.outcome;
  if (outcome?.kind === "approved" && outcome.execution_target !== "local") {
    if (session.phase === "executing" || session.phase === "running") {
      return {
        kind: "executing",
        title: "Approved: executing in the cloud",
        text: "The planner is carrying out the approved plan on a copy of your repository. Nothing changes on your machine until you pull the result.",
        showChanges: false,
      };
    }
    if (session.phase === "done") {
      return {
        kind: "executed",
        title: "Done: the plan was carried out in the cloud",
        text: "Review the changes below, then apply them to your working tree from your terminal:",
        showChanges: true,
      };
    }
    return null;
  }
  if (outcome?.kind === "teleport") {
    return {
      kind: "teleported",
      title: "Sent to your terminal",
      text: "You approved the plan and sent it to your terminal, where it is carried out. This session is archived and changes nothing itself.",
      showChanges: false,
    };
  }
  if (outcome?.kind === "terminated" && outcome.subtype === SUPERSEDED) {
    return {
      kind: "superseded",
      title: "Superseded: another plan of this group was chosen",
      text: "A plan of another session of this group was approved or sent to a terminal, so this session was archived. Nothing more happens here.",
      showChanges: false,
    };
  }
  const ending = lastEnding(events);
  if (outcome?.kind === "terminated" || (ending && ending.subtype !== "archived")) {
    const subtype = outcome?.subtype ?? ending?.subtype ?? "error";
    return {
      kind: "ended",
      title: `The session ended (${subtype})`,
      text: "The planner stopped before the plan was approved. Start a new session to try again.",
      showChanges: false,
      detail: ending?.message,
    };
  }
  if (session.status === "archived") {
    return {
      kind: "stopped",
      title: "Session stopped",
      text: "This session was stopped and archived. Nothing more happens here.",
      showChanges: false,
    };
  }
  return null;
}

function lastEnding(events: readonly Event[]): Extract<Event, { type: "result" }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type === "result" && ENDING_RESULT_SUBTYPES.includes(event.subtype)) return event;
  }
  return undefined;
}

/**
 * A cost in US dollars as the page shows it, or null when unknown: cents from a cent on, four
 * decimals below (a short offline or cached session costs fractions of a cent).
 *
 * @example
 * costText(0.01234) // "$0.0123"
 * costText(1.5) // "$1.50"
 */
export function costText(usd: number | null | undefined): string | null {
  if (typeof usd !== "number" || !Number.isFinite(usd)) return null;
  return usd >= 0.01 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** How the page names a planner (the offline one says it uses no model). */
export function plannerLabel(planner: string): string {
  return planner === "offline" ? "offline planner (no model)" : `${planner} planner`;
}
