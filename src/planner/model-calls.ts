import type { ModelPrice } from "../config/prices.ts";
import { cachedConfig } from "../config.ts";
import { contextBudget } from "./models/context-windows.ts";
import { createPlanner } from "./models/index.ts";
import { callCost } from "./models/prices.ts";
import { callPlanner, type RetryPolicy } from "./models/retry.ts";
import { retryPolicyFromEnv } from "./models/retry-config.ts";
import { ModelCallError, type ModelRequest, type ModelTurn, type Planner } from "./models/types.ts";
import type { Step } from "./step-state.ts";

/**
 * Everything a model call of this step needs, read once from the settings: the planner, the
 * retry policy, the price table and the context budget. The session's own calls, its
 * subagents' and the compaction summaries all go through here, so each is retried, timed out,
 * counted and priced the same way.
 */
export interface ModelSetup {
  planner: Planner;
  retry: RetryPolicy;
  prices: Readonly<Record<string, ModelPrice>>;
  /** The session's context budget in tokens; null for planners without a model context. */
  budget: number | null;
}

const setups = new WeakMap<Step, ModelSetup>();

/**
 * The step's model setup (made on first use). A bad setting throws a {@link ModelCallError}
 * naming the var, so the session ends saying what to fix.
 *
 * @example
 * const turn = await askModel(modelSetup(s), request);
 */
export function modelSetup(s: Step): ModelSetup {
  let setup = setups.get(s);
  if (setup !== undefined) return setup;
  const config = cachedConfig(s.env);
  if (!config.ok) throw new ModelCallError(config.error, false);
  const planner = s.options.planner ?? createPlanner(s.port.facts, s.env);
  setup = {
    planner,
    retry: { ...retryPolicyFromEnv(s.env), ...s.options.retry },
    prices: config.value.prices,
    budget: contextBudget(s.port.facts.planner, planner.model, config.value.contextTokens),
  };
  setups.set(s, setup);
  return setup;
}

/** One model call with the step's retry policy. Throws {@link ModelCallError} when it fails for good. */
export function askModel(setup: ModelSetup, request: ModelRequest): Promise<ModelTurn> {
  return callPlanner(setup.planner, request, setup.retry);
}

/**
 * What a call cost, by the model that answered (else the one configured); null when unknown.
 *
 * @example
 * turnCost(setup, turn) // 0.0123
 */
export function turnCost(setup: ModelSetup, turn: ModelTurn): number | null {
  return callCost(turn.usage, turn.model, setup.planner.model, setup.prices);
}

/**
 * A failed call as the sentence a session or a Task result ends with.
 *
 * @example
 * failureSentence(error) // "The anthropic planner failed after 4 attempts: … ."
 */
export function failureSentence(error: unknown): string {
  const message =
    error instanceof ModelCallError ? error.message : `The planner failed: ${String(error)}`;
  // Provider messages do not all end a sentence ("…sent an answer that is not JSON").
  return /[.!?]$/.test(message) ? message : `${message}.`;
}
