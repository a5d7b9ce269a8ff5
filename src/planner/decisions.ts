import {
  approvedPlanResult,
  type Comment,
  neutralizeMarkers,
  type ToolResultBlock,
  teleportResult,
} from "../protocol/index.ts";

/**
 * The tool results that answer a pending ExitPlanMode or AskUserQuestion. Pure: the session
 * Durable Object records the decision and appends exactly the block these return, in one
 * transaction, so a decision and its tool result can never be seen apart.
 */

export type PlanDecision =
  | { kind: "approve"; plan: string; editedByUser: boolean; planPath: string }
  | { kind: "reject"; feedback: string; comments: readonly Comment[]; planPath: string }
  | { kind: "teleport"; plan: string };

/**
 * The tool result of a decided ExitPlanMode.
 *
 * - approve: not an error; the marker line and the plan come last, so a poller takes
 *   everything after the marker as the plan (an empty plan stays empty, never invented).
 * - reject: `is_error` with the feedback and the quoted comments; the model keeps planning.
 * - teleport: `is_error` with the stop instruction first and the sentinel + plan last, so the
 *   remote session stops (one execution point) and the terminal reads the plan.
 *
 * @example
 * planDecisionResult("toolu_1", { kind: "teleport", plan: "# Plan" }).is_error // true
 */
export function planDecisionResult(toolUseId: string, d: PlanDecision): ToolResultBlock {
  switch (d.kind) {
    case "approve": {
      const lead =
        d.plan.trim() === ""
          ? "User has approved exiting plan mode. You can now proceed."
          : `User has approved your plan. You can now start coding.\n\nYour plan has been saved to: ${d.planPath}\nYou can refer back to it if needed during implementation.`;
      return {
        type: "tool_result",
        tool_use_id: toolUseId,
        content: `${lead}\n\n${approvedPlanResult(d.plan, d.editedByUser)}`,
        is_error: false,
      };
    }
    case "reject":
      return {
        type: "tool_result",
        tool_use_id: toolUseId,
        content: rejectionText(d.feedback, d.comments, d.planPath),
        is_error: true,
      };
    case "teleport":
      return {
        type: "tool_result",
        tool_use_id: toolUseId,
        content:
          "The user approved this plan and sent it to their local terminal, where it will be carried out. " +
          "Stop now: do not implement anything in this session and do not call any more tools.\n\n" +
          teleportResult(d.plan),
        is_error: true,
      };
  }
}

/** Starts the feedback section of a rejection (the offline planner reads it back). */
export const FEEDBACK_HEADING = "Feedback from the user:";
/** Starts the quoted-comments section of a rejection. */
export const COMMENTS_HEADING = "Comments on passages of the plan:";

function rejectionText(feedback: string, comments: readonly Comment[], planPath: string): string {
  const parts = [
    "The user reviewed the plan and wants you to keep planning. The plan was NOT approved: do not start implementing.",
    `Revise the plan file (${planPath}) according to the feedback below, then call ExitPlanMode again.`,
  ];
  // Everything below is the reviewer's text (and passages of a plan the model wrote): made inert
  // so no marker line can appear in a rejection.
  if (feedback.trim() !== "")
    parts.push(`${FEEDBACK_HEADING}\n${neutralizeMarkers(feedback.trim())}`);
  if (comments.length > 0) {
    const quoted = comments
      .map((c) => `${quote(neutralizeMarkers(c.quote))}\n${neutralizeMarkers(c.text.trim())}`)
      .join("\n\n");
    parts.push(`${COMMENTS_HEADING}\n\n${quoted}`);
  }
  return parts.join("\n\n");
}

function quote(text: string): string {
  return text
    .trim()
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

/**
 * The tool result of an answered AskUserQuestion (all questions answered by the user).
 *
 * @example
 * answersResult("toolu_q", { "Which DB?": "Postgres" }).content
 */
export function answersResult(
  toolUseId: string,
  answers: Readonly<Record<string, string>>,
): ToolResultBlock {
  const pairs = answerPairs(answers);
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: `User has answered your questions: ${pairs.join(", ")}. You can now continue with the user's answers in mind.`,
    is_error: false,
  };
}

/** How the AFK answer starts (the offline planner recognises it). */
export const AFK_LEAD = "The user did not answer in time and may be away; use your best judgment.";

/**
 * The tool result when the AFK timeout answers for an absent user, with any partial answers.
 *
 * @example
 * afkAnswersResult("toolu_q", port.partialAnswers("toolu_q"))
 */
export function afkAnswersResult(
  toolUseId: string,
  partial: Readonly<Record<string, string>>,
): ToolResultBlock {
  const pairs = answerPairs(partial);
  const got =
    pairs.length > 0
      ? ` They answered some questions before leaving: ${pairs.join(", ")}.`
      : " They did not answer any of the questions.";
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: `${AFK_LEAD}${got} State the assumptions you make in the plan's open questions.`,
    is_error: false,
  };
}

/**
 * `"question"="answer"` pairs, each side a JSON string so quotes inside stay unambiguous.
 *
 * @example
 * answerPairs({ "Which DB?": "Postgres" }) // ['"Which DB?"="Postgres"']
 */
export function answerPairs(answers: Readonly<Record<string, string>>): string[] {
  return Object.entries(answers).map(
    ([q, a]) => `${JSON.stringify(neutralizeMarkers(q))}=${JSON.stringify(neutralizeMarkers(a))}`,
  );
}

/**
 * Reads the pairs of {@link answerPairs} back out of a tool result.
 *
 * @example
 * parseAnswerPairs('User has answered your questions: "Which DB?"="Postgres".') // { "Which DB?": "Postgres" }
 */
export function parseAnswerPairs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/("(?:[^"\\]|\\.)*")=("(?:[^"\\]|\\.)*")/g)) {
    try {
      out[JSON.parse(m[1]!) as string] = JSON.parse(m[2]!) as string;
    } catch {
      // not a pair we wrote; skip it
    }
  }
  return out;
}
