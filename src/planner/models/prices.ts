import type { ModelPrice } from "../../config/prices.ts";
import type { Usage } from "../../protocol/index.ts";

/**
 * What model calls cost. One price per model, in US dollars per million tokens: input, output,
 * and the two prompt-cache rates (reads, and writes of Anthropic's default 5-minute cache;
 * OpenAI and Workers AI charge no write surcharge, so their write price is the input price).
 * Sources, read in December 2026: platform.claude.com/docs/en/about-claude/pricing,
 * developers.openai.com/api/docs/pricing (and openai.com/api/pricing for the GPT-4.1 family,
 * still billed), developers.cloudflare.com/workers-ai/platform/pricing. PLANPORT_PRICES replaces
 * or extends any entry; a model that is in neither costs "unknown" (null), never a guess.
 *
 * Long-context surcharges (over 200 k input tokens on some models) and batch discounts are not
 * modelled: planport's requests stay under the context budget and are never batched.
 */

/** Dollars per million tokens: input, output, cache read, cache write. */
const price = (input: number, output: number, cacheRead: number, cacheWrite: number) =>
  ({ input, output, cache_read: cacheRead, cache_write: cacheWrite }) satisfies ModelPrice;

export const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic (5-minute cache writes 1.25× input, cache reads 0.1× input).
  "claude-opus-4-6": price(5, 25, 0.5, 6.25),
  "claude-opus-4-5": price(5, 25, 0.5, 6.25),
  "claude-opus-4-1": price(15, 75, 1.5, 18.75),
  "claude-opus-4-0": price(15, 75, 1.5, 18.75),
  "claude-opus-4": price(15, 75, 1.5, 18.75),
  "claude-sonnet-4-6": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4-5": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4-0": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4": price(3, 15, 0.3, 3.75),
  "claude-3-7-sonnet": price(3, 15, 0.3, 3.75),
  "claude-haiku-4-5": price(1, 5, 0.1, 1.25),
  "claude-3-5-haiku": price(0.8, 4, 0.08, 1),
  // OpenAI (cached input as listed; no cache-write surcharge).
  "gpt-5": price(1.25, 10, 0.125, 1.25),
  "gpt-5-mini": price(0.25, 2, 0.025, 0.25),
  "gpt-5-nano": price(0.05, 0.4, 0.005, 0.05),
  "gpt-4.1": price(2, 8, 0.5, 2),
  "gpt-4.1-mini": price(0.4, 1.6, 0.1, 0.4),
  "gpt-4.1-nano": price(0.1, 0.4, 0.025, 0.1),
  "gpt-4o": price(2.5, 10, 1.25, 2.5),
  "gpt-4o-mini": price(0.15, 0.6, 0.075, 0.15),
  o3: price(2, 8, 0.5, 2),
  "o4-mini": price(1.1, 4.4, 0.275, 1.1),
  // Workers AI (unit prices; billed in neurons at the same rate).
  "@cf/meta/llama-3.3-70b-instruct-fp8-fast": price(0.293, 2.253, 0.293, 0.293),
  // The planners that call no paid model: the offline planner and scripted replays cost nothing.
  "planport-offline": price(0, 0, 0, 0),
  scripted: price(0, 0, 0, 0),
};

/**
 * A snapshot suffix providers add to a model name: Anthropic's `-20250929`, OpenAI's
 * `-2025-04-14`, or `-latest`. `claude-sonnet-4-5-20250929` is priced as `claude-sonnet-4-5`,
 * but `gpt-4.1-turbo` is not priced as `gpt-4.1`: only a date or `latest` may follow.
 */
const SNAPSHOT_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * The price of `model` from the table (overrides first), or null when unknown.
 *
 * @example
 * priceOf("claude-sonnet-4-5-20250929", {}) // { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
 * priceOf("my-local-model", {}) // null
 */
export function priceOf(
  model: string,
  overrides: Readonly<Record<string, ModelPrice>>,
): ModelPrice | null {
  for (const name of [model, model.replace(SNAPSHOT_SUFFIX, "")]) {
    const found = Object.hasOwn(overrides, name)
      ? overrides[name]
      : Object.hasOwn(BUILT_IN_PRICES, name)
        ? BUILT_IN_PRICES[name]
        : undefined;
    if (found !== undefined) return found;
  }
  return null;
}

/**
 * What one model call cost in dollars. `usage.input_tokens` is the input that was neither read
 * from nor written to the cache (every adapter reports it that way).
 *
 * @example
 * costOf({ input_tokens: 1_000_000, output_tokens: 0 }, price(3, 15, 0.3, 3.75)) // 3
 */
export function costOf(usage: Usage, p: ModelPrice): number {
  const dollars =
    usage.input_tokens * p.input +
    usage.output_tokens * p.output +
    (usage.cache_read_input_tokens ?? 0) * p.cache_read +
    (usage.cache_creation_input_tokens ?? 0) * p.cache_write;
  return dollars / 1_000_000;
}

/**
 * The cost of a call answered by `answered` (the model the provider names) for a planner
 * configured with `configured`, or null when neither has a price.
 *
 * @example
 * callCost({ input_tokens: 10, output_tokens: 2 }, "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", {})
 */
export function callCost(
  usage: Usage,
  answered: string | undefined,
  configured: string | undefined,
  overrides: Readonly<Record<string, ModelPrice>>,
): number | null {
  for (const model of [answered, configured]) {
    if (model === undefined || model === "") continue;
    const p = priceOf(model, overrides);
    if (p !== null) return costOf(usage, p);
  }
  return null;
}
