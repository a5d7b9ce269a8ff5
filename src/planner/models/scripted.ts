import type { ScriptedTurn } from "../../protocol/index.ts";
import { sleep } from "./retry.ts";
import type { ModelRequest, ModelTurn, Planner } from "./types.ts";

/**
 * Written anywhere in a scripted tool input, stands for this session's plan file path (a
 * script is written before the session exists, so it cannot know the slug).
 */
export const PLAN_PATH_PLACEHOLDER = "$PLAN_PATH";

/** What the scripted planner says when its script has run out: a plain reply that ends the turn. */
export const SCRIPT_EXHAUSTED_TEXT =
  "The scripted planner has no more turns in its script, so it ends the turn here.";

/**
 * Replays a fixed list of model turns (tests; replays of recorded sessions). Which turn comes
 * next is the number of assistant messages already in the conversation, so a step that
 * crashed before its reply was stored replays the same turn — never the next one. Tool calls
 * without an id get a stable one (`toolu_scripted_<turn>_<block>`). When the script has run
 * out, the planner replies with plain text (no tool calls): the turn ends and the session
 * waits for the user instead of looping. `delay_ms` simulates model latency.
 * {@link PLAN_PATH_PLACEHOLDER} in any string of a tool input becomes the plan file path.
 *
 * @example
 * const planner = scriptedPlanner([{ content: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] }]);
 */
export function scriptedPlanner(script: readonly ScriptedTurn[]): Planner {
  return {
    name: "scripted",
    canExecuteRemotely: true,
    model: "scripted",
    async next(request: ModelRequest): Promise<ModelTurn> {
      const index = request.messages.filter((m) => m.role === "assistant").length;
      const turn = script[index];
      if (turn === undefined) {
        return {
          content: [{ type: "text", text: SCRIPT_EXHAUSTED_TEXT }],
          usage: { input_tokens: 0, output_tokens: 0 },
          model: "scripted",
        };
      }
      if (turn.delay_ms) await sleep(turn.delay_ms);
      request.signal?.throwIfAborted();
      return {
        content: turn.content.map((block, i) =>
          block.type === "text"
            ? block
            : {
                type: "tool_use",
                id: block.id ?? `toolu_scripted_${index}_${i}`,
                name: block.name,
                input: withPlanPath(block.input, request.context.planPath) as Record<
                  string,
                  unknown
                >,
              },
        ),
        usage: turn.usage ?? { input_tokens: 0, output_tokens: 0 },
        model: "scripted",
      };
    },
  };
}

/** Replaces {@link PLAN_PATH_PLACEHOLDER} in every string of a JSON value. */
function withPlanPath(value: unknown, planPath: string): unknown {
  if (typeof value === "string") return value.split(PLAN_PATH_PLACEHOLDER).join(planPath);
  if (Array.isArray(value)) return value.map((v) => withPlanPath(v, planPath));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, withPlanPath(v, planPath)]),
    );
  }
  return value;
}
