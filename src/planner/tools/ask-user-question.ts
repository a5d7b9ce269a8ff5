import { z } from "zod";
import { err, ok as okResult, type Result } from "../../protocol/index.ts";
import {
  describeInvalidInput,
  fail,
  modelSchema,
  type Tool,
  type ToolContext,
  type ToolOutcome,
} from "./types.ts";

/** The UI shows headers as chips; longer ones do not fit. */
export const MAX_HEADER_CHARS = 12;
export const MAX_QUESTIONS = 4;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;

const Option = z.strictObject({
  label: z.string().trim().min(1).max(100).describe("The choice as the user sees it (1–5 words)."),
  description: z.string().max(500).optional().describe("What choosing it means for the plan."),
});

const Question = z.strictObject({
  question: z
    .string()
    .trim()
    .min(1)
    .max(1_000)
    .describe("The complete question, ending with a question mark."),
  header: z
    .string()
    .trim()
    .min(1)
    .max(MAX_HEADER_CHARS)
    .describe(`A very short label (at most ${MAX_HEADER_CHARS} characters), e.g. "Auth method".`),
  options: z
    .array(Option)
    .min(MIN_OPTIONS)
    .max(MAX_OPTIONS)
    .describe(
      `${MIN_OPTIONS}–${MAX_OPTIONS} distinct choices. Do not add "Other": the user can always answer in their own words.`,
    ),
  multiSelect: z
    .boolean()
    .optional()
    .describe("Let the user pick several options (default false)."),
});

/** What the model is shown: the strict shape. */
export const AskUserQuestionInput = z.strictObject({
  questions: z
    .array(Question)
    .min(1)
    .max(MAX_QUESTIONS)
    .describe(`1–${MAX_QUESTIONS} questions, each with a unique text.`),
});
export type AskUserQuestionInput = z.infer<typeof AskUserQuestionInput>;

/**
 * Parsed leniently first (any number of options, any header length) so each rule can answer
 * with its own explanation; a question with a single option in particular must never reach
 * the user, and the model must hear why.
 */
const LenientInput = z.strictObject({
  questions: z.array(
    z.strictObject({
      question: z.string(),
      header: z.string(),
      options: z.array(Option),
      multiSelect: z.boolean().optional(),
    }),
  ),
});

/**
 * Asks the user 1–4 clarifying questions (requirements, never approval) and waits for the
 * answers; the session becomes `requires_action` (phase `needs_input`).
 *
 * @example
 * await askUserQuestionTool.run({ questions: [{ question: "Which provider?", header: "Provider",
 *   options: [{ label: "GitHub" }, { label: "Google" }] }] }, ctx) // { kind: "wait", … }
 */
export const askUserQuestionTool: Tool = {
  spec: {
    name: "AskUserQuestion",
    description: `Asks the user clarifying questions about requirements and waits for the answers. 1–${MAX_QUESTIONS} questions, each with ${MIN_OPTIONS}–${MAX_OPTIONS} distinct options and a header of at most ${MAX_HEADER_CHARS} characters; question texts must be unique, and option labels unique within a question. The user can always answer in their own words, so never add an "Other" option. Use it to resolve ambiguity that changes the plan — never to ask whether the plan is OK (that is what ExitPlanMode is for).`,
    input_schema: modelSchema(AskUserQuestionInput),
  },
  async run(input: unknown, _ctx: ToolContext): Promise<ToolOutcome> {
    const checked = checkQuestions(input);
    if (!checked.ok) return fail(checked.error);
    return { kind: "wait", wait: { kind: "question", input: checked.value } };
  },
};

/**
 * Validates AskUserQuestion input with one explanation per rule.
 *
 * @example
 * checkQuestions({ questions: [{ question: "Which DB?", header: "DB", options: [{ label: "Postgres" }] }] })
 * // err("…the user never saw…")
 */
export function checkQuestions(input: unknown): Result<AskUserQuestionInput, string> {
  const lenient = LenientInput.safeParse(input);
  if (!lenient.success) return err(describeInvalidInput("AskUserQuestion", lenient.error));
  const { questions } = lenient.data;
  if (questions.length < 1 || questions.length > MAX_QUESTIONS) {
    return err(
      `Ask between 1 and ${MAX_QUESTIONS} questions at a time (you sent ${questions.length}).`,
    );
  }

  const single = questions.filter((q) => q.options.length < MIN_OPTIONS);
  if (single.length > 0) {
    const list = single.map((q) => `"${q.question.trim()}"`).join(", ");
    return err(
      `The user never saw your question(s): ${list} had fewer than ${MIN_OPTIONS} options, and a single option is not a decision. Do not invent a filler option. State the single approach you will take (in the plan and in your reply) and carry on; ask any other question again on its own if you still need it.`,
    );
  }

  const problems: string[] = [];
  const seenQuestions = new Set<string>();
  for (const q of questions) {
    const text = q.question.trim();
    if (seenQuestions.has(text))
      problems.push(`The question "${text}" is asked twice; question texts must be unique.`);
    seenQuestions.add(text);
    if (q.options.length > MAX_OPTIONS) {
      problems.push(
        `"${text}" has ${q.options.length} options; offer at most ${MAX_OPTIONS} (split it into two questions if needed).`,
      );
    }
    const header = q.header.trim();
    if (header.length === 0 || header.length > MAX_HEADER_CHARS) {
      problems.push(
        `The header "${q.header}" of "${text}" must be 1–${MAX_HEADER_CHARS} characters long.`,
      );
    }
    const labels = new Set<string>();
    for (const o of q.options) {
      const label = o.label.trim();
      if (labels.has(label.toLowerCase()))
        problems.push(`"${text}" offers the option "${label}" twice; labels must be unique.`);
      labels.add(label.toLowerCase());
      if (/^other\b/i.test(label)) {
        problems.push(
          `Remove the option "${label}" from "${text}": the user can always answer in their own words, so an "Other" option is added by the interface, not by you.`,
        );
      }
    }
  }
  if (problems.length > 0) {
    return err(
      `The questions were not shown to the user:\n${problems.map((p) => `- ${p}`).join("\n")}`,
    );
  }

  const strict = AskUserQuestionInput.safeParse(input);
  if (!strict.success) return err(describeInvalidInput("AskUserQuestion", strict.error));
  return okResult(strict.data);
}
