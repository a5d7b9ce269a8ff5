import { z } from "zod";
import type { PlannerEnv } from "../port.ts";
import { joinUrl, postJson } from "./http.ts";
import {
  ModelCallError,
  type ModelMessage,
  type ModelRequest,
  type ModelTurn,
  type Planner,
} from "./types.ts";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5";
export const ANTHROPIC_VERSION = "2023-06-01";

const EPHEMERAL = { type: "ephemeral" } as const;

const AnthropicResponse = z.object({
  model: z.string().optional(),
  content: z.array(
    z.looseObject({
      type: z.string(),
      text: z.string().optional(),
      id: z.string().optional(),
      name: z.string().optional(),
      input: z.unknown().optional(),
    }),
  ),
  usage: z
    .object({
      input_tokens: z.number().int().nonnegative().optional(),
      output_tokens: z.number().int().nonnegative().optional(),
      cache_creation_input_tokens: z.number().int().nonnegative().nullish(),
      cache_read_input_tokens: z.number().int().nonnegative().nullish(),
    })
    .optional(),
});

/**
 * The Anthropic Messages API with tool use, over plain `fetch` (no SDK: the Worker stays small
 * and the adapter runs unchanged in Node). The stable prefix — tools and system prompt — is
 * marked with `cache_control`, and so is the newest message, so each step re-reads the whole
 * earlier conversation from the prompt cache.
 *
 * @example
 * const planner = anthropicPlanner({ ANTHROPIC_API_KEY: "sk-…" });
 * const turn = await planner.next(request);
 */
export function anthropicPlanner(env: PlannerEnv): Planner {
  const apiKey = env.ANTHROPIC_API_KEY ?? "";
  const url = joinUrl(env.ANTHROPIC_BASE_URL || ANTHROPIC_DEFAULT_BASE_URL, "/v1/messages");
  const model = env.ANTHROPIC_MODEL || ANTHROPIC_DEFAULT_MODEL;
  const hints = {
    provider: "The Anthropic API",
    auth: "Check ANTHROPIC_API_KEY.",
    notFound: `Check ANTHROPIC_MODEL (${model}) and ANTHROPIC_BASE_URL.`,
  };
  return {
    name: "anthropic",
    canExecuteRemotely: true,
    model,
    async next(request: ModelRequest): Promise<ModelTurn> {
      const body = await postJson(
        url,
        { "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION },
        anthropicRequestBody(model, request),
        request.signal,
        hints,
      );
      return parseAnthropicResponse(body);
    },
  };
}

/**
 * The Messages API request body for a conversation (exported for wire-format tests).
 *
 * @example
 * anthropicRequestBody("claude-sonnet-4-5", request).system // [{ type: "text", …, cache_control }]
 */
export function anthropicRequestBody(
  model: string,
  request: ModelRequest,
): Record<string, unknown> {
  const messages = request.messages.map((m, i) =>
    i === request.messages.length - 1 ? withCacheMark(m) : m,
  );
  return {
    model,
    max_tokens: request.maxOutputTokens,
    // Tools come first in the cache prefix, then the system prompt: one mark on the system
    // block caches both.
    tools: request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.input_schema,
    })),
    system: [{ type: "text", text: request.system, cache_control: EPHEMERAL }],
    // Forbids tool use with the tools still listed: the tools and system prompt are read from
    // the cache as usual (a changed tool_choice only makes the messages uncached).
    ...(request.toolChoice === "none" && { tool_choice: { type: "none" } }),
    messages,
  };
}

function withCacheMark(message: ModelMessage): Record<string, unknown> {
  const content = message.content.map((block, i) =>
    i === message.content.length - 1 ? { ...block, cache_control: EPHEMERAL } : block,
  );
  return { role: message.role, content };
}

/**
 * Maps a Messages API answer to a model turn; thinking and server-tool blocks are dropped.
 *
 * @example
 * parseAnthropicResponse(await response.json()).content
 */
export function parseAnthropicResponse(body: unknown): ModelTurn {
  const parsed = AnthropicResponse.safeParse(body);
  if (!parsed.success) {
    throw new ModelCallError("the Anthropic API sent an answer without a content list", true);
  }
  const content: ModelTurn["content"] = [];
  for (const block of parsed.data.content) {
    if (block.type === "text" && typeof block.text === "string" && block.text !== "") {
      content.push({ type: "text", text: block.text });
    } else if (block.type === "tool_use" && block.id && block.name) {
      const input = isRecord(block.input) ? block.input : {};
      content.push({ type: "tool_use", id: block.id, name: block.name, input });
    }
  }
  const u = parsed.data.usage;
  return {
    content,
    model: parsed.data.model,
    usage: {
      input_tokens: u?.input_tokens ?? 0,
      output_tokens: u?.output_tokens ?? 0,
      ...(u?.cache_creation_input_tokens != null && {
        cache_creation_input_tokens: u.cache_creation_input_tokens,
      }),
      ...(u?.cache_read_input_tokens != null && {
        cache_read_input_tokens: u.cache_read_input_tokens,
      }),
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
