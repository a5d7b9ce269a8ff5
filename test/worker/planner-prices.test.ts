import { describe, expect, it } from "vitest";
import {
  ANTHROPIC_CONTEXT_TOKENS,
  contextBudget,
  UNKNOWN_OPENAI_CONTEXT_TOKENS,
  WORKERS_AI_CONTEXT_TOKENS,
} from "../../src/planner/models/context-windows.ts";
import { BUILT_IN_PRICES, callCost, costOf, priceOf } from "../../src/planner/models/prices.ts";

/** The price table and the context budgets per model: pure lookups. */

describe("the price table", () => {
  it("prices the default models of every planner, and a dated snapshot as its model", () => {
    expect(priceOf("claude-sonnet-4-5", {})).toEqual({
      input: 3,
      output: 15,
      cache_read: 0.3,
      cache_write: 3.75,
    });
    expect(priceOf("claude-sonnet-4-5-20250929", {})).toEqual(priceOf("claude-sonnet-4-5", {}));
    expect(priceOf("gpt-4.1-2025-04-14", {})).toEqual(BUILT_IN_PRICES["gpt-4.1"]);
    expect(priceOf("gpt-4.1-mini", {})).toEqual(BUILT_IN_PRICES["gpt-4.1-mini"]);
    expect(priceOf("@cf/meta/llama-3.3-70b-instruct-fp8-fast", {})?.output).toBe(2.253);
    expect(priceOf("planport-offline", {})).toEqual({
      input: 0,
      output: 0,
      cache_read: 0,
      cache_write: 0,
    });
  });

  it("knows nothing it was not told: an unknown model, or a name that only starts like one", () => {
    expect(priceOf("qwen2.5-coder:32b", {})).toBeNull();
    expect(priceOf("gpt-4.1-turbo", {})).toBeNull();
    expect(priceOf("claude-test", {})).toBeNull();
  });

  it("lets PLANPORT_PRICES replace or add an entry", () => {
    const mine = { input: 1, output: 2, cache_read: 0.5, cache_write: 1 };
    expect(priceOf("claude-test", { "claude-test": mine })).toEqual(mine);
    expect(priceOf("gpt-4.1", { "gpt-4.1": mine })).toEqual(mine);
  });

  it("costs every kind of token at its own rate, per million", () => {
    const usage = {
      input_tokens: 1_000_000,
      output_tokens: 100_000,
      cache_read_input_tokens: 2_000_000,
      cache_creation_input_tokens: 400_000,
    };
    // 3 + 1.5 + 0.6 + 1.5
    expect(costOf(usage, BUILT_IN_PRICES["claude-sonnet-4-5"]!)).toBeCloseTo(6.6, 10);
  });

  it("prices a call by the model that answered, else the one configured, else not at all", () => {
    const usage = { input_tokens: 1_000_000, output_tokens: 0 };
    expect(callCost(usage, "claude-haiku-4-5-20251001", "claude-sonnet-4-5", {})).toBe(1);
    expect(callCost(usage, "some-gateway-alias", "claude-sonnet-4-5", {})).toBe(3);
    expect(callCost(usage, "some-gateway-alias", "another-alias", {})).toBeNull();
  });
});

describe("the context budget", () => {
  it("is each model's window by default, PLANPORT_CONTEXT_TOKENS when set, none without a model", () => {
    expect(contextBudget("anthropic", "claude-sonnet-4-5", null)).toBe(ANTHROPIC_CONTEXT_TOKENS);
    expect(contextBudget("openai", "gpt-4.1-mini", null)).toBe(1_047_576);
    expect(contextBudget("openai", "gpt-4o-2024-08-06", null)).toBe(128_000);
    expect(contextBudget("openai", "qwen2.5-coder", null)).toBe(UNKNOWN_OPENAI_CONTEXT_TOKENS);
    expect(contextBudget("workers-ai", undefined, null)).toBe(WORKERS_AI_CONTEXT_TOKENS);
    expect(contextBudget("anthropic", "claude-sonnet-4-5", 50_000)).toBe(50_000);
    expect(contextBudget("offline", "planport-offline", 50_000)).toBeNull();
    expect(contextBudget("scripted", "scripted", 50_000)).toBeNull();
  });
});
