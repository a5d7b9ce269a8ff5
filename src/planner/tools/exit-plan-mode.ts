import { z } from "zod";
import { MAX_APPROVABLE_PLAN_CHARS } from "../../protocol/index.ts";
import { fail, modelSchema, type Tool, type ToolContext, type ToolOutcome } from "./types.ts";

/**
 * Nothing to pass: the plan is read from the plan file. Extra fields (a `plan` argument some
 * models send out of habit) are accepted and ignored, because the reviewed plan must be the one
 * the user can also see and edit — the file.
 */
export const ExitPlanModeInput = z.object({});

export const NOT_IN_PLAN_MODE =
  "You are not in plan mode. This tool is only for leaving plan mode after writing a plan. If your plan was already approved, continue with the implementation.";

/**
 * Presents the plan file for the user's decision and waits; the session becomes
 * `requires_action` (phase `plan_ready`). Valid only in plan mode. A plan over
 * {@link MAX_APPROVABLE_PLAN_CHARS} characters still opens the review (so the user can ask for
 * a shorter one), but the review side withholds approval.
 *
 * @example
 * await exitPlanModeTool.run({}, ctx) // { kind: "wait", wait: { kind: "plan", input: { plan_path, … } } }
 */
export const exitPlanModeTool: Tool = {
  spec: {
    name: "ExitPlanMode",
    description:
      "Call this in plan mode when your plan is complete and written to the plan file: it shows the plan file to the user, who approves it, asks you to keep planning (with feedback), or sends it to their terminal. It takes no arguments; the plan is read from the plan file. This is the only way to ask for approval. Do not call it for pure research with nothing to implement.",
    input_schema: modelSchema(ExitPlanModeInput),
  },
  async run(input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    if (ctx.mode !== "plan") return fail(NOT_IN_PLAN_MODE);
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return fail("ExitPlanMode takes a JSON object (it has no arguments).");
    }
    const plan = ctx.port.readPlan();
    const chars = plan?.content.length ?? 0;
    return {
      kind: "wait",
      wait: {
        kind: "plan",
        input: {
          plan_path: ctx.planPath,
          plan_revision: plan?.revision ?? 0,
          plan_chars: chars,
          plan_exists: plan !== null,
          approvable: chars <= MAX_APPROVABLE_PLAN_CHARS,
        },
      },
    };
  },
};
