import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isCancel, multiselect, select, text } from "@clack/prompts";
import type { Api } from "../http/api.ts";
import {
  answerText,
  EDITOR_TEMPLATE,
  editorFeedback,
  OTHER,
  type ReviewChoice,
  type ReviewScreen,
  type ReviewState,
} from "./screen.ts";

/**
 * The terminal review's prompts and what each choice sends (@clack/prompts; the same API calls
 * as the review page's buttons). review-command.ts draws the screen and runs the loop around
 * them; review/screen.ts decides what is offered.
 */

/** The user backed out of a prompt (Esc, Ctrl-C): nothing was sent. */
export class PromptCancelled extends Error {}

/** The action prompt: a choice, or why it closed without one. */
export async function ask(
  screen: ReviewScreen,
  signal: AbortSignal,
): Promise<ReviewChoice | "answer" | "changed" | "finished" | "cancelled"> {
  if (screen.over) {
    // Nothing to decide: wait for the poll's verdict (or Ctrl-C).
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener("abort", () => resolve());
    });
    return "finished";
  }
  const options: { value: ReviewChoice | "answer"; label: string; hint?: string }[] = [];
  if (screen.question) {
    options.push({ value: "answer", label: "Answer the planner's question" });
  }
  options.push(...screen.choices);
  const picked = await select({
    message: screen.question
      ? "The planner asks a question. What now? (Ctrl-C leaves; the session stays open)"
      : screen.decisionToolUseId
        ? "Your decision (Ctrl-C leaves; the session stays open)"
        : "Waiting for the planner… (Ctrl-C leaves; the session stays open)",
    options,
    signal,
  });
  if (signal.aborted) return "changed";
  if (isCancel(picked)) return "cancelled";
  return picked;
}

/** Carries out one choice; resolves with the line to show above the next screen. */
export async function act(
  api: Api,
  state: ReviewState,
  screen: ReviewScreen,
  choice: ReviewChoice | "answer",
  signal: AbortSignal,
): Promise<string> {
  const id = state.session.id;
  const decide = (decision: "approve" | "reject" | "teleport", feedback?: string) => {
    const toolUseId = screen.decisionToolUseId;
    if (toolUseId === null) throw new Error("the plan is no longer waiting for a decision");
    return api.decide(id, { tool_use_id: toolUseId, decision, ...(feedback ? { feedback } : {}) });
  };
  switch (choice) {
    case "answer":
      return await answer(api, id, screen, signal);
    case "approve":
      await decide("approve");
      return "Approved: the plan runs in the cloud now.";
    case "teleport":
      await decide("teleport");
      return screen.waiter === null
        ? "Approved and sent to terminal: waiting for the plan to arrive…"
        : `Approved and sent to terminal: planport (process ${screen.waiter}) receives it.`;
    case "feedback": {
      const typed = await text({
        message: "What should the planner change?",
        validate: (v) => (v && v.trim() !== "" ? undefined : "Write what should change first."),
        signal,
      });
      if (isCancel(typed)) throw new PromptCancelled();
      await decide("reject", typed.trim());
      return "Sent: the planner keeps planning.";
    }
    case "feedback_editor": {
      const written = writeInEditor();
      if (written === "") return "No feedback written; nothing was sent.";
      await decide("reject", written);
      return "Sent: the planner keeps planning.";
    }
    case "message": {
      const typed = await text({
        message: "Your message to the planner",
        validate: (v) => (v && v.trim() !== "" ? undefined : "Write a message first."),
        signal,
      });
      if (isCancel(typed)) throw new PromptCancelled();
      await api.sendMessage(id, { text: typed.trim() });
      return "Message sent.";
    }
    case "stop": {
      const sure = await select({
        message: "Stop (archive) this session? The planner stops and nothing more can be decided.",
        options: [
          { value: "no", label: "No, keep it" },
          { value: "yes", label: "Yes, stop it" },
        ],
        signal,
      });
      if (isCancel(sure) || sure !== "yes") throw new PromptCancelled();
      await api.archive(id);
      return "Session stopped.";
    }
  }
}

async function answer(
  api: Api,
  id: string,
  screen: ReviewScreen,
  signal: AbortSignal,
): Promise<string> {
  const question = screen.question;
  if (!question) return "The question was answered or withdrawn meanwhile.";
  const answers: Record<string, string> = {};
  for (const q of question.prompts) {
    const picked = q.multiSelect
      ? await multiselect({ message: q.text, options: q.options, required: true, signal })
      : await select({ message: q.text, options: q.options, signal });
    if (isCancel(picked)) throw new PromptCancelled();
    const values = Array.isArray(picked) ? picked : [picked];
    let other: string | undefined;
    if (values.includes(OTHER)) {
      const typed = await text({
        message: "Your answer",
        validate: (v) => (v && v.trim() !== "" ? undefined : "Write your answer first."),
        signal,
      });
      if (isCancel(typed)) throw new PromptCancelled();
      other = typed;
    }
    const value = answerText(values, other);
    if (value === null) throw new PromptCancelled();
    answers[q.key] = value;
  }
  await api.sendMessage(id, { tool_use_id: question.toolUseId, answers });
  return "Answers sent: the planner continues.";
}

/**
 * Opens `$VISUAL` / `$EDITOR` (else vi) on a feedback file, as git does with the commit message
 * (the editor setting may carry arguments, so it goes through `sh -c`; the file is `$1`).
 */
function writeInEditor(): string {
  const editor = process.env.VISUAL || process.env.EDITOR || "vi";
  const dir = mkdtempSync(join(tmpdir(), "planport-feedback-"));
  const file = join(dir, "FEEDBACK.md");
  try {
    writeFileSync(file, EDITOR_TEMPLATE);
    const run = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
    if (run.status !== 0)
      throw new Error(`the editor (${editor}) exited with ${run.status ?? run.signal}`);
    return editorFeedback(readFileSync(file, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
