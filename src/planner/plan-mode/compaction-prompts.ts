import { wrapReminder } from "./prompts.ts";

/**
 * What the model is told when a conversation is compacted: the instruction that asks for the
 * summary (appended to the conversation as it stands, so the provider reads it from its
 * cache), and the words the continued conversation opens with.
 */

/** The last block of the summary request. */
export const COMPACT_INSTRUCTION =
  wrapReminder(`The conversation has grown too long for the context budget and is being compacted. Do not call any tools. Write a summary that lets the work continue without the earlier messages:
1. The request — the user's, or the task the planning agent gave you — and every requirement, answer and piece of feedback given since (quote feedback exactly).
2. What was found: the files, functions and line references that matter, and the facts established.
3. Decisions made and why; approaches ruled out.
4. The reports of subagents, if any (their key findings).
5. The state of the work: what is done (whether the plan file was written), and what to do next.
Write only the summary.`);

/**
 * The opening of a continued conversation, before the plan-mode reminder: the request as it
 * was written (never left to a summary), then the summary.
 *
 * @example
 * continuationText("Add OAuth login", "Read src/auth; …") // "This conversation continues an earlier one …"
 */
export function continuationText(request: string, summary: string): string {
  return `This conversation continues an earlier one that was compacted because it reached the context budget. The request is repeated exactly; the summary stands for everything else said before this point; the plan file, when it exists, is shown exactly.\n\n## The request\n${request.trim()}\n\n## Summary of the earlier conversation\n${summary.trim()}`;
}

/**
 * The plan file as it stood at compaction, for the continued conversation.
 *
 * @example
 * planFileText("/plans/bold-eagle.md", 3, "# Plan") // "<system-reminder>\nThe plan file /plans/bold-eagle.md (revision 3) …"
 */
export function planFileText(planPath: string, revision: number, content: string): string {
  return wrapReminder(
    `The plan file ${planPath} (revision ${revision}) as it stood when the conversation was compacted:\n\n${content}`,
  );
}

/** The last words of the opening: go on, do not start over. */
export const CONTINUE_NOTE =
  "Continue the work from where it stopped, without asking the user to repeat anything.";
