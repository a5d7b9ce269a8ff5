import type { ScriptedResponse } from "../client/anthropic-double-types.ts";

/**
 * Scripted model replies in each provider's wire shape, from one provider-neutral description,
 * so one scenario runs against the Anthropic and the OpenAI test doubles alike.
 */

export type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

export interface Reply {
  content: ReplyBlock[];
  /** Provider-neutral usage: uncached input, output, cache reads and writes. */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Answer only requests whose JSON contains this. */
  match?: string;
  delay_ms?: number;
  simulate_usage?: boolean;
}

export type Provider = "anthropic" | "openai";

/** The scripted response a provider's double answers with. */
export function reply(provider: Provider, r: Reply): ScriptedResponse {
  const u = r.usage ?? { input: 100, output: 20 };
  const body =
    provider === "anthropic"
      ? {
          id: "msg_double",
          type: "message",
          role: "assistant",
          model: "claude-test",
          content: r.content,
          stop_reason: r.content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
          usage: {
            input_tokens: u.input,
            output_tokens: u.output,
            cache_read_input_tokens: u.cacheRead ?? 0,
            cache_creation_input_tokens: u.cacheWrite ?? 0,
          },
        }
      : {
          id: "chatcmpl-double",
          object: "chat.completion",
          model: "gpt-test",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content:
                  r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n") || null,
                tool_calls: r.content.flatMap((b) =>
                  b.type === "tool_use"
                    ? [
                        {
                          id: b.id,
                          type: "function",
                          function: { name: b.name, arguments: JSON.stringify(b.input) },
                        },
                      ]
                    : [],
                ),
              },
              finish_reason: "stop",
            },
          ],
          usage: {
            // OpenAI counts cached tokens inside prompt_tokens.
            prompt_tokens: u.input + (u.cacheRead ?? 0),
            completion_tokens: u.output,
            prompt_tokens_details: { cached_tokens: u.cacheRead ?? 0 },
          },
        };
  return {
    status: 200,
    body,
    ...(r.match !== undefined && { match: r.match }),
    ...(r.delay_ms !== undefined && { delay_ms: r.delay_ms }),
    ...(r.simulate_usage && { simulate_usage: true }),
  };
}

export const say = (text: string): ReplyBlock => ({ type: "text", text });
export const call = (id: string, name: string, input: Record<string, unknown>): ReplyBlock => ({
  type: "tool_use",
  id,
  name,
  input,
});

/** Matches the session's own requests (only they offer ExitPlanMode), not its subagents'. */
export const SESSION_REQUEST = '"name":"ExitPlanMode"';
