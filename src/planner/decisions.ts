import {
  type AnsweredBy,
  approvedPlanResult,
  type Comment,
  type Event,
  type NewEvent,
  neutralizeMarkers,
  type PlanDecisionRecord,
  type ToolResultBlock,
  teleportResult,
} from "../protocol/index.ts";
import type { UserInput } from "./models/types.ts";

/**
 * The events that answer a pending ExitPlanMode or AskUserQuestion: the prose the model reads
 * (and the markers a compatible poller scans) together with the same answer as data. Pure: the
 * session Durable Object appends exactly the event these return, in the transaction that
 * records the decision or closes the question, so the two can never be seen apart. Nothing of
 * ours parses the prose back.
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

/**
 * The `user` event that answers an ExitPlanMode: the tool result, and the verdict as data.
 *
 * @example
 * decisionEvent("toolu_1", { kind: "teleport", plan: "# Plan" }).decision // { tool_use_id: "toolu_1", kind: "teleport" }
 */
export function decisionEvent(toolUseId: string, d: PlanDecision): NewEvent {
  return {
    type: "user",
    message: { role: "user", content: [planDecisionResult(toolUseId, d)] },
    decision: { tool_use_id: toolUseId, kind: d.kind },
  };
}

const FEEDBACK_HEADING = "Feedback from the user:";
const COMMENTS_HEADING = "Comments on passages of the plan:";

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
 * The `user` event that answers an AskUserQuestion: the tool result — the user's answers, or
 * the AFK timeout's note with what was saved before it — and the answers as data.
 *
 * @example
 * answersEvent("toolu_q", { "Which DB?": "Postgres" }, "user").answers?.by // "user"
 */
export function answersEvent(
  toolUseId: string,
  answers: Readonly<Record<string, string>>,
  by: AnsweredBy,
): NewEvent {
  const block =
    by === "user" ? answersResult(toolUseId, answers) : afkAnswersResult(toolUseId, answers);
  return {
    type: "user",
    message: { role: "user", content: [block] },
    answers: { tool_use_id: toolUseId, answers: { ...answers }, by },
  };
}

/** The tool result of an answered AskUserQuestion (all questions answered by the user). */
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

const AFK_LEAD = "The user did not answer in time and may be away; use your best judgment.";

/** The tool result when the AFK timeout answers for an absent user, with any partial answers. */
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
 * The user's answers to tool calls as data, by tool_use_id, from the `answers` fields of the
 * log and the session's decision records. Texts are as the tool results give them to the
 * model (markers made inert, comments trimmed), so a planner that reads this instead of the
 * prose (the offline planner) learns exactly what a model would.
 *
 * @example
 * userInputs(state.events, state.decisions).get("toolu_q") // { kind: "answers", answers: { … }, by: "user" }
 */
export function userInputs(
  events: readonly Event[],
  decisions: readonly PlanDecisionRecord[],
): Map<string, UserInput> {
  const inputs = new Map<string, UserInput>();
  for (const event of events) {
    if (event.type !== "user" || event.answers === undefined) continue;
    const { tool_use_id, answers, by } = event.answers;
    const inert = Object.entries(answers).map(([q, a]) => [
      neutralizeMarkers(q),
      neutralizeMarkers(a),
    ]);
    inputs.set(tool_use_id, { kind: "answers", answers: Object.fromEntries(inert), by });
  }
  for (const d of decisions) {
    inputs.set(d.tool_use_id, {
      kind: "decision",
      decision: d.kind,
      feedback: neutralizeMarkers((d.feedback ?? "").trim()),
      comments: d.comments.map((c) => ({
        quote: neutralizeMarkers(c.quote).trim(),
        text: neutralizeMarkers(c.text.trim()),
      })),
    });
  }
  return inputs;
}
