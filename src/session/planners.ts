import type { PlannerName, ResolvedPlanner, Variant } from "../protocol/index.ts";
import { fail, ok, type Refusal } from "../protocol/index.ts";
import type { SessionResult } from "./result.ts";

/**
 * Which planner a new session gets (docs/PROTOCOL.md "Worker configuration"; DESIGN.md "Planners").
 * Pure: reads only the configuration it is handed.
 */

/** What the choice depends on: the parsed settings (src/config.ts) and which providers exist. */
export interface PlannerConfig {
  /** PLANPORT_PLANNER, already validated. */
  configured: PlannerName;
  allowScripted: boolean;
  ANTHROPIC_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  AI?: unknown;
}

/**
 * Resolves the requested planner (or the server default) to one that can run here.
 * `auto` picks anthropic if its key is set, else openai if its base URL is set, else
 * workers-ai if the binding exists, else offline.
 *
 * @example resolvePlanner(undefined, { configured: "auto", allowScripted: false }) // { ok: true, value: "offline" }
 */
export function resolvePlanner(
  requested: PlannerName | undefined,
  config: PlannerConfig,
): SessionResult<ResolvedPlanner> {
  const name = requested ?? config.configured;
  switch (name) {
    case "auto":
      if (config.ANTHROPIC_API_KEY) return ok("anthropic");
      if (config.OPENAI_BASE_URL) return ok("openai");
      if (config.AI) return ok("workers-ai");
      return ok("offline");
    case "offline":
      return ok("offline");
    case "anthropic":
      return config.ANTHROPIC_API_KEY
        ? ok("anthropic")
        : unavailable("anthropic", "set ANTHROPIC_API_KEY on the server");
    case "openai":
      return config.OPENAI_BASE_URL
        ? ok("openai")
        : unavailable("openai", "set OPENAI_BASE_URL on the server");
    case "workers-ai":
      return config.AI
        ? ok("workers-ai")
        : unavailable("workers-ai", "deploy the worker with an AI binding");
    case "scripted":
      return config.allowScripted
        ? ok("scripted")
        : unavailable("scripted", "it is only enabled where PLANPORT_ALLOW_SCRIPTED=true (tests)");
  }
}

function unavailable(name: string, how: string): Refusal {
  return fail(
    400,
    "planner_unavailable",
    `The ${name} planner is not available on this server: ${how}, or choose another planner.`,
  );
}

/**
 * Whether an approved plan can be carried out in the cloud. The offline planner has no model,
 * so it cannot write code; it only plans (teleport or keep planning).
 */
export function canExecuteRemotely(planner: ResolvedPlanner): boolean {
  return planner !== "offline";
}

/**
 * Whether a planner can run a workflow. `deep` needs a model behind the planner (its subagents
 * are conversations of their own): the offline planner has none, and a scripted replay is one
 * conversation. Every planner runs `simple` and `visual`.
 *
 * @example
 * checkVariant("offline", "deep").ok // false: 400 variant_unavailable
 */
export function checkVariant(planner: ResolvedPlanner, variant: Variant): SessionResult<Variant> {
  if (variant !== "deep" || DEEP_PLANNERS.includes(planner)) return ok(variant);
  const why =
    planner === "offline"
      ? "the offline planner has no model to run the parallel explorer and critique subagents"
      : "a scripted replay is a single conversation";
  return fail(
    400,
    "variant_unavailable",
    `The ${planner} planner cannot run the deep variant: ${why}. Choose the simple or visual variant, or a model planner (anthropic, openai or workers-ai).`,
  );
}

const DEEP_PLANNERS: readonly ResolvedPlanner[] = ["anthropic", "openai", "workers-ai"];
