import { z } from "zod";
import { MAX_QUESTIONS } from "./limits.ts";

/**
 * A clarifying question as reviewers see it — on the review page and in `planport review` —
 * read leniently from an AskUserQuestion call's input (the planner's own check is stricter:
 * src/planner/tools/ask-user-question.ts). A question that does not parse is not shown.
 */

/** AskUserQuestion's input as a reviewer is shown it. */
export const QuestionInputSchema = z.object({
  questions: z
    .array(
      z.object({
        question: z.string().min(1).max(2_000),
        header: z.string().max(100).optional(),
        multiSelect: z.boolean().optional(),
        options: z
          .array(
            z.object({
              label: z.string().min(1).max(1_000),
              description: z.string().max(5_000).optional(),
            }),
          )
          .min(1)
          .max(10),
      }),
    )
    .min(1)
    .max(MAX_QUESTIONS),
});
export type QuestionInput = z.infer<typeof QuestionInputSchema>;
