import type { PlannerEnv, SessionFacts } from "../port.ts";
import { anthropicPlanner } from "./anthropic.ts";
import { offlinePlanner } from "./offline/index.ts";
import { openaiPlanner } from "./openai.ts";
import { scriptedPlanner } from "./scripted.ts";
import type { Planner } from "./types.ts";
import { workersAiPlanner } from "./workers-ai.ts";

/** The planner a session named (the session resolved `auto` when it was created). */
export function createPlanner(facts: SessionFacts, env: PlannerEnv): Planner {
  switch (facts.planner) {
    case "anthropic":
      return anthropicPlanner(env);
    case "openai":
      return openaiPlanner(env);
    case "workers-ai":
      return workersAiPlanner(env);
    case "scripted":
      return scriptedPlanner(facts.script ?? []);
    case "offline":
      return offlinePlanner();
  }
}

export type { ModelMessage, ModelRequest, ModelTurn, Planner } from "./types.ts";
export { ModelCallError } from "./types.ts";
