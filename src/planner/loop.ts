import type { PlannerEnv, SessionPort, StepResult } from "./port.ts";

/**
 * One step of the agent loop: one model call and the tool calls it asked for.
 * (Being built under issue 3; until then a session ends with a clear error instead of planning.)
 */
export async function step(port: SessionPort, _env: PlannerEnv): Promise<StepResult> {
  port.endSession(
    "error_during_execution",
    "The planning engine is not available in this build of planport.",
  );
  return { next: "idle" };
}
