import type { ResolvedPlanner } from "../../protocol/index.ts";

/**
 * How many tokens one conversation may hold (input and output of a request together) before
 * it must be compacted: PLANPORT_CONTEXT_TOKENS when set, else the model's context window.
 * Windows as the providers document them (December 2026); an OpenAI-compatible model planport
 * does not know gets a conservative 32 k — local servers (vLLM, Ollama, llama.cpp) often run
 * with less than the model's maximum — so such a session compacts early rather than meets a
 * 400; set PLANPORT_CONTEXT_TOKENS to the server's real limit. The offline and scripted
 * planners hold no model context: their conversations are never compacted.
 */

/** Claude models: 200 k tokens (the 1 M beta needs a header planport does not send). */
export const ANTHROPIC_CONTEXT_TOKENS = 200_000;
/** An OpenAI-compatible model of unknown size. */
export const UNKNOWN_OPENAI_CONTEXT_TOKENS = 32_768;
/** `@cf/meta/llama-3.3-70b-instruct-fp8-fast` on Workers AI (its model page). */
export const WORKERS_AI_CONTEXT_TOKENS = 24_000;

/** Known OpenAI model families, longest prefix first. */
const OPENAI_WINDOWS: readonly (readonly [prefix: string, tokens: number])[] = [
  ["gpt-4.1", 1_047_576],
  ["gpt-5", 400_000],
  ["gpt-4o", 128_000],
  ["o4-mini", 200_000],
  ["o3", 200_000],
];

/**
 * The context budget of a planner's conversations, or null when it has no model context.
 *
 * @example
 * contextBudget("openai", "gpt-4.1-mini", null) // 1_047_576
 * contextBudget("anthropic", "claude-sonnet-4-5", 8_000) // 8_000 (PLANPORT_CONTEXT_TOKENS)
 * contextBudget("offline", "planport-offline", 8_000) // null
 */
export function contextBudget(
  planner: ResolvedPlanner,
  model: string | undefined,
  configured: number | null,
): number | null {
  if (planner === "offline" || planner === "scripted") return null;
  if (configured !== null) return configured;
  switch (planner) {
    case "anthropic":
      return ANTHROPIC_CONTEXT_TOKENS;
    case "workers-ai":
      return WORKERS_AI_CONTEXT_TOKENS;
    case "openai": {
      const known = OPENAI_WINDOWS.find(([prefix]) => model?.startsWith(prefix));
      return known?.[1] ?? UNKNOWN_OPENAI_CONTEXT_TOKENS;
    }
  }
}
