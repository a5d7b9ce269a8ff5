import {
  DECISION_LABELS,
  keepPlanningCount,
  MAX_APPROVABLE_PLAN_CHARS,
  type PlanFile,
  QuestionInputSchema,
  reviewStateKey,
  type Session,
  type SessionPhase,
} from "../../src/protocol/index.ts";
import { terminalLine, terminalText } from "../terminal/text.ts";

/**
 * The terminal review's screen model, decided from the session and its plan alone (pure): the
 * header, which decisions are offered (the review page's rules), the open question as prompts.
 * review-command.ts only draws it and sends what the user picks. Every string taken from the
 * server here is made terminal-safe.
 */

export interface ReviewState {
  session: Session;
  /** Null until the planner first writes the plan file. */
  plan: PlanFile | null;
}

export type ReviewChoice =
  | "approve"
  | "teleport"
  | "feedback"
  | "feedback_editor"
  | "message"
  | "stop";

export interface ChoiceOption {
  value: ReviewChoice;
  label: string;
  hint?: string;
}

export interface QuestionPrompt {
  /** The question text exactly as the planner asked it: the key of the answer. */
  key: string;
  /** The question made safe to print. */
  text: string;
  multiSelect: boolean;
  options: { value: string; label: string; hint?: string }[];
}

export interface ReviewScreen {
  /** Header lines: title, session, phase, revision, how often the reviewer kept it planning. */
  header: string[];
  /** One sentence: what is happening and what the reader can do. */
  hint: string;
  /** The open question's tool_use id and prompts, when the planner asks one. */
  question: { toolUseId: string; prompts: QuestionPrompt[] } | null;
  /** The open ExitPlanMode call a decision answers, when a plan waits for review. */
  decisionToolUseId: string | null;
  choices: ChoiceOption[];
  /** Why a decision the web page can offer is not offered here. */
  withheld: string[];
  /** The session is over: nothing more can be decided. */
  over: boolean;
  /**
   * The pid of another planport on this machine that waits for this plan (`plan`, `attach`):
   * a plan sent to terminal goes to it, not to this review.
   */
  waiter: number | null;
}

/** The value of the "Other" option: picking it asks for a typed answer. */
export const OTHER = "\u0000other";

export const PHASE_LABELS: Readonly<Record<SessionPhase, string>> = {
  running: "researching",
  needs_input: "needs your input",
  plan_ready: "plan ready",
  executing: "executing in the cloud",
  done: "done",
};

/**
 * The string whose change means the screen must be drawn again: the session's state, its open
 * call, and the plan's revision.
 *
 * @example
 * screenKey({ session, plan }) // → "requires_action|plan_ready|toolu_1|0||2"
 */
export function screenKey(state: ReviewState): string {
  return `${reviewStateKey(state.session)}|${state.plan?.revision ?? ""}`;
}

/**
 * What the review shows and offers for a session, in the review page's words
 * (src/protocol/decision-words.ts). `waiter`: the pid of another planport here that waits for
 * the plan, named in the send option before it is chosen.
 *
 * @example
 * reviewScreen({ session, plan }).choices.map((c) => c.value)
 * // → ["teleport", "feedback", "feedback_editor", "stop"] (a planner that cannot execute)
 */
export function reviewScreen(
  state: ReviewState,
  opts: { waiter?: number | null } = {},
): ReviewScreen {
  const waiter = opts.waiter ?? null;
  const { session, plan } = state;
  const pending = session.pending ?? null;
  const over = session.status === "archived" || session.phase === "done";
  const planChars = plan?.content.length ?? 0;
  const tooLarge = planChars > MAX_APPROVABLE_PLAN_CHARS;
  const deciding = pending?.kind === "plan" && !over;
  const asking = pending?.kind === "question" && !over;
  const choices: ChoiceOption[] = [];
  const withheld: string[] = [];
  if (deciding) {
    if (tooLarge) {
      withheld.push(
        `The plan is too large to approve (${planChars.toLocaleString("en-US")} characters; the limit is ${MAX_APPROVABLE_PLAN_CHARS.toLocaleString("en-US")}). Ask the planner to shorten it.`,
      );
    } else if ((session.approvers ?? []).length > 0 && session.your_role !== "approver") {
      // Team review: approving is a listed approver's, with their own token.
      withheld.push(
        `This plan needs the approval of ${(session.approvers ?? []).map(terminalLine).join(" or ")}; they approve it with planport review ${terminalLine(session.id)} and their own token. You can keep it planning.`,
      );
    } else {
      if (session.can_execute_remotely) {
        choices.push({
          value: "approve",
          label: "Approve and run in the cloud",
          hint: "the planner carries the plan out on a copy of the repository",
        });
      } else {
        withheld.push(
          `The ${terminalLine(session.planner)} planner cannot carry out plans in the cloud; approve and send it to terminal instead, or keep planning.`,
        );
      }
      choices.push(
        session.your_role === "approver"
          ? {
              value: "teleport",
              label: `${DECISION_LABELS.teleport} (to the requester's terminal)`,
              hint: "the requester's planport receives the plan and hands it off",
            }
          : waiter !== null
            ? {
                value: "teleport",
                label: `${DECISION_LABELS.teleport} (to the planport already waiting in another process, pid ${waiter})`,
                hint: "it hands the plan off; this review ends",
              }
            : {
                value: "teleport",
                label: DECISION_LABELS.teleport,
                hint: "teleport the plan to this terminal and hand it off here",
              },
      );
    }
    choices.push(
      {
        value: "feedback",
        label: `${DECISION_LABELS.reject}, with feedback`,
        hint: "type what should change",
      },
      {
        value: "feedback_editor",
        label: `${DECISION_LABELS.reject}, feedback written in $EDITOR`,
        hint: "for longer feedback",
      },
    );
  }
  // As on the review page: a free-text message when nothing waits for an answer.
  if (!pending && !over) {
    choices.push({ value: "message", label: "Send a message to the planner" });
  }
  if (!over) choices.push({ value: "stop", label: DECISION_LABELS.stop, hint: "archive it" });
  return {
    header: headerLines(state),
    hint: hintFor(session, asking, deciding),
    question: asking && pending ? questionOf(pending.tool_use_id, pending.input) : null,
    decisionToolUseId: deciding && pending ? pending.tool_use_id : null,
    choices,
    withheld,
    over,
    waiter,
  };
}

function headerLines({ session, plan }: ReviewState): string[] {
  const keptPlanning =
    session.reject_count === 0 ? "" : ` · ${keepPlanningCount(session.reject_count)}`;
  const revision = plan
    ? `revision ${plan.revision}${plan.edited_by_user ? " (edited)" : ""}`
    : "no plan yet";
  return [
    `planport review · ${terminalLine(session.title)}`,
    `${terminalLine(session.id)} · ${terminalLine(session.planner)} planner · phase: ${PHASE_LABELS[session.phase]} · ${revision}${keptPlanning}`,
  ];
}

function hintFor(session: Session, asking: boolean, deciding: boolean): string {
  switch (session.phase) {
    case "running":
      return "The planner is researching the repository and drafting the plan; this screen updates by itself.";
    case "needs_input":
      return asking
        ? "The planner has a question for you."
        : "The planner finished its turn and waits for a message from you.";
    case "plan_ready":
      return deciding ? "The plan is ready for your review." : "The plan is ready.";
    case "executing":
      return "The approved plan is being carried out in the cloud.";
    case "done":
      switch (session.outcome?.kind) {
        case "approved":
          return `The approved plan was carried out in the cloud: planport pull ${terminalLine(session.id)} fetches the changes.`;
        case "teleport":
          return "The plan was approved and sent to terminal.";
        case "terminated":
          return session.outcome.subtype === "archived"
            ? "This session was stopped before a plan was approved."
            : session.outcome.subtype === "superseded"
              ? "This session was superseded: its group's reviewer chose another plan."
              : "This session failed before a plan was approved.";
        default:
          return session.status === "archived"
            ? "This session was stopped."
            : "This session is over.";
      }
  }
}

function questionOf(
  toolUseId: string,
  input: unknown,
): { toolUseId: string; prompts: QuestionPrompt[] } | null {
  const parsed = QuestionInputSchema.safeParse(input);
  if (!parsed.success) return null;
  return {
    toolUseId,
    prompts: parsed.data.questions.map((q) => ({
      key: q.question,
      text: terminalText(q.header ? `${q.header}: ${q.question}` : q.question).trim(),
      multiSelect: q.multiSelect === true,
      options: [
        ...q.options.map((o) => ({
          value: o.label,
          label: terminalLine(o.label),
          ...(o.description ? { hint: terminalLine(o.description) } : {}),
        })),
        { value: OTHER, label: "Other", hint: "type your own answer" },
      ],
    })),
  };
}

/**
 * One question's answer as the API takes it: the picked option labels (the typed answer in
 * place of "Other"), joined by ", " — as the review page sends it. Null when nothing is picked.
 *
 * @example
 * answerText(["Postgres", OTHER], "and Redis") // → "Postgres, and Redis"
 */
export function answerText(picked: readonly string[], other?: string): string | null {
  const parts = picked.map((p) => (p === OTHER ? (other ?? "").trim() : p)).filter((p) => p !== "");
  return parts.length === 0 ? null : parts.join(", ");
}

/**
 * Feedback written in an editor: lines starting with `#` are instructions and go (as in a git
 * commit message); the rest is trimmed.
 *
 * @example
 * editorFeedback("# Write below\nCover the migration\n") // → "Cover the migration"
 */
export function editorFeedback(text: string): string {
  return text
    .split(/\r?\n/)
    .filter((line) => !line.startsWith("#"))
    .join("\n")
    .trim();
}

/** What the feedback file says before the user writes in it. */
export const EDITOR_TEMPLATE =
  "\n# Write what the planner should change, then save and close the editor.\n# Lines starting with # are ignored; an empty message sends nothing.\n";
