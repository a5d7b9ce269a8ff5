import { z } from "zod";
import { toolResultText } from "../../protocol/index.ts";
import type { PlannerEnv } from "../port.ts";
import { joinUrl, postJson } from "./http.ts";
import { ModelCallError, type ModelRequest, type ModelTurn, type Planner } from "./types.ts";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const OPENAI_DEFAULT_MODEL = "gpt-4.1";

const ChatResponse = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().optional(),
                function: z.object({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().int().nonnegative().optional(),
      completion_tokens: z.number().int().nonnegative().optional(),
      prompt_tokens_details: z
        .object({ cached_tokens: z.number().int().nonnegative().optional() })
        .nullish(),
    })
    .nullish(),
});

/**
 * Any OpenAI-compatible Chat Completions endpoint with tool calls (OpenAI, vLLM, Ollama,
 * llama.cpp server, gateways). The API key is optional: local servers often need none.
 *
 * @example
 * const planner = openaiPlanner({ OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", OPENAI_MODEL: "qwen2.5-coder" });
 */
export function openaiPlanner(env: PlannerEnv): Planner {
  const url = joinUrl(env.OPENAI_BASE_URL || OPENAI_DEFAULT_BASE_URL, "/chat/completions");
  const model = env.OPENAI_MODEL || OPENAI_DEFAULT_MODEL;
  const headers: Record<string, string> = env.OPENAI_API_KEY
    ? { authorization: `Bearer ${env.OPENAI_API_KEY}` }
    : {};
  const hints = {
    provider: "The OpenAI-compatible endpoint",
    auth: "Check OPENAI_API_KEY.",
    notFound: `Check OPENAI_BASE_URL (it usually ends in /v1) and OPENAI_MODEL (${model}).`,
  };
  return {
    name: "openai",
    canExecuteRemotely: true,
    model,
    async next(request: ModelRequest): Promise<ModelTurn> {
      const body = await postJson(
        url,
        headers,
        openaiRequestBody(model, request),
        request.signal,
        hints,
      );
      return parseOpenaiResponse(body, request.messages.length);
    },
  };
}

/**
 * The Chat Completions request for a conversation: tool results become `tool` messages.
 *
 * @example
 * openaiRequestBody("gpt-4.1", request).messages[0] // { role: "system", … }
 */
export function openaiRequestBody(model: string, request: ModelRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: "system", content: request.system }];
  for (const m of request.messages) {
    if (m.role === "assistant") {
      const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
      const calls = m.content.flatMap((b) =>
        b.type === "tool_use"
          ? [
              {
                id: b.id,
                type: "function",
                function: { name: b.name, arguments: JSON.stringify(b.input) },
              },
            ]
          : [],
      );
      messages.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(calls.length > 0 && { tool_calls: calls }),
      });
      continue;
    }
    const texts: string[] = [];
    for (const block of m.content) {
      if (block.type === "tool_result") {
        const text = toolResultText(block.content);
        messages.push({
          role: "tool",
          tool_call_id: block.tool_use_id,
          content: block.is_error ? `Error: ${text}` : text,
        });
      } else texts.push(block.text);
    }
    if (texts.length > 0) messages.push({ role: "user", content: texts.join("\n\n") });
  }
  return {
    model,
    messages,
    tools: request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    })),
    // The tools stay listed (the same prompt prefix as every other request of the session).
    ...(request.toolChoice === "none" && { tool_choice: "none" }),
  };
}

/**
 * Maps a Chat Completions answer to a model turn; calls without an id get a stable one.
 * `prompt_tokens` includes the cached tokens; the turn's `input_tokens` is the uncached part
 * (as Anthropic reports it), so usage and cost mean the same on every provider.
 */
export function parseOpenaiResponse(body: unknown, turnIndex: number): ModelTurn {
  const parsed = ChatResponse.safeParse(body);
  if (!parsed.success)
    throw new ModelCallError("the endpoint sent an answer without choices", true);
  const message = parsed.data.choices[0]!.message;
  const content: ModelTurn["content"] = [];
  if (message.content) content.push({ type: "text", text: message.content });
  (message.tool_calls ?? []).forEach((call, i) => {
    content.push({
      type: "tool_use",
      id: call.id || `call_${turnIndex}_${i}`,
      name: call.function.name,
      input: parseArguments(call.function.arguments ?? ""),
    });
  });
  const u = parsed.data.usage;
  const cached = u?.prompt_tokens_details?.cached_tokens;
  return {
    content,
    model: parsed.data.model,
    usage: {
      input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - (cached ?? 0)),
      output_tokens: u?.completion_tokens ?? 0,
      ...(cached !== undefined && { cache_read_input_tokens: cached }),
    },
  };
}

/**
 * Tool arguments arrive as a JSON string (or an object from some servers). Unparseable
 * arguments are kept under `_unparsed_arguments`, which every tool's strict input check
 * refuses with a message the model can act on.
 *
 * @example
 * parseArguments('{"path":"src"}') // { path: "src" }
 */
export function parseArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw))
    return raw as Record<string, unknown>;
  if (typeof raw !== "string" || raw.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _unparsed_arguments: raw.slice(0, 2_000) };
}
