import { z } from "zod";
import { toolResultText } from "../../protocol/index.ts";
import type { PlannerEnv } from "../port.ts";
import { parseArguments } from "./openai.ts";
import { ModelCallError, type ModelRequest, type ModelTurn, type Planner } from "./types.ts";

/** A Workers AI model with function calling. */
export const WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
/** Workers AI defaults to a few hundred output tokens; a plan needs more. */
const WORKERS_AI_MAX_TOKENS = 4_096;

const WorkersAiResponse = z.object({
  response: z.string().nullish(),
  tool_calls: z.array(z.object({ name: z.string(), arguments: z.unknown().optional() })).nullish(),
  usage: z
    .object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() })
    .nullish(),
});

/** The slice of the `AI` binding this planner uses (so tests can pass a double). */
export interface AiRunner {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

/**
 * The Workers AI binding with "traditional" function calling: tools as OpenAI-style function
 * specs; the model answers with `tool_calls` (name + arguments, no ids — the engine assigns
 * them). Earlier calls and results are replayed as the binding's examples do it: the call as
 * an assistant message holding its JSON, the result as a `tool` message.
 */
export function workersAiPlanner(env: PlannerEnv): Planner {
  const ai = env.AI as unknown as AiRunner | undefined;
  return {
    name: "workers-ai",
    canExecuteRemotely: true,
    model: WORKERS_AI_MODEL,
    async next(request: ModelRequest): Promise<ModelTurn> {
      if (!ai) throw new ModelCallError("this deployment has no Workers AI binding (AI)", false);
      let answer: unknown;
      try {
        answer = await ai.run(WORKERS_AI_MODEL, workersAiInputs(request));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new ModelCallError(`Workers AI failed: ${message}`, isTransientAiError(message));
      }
      return parseWorkersAiResponse(answer, request.messages.length);
    },
  };
}

/**
 * The binding's inputs for a conversation: function tools (none when the reply must be text),
 * calls replayed as JSON, results as `tool` messages.
 *
 * @example
 * await env.AI.run(WORKERS_AI_MODEL, workersAiInputs(request));
 */
export function workersAiInputs(request: ModelRequest): Record<string, unknown> {
  const messages: { role: string; content: string; name?: string }[] = [
    { role: "system", content: request.system },
  ];
  const names = new Map<string, string>();
  for (const m of request.messages) {
    if (m.role === "assistant") {
      for (const block of m.content) {
        if (block.type === "text") messages.push({ role: "assistant", content: block.text });
        else {
          names.set(block.id, block.name);
          messages.push({
            role: "assistant",
            content: JSON.stringify({ name: block.name, arguments: block.input }),
          });
        }
      }
      continue;
    }
    const texts: string[] = [];
    for (const block of m.content) {
      if (block.type === "tool_result") {
        const text = toolResultText(block.content);
        messages.push({
          role: "tool",
          name: names.get(block.tool_use_id) ?? "tool",
          content: block.is_error ? `Error: ${text}` : text,
        });
      } else texts.push(block.text);
    }
    if (texts.length > 0) messages.push({ role: "user", content: texts.join("\n\n") });
  }
  return {
    messages,
    // The binding has no tool_choice: a request that must be answered in text offers no tools
    // (it has no prompt cache to keep either).
    ...(request.toolChoice !== "none" && {
      tools: request.tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.input_schema },
      })),
    }),
    max_tokens: Math.min(WORKERS_AI_MAX_TOKENS, request.maxOutputTokens),
  };
}

/**
 * Maps the binding's answer to a model turn; tool calls get ids `toolu_wai_<turn>_<n>`.
 */
export function parseWorkersAiResponse(answer: unknown, turnIndex: number): ModelTurn {
  const parsed = WorkersAiResponse.safeParse(
    typeof answer === "string" ? { response: answer } : answer,
  );
  if (!parsed.success)
    throw new ModelCallError("Workers AI sent an answer of an unknown shape", true);
  const content: ModelTurn["content"] = [];
  if (parsed.data.response) content.push({ type: "text", text: parsed.data.response });
  (parsed.data.tool_calls ?? []).forEach((call, i) => {
    content.push({
      type: "tool_use",
      id: `toolu_wai_${turnIndex}_${i}`,
      name: call.name,
      input: parseArguments(call.arguments),
    });
  });
  return {
    content,
    model: WORKERS_AI_MODEL,
    usage: {
      input_tokens: Math.max(0, Math.round(parsed.data.usage?.prompt_tokens ?? 0)),
      output_tokens: Math.max(0, Math.round(parsed.data.usage?.completion_tokens ?? 0)),
    },
  };
}

/** Capacity, rate and timeout failures of the binding are worth a retry; bad input is not. */
function isTransientAiError(message: string): boolean {
  return /capacity|overload|rate|too many|timeout|timed out|temporar|unavailable|internal|network|\b5\d\d\b|\b429\b/i.test(
    message,
  );
}
