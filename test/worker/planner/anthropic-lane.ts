import { expect, inject } from "vitest";
import type { PlannerEnv } from "../../../src/planner/port.ts";
import type { RecordedRequest, ScriptedResponse } from "../../client/anthropic-double-types.ts";

/**
 * A lane of a model provider TEST DOUBLE (started by the vitest global setup in Node; tests in
 * workerd reach it over real HTTP through ANTHROPIC_BASE_URL or OPENAI_BASE_URL, exactly as a
 * deployment reaches a gateway): queues `responses` and answers the planner env that points at
 * them, a way to queue more, and the requests received.
 *
 * @example
 * const { env, requests } = await anthropicLane([{ status: 429, headers: { "retry-after": "1" }, body }]);
 */
export function anthropicLane(responses: ScriptedResponse[]) {
  return lane(inject("anthropicDoubleUrl"), responses, (base) => ({
    ANTHROPIC_API_KEY: "sk-test-double",
    ANTHROPIC_BASE_URL: base,
    ANTHROPIC_MODEL: "claude-test",
  }));
}

/**
 * A lane of the OpenAI Chat Completions API test double.
 *
 * @example
 * const { env, requests } = await openaiLane([{ status: 200, body: chatCompletion([…]) }]);
 */
export function openaiLane(responses: ScriptedResponse[]) {
  return lane(inject("openaiDoubleUrl"), responses, (base) => ({
    OPENAI_API_KEY: "sk-test-double",
    OPENAI_BASE_URL: `${base}/v1`,
    OPENAI_MODEL: "gpt-test",
  }));
}

async function lane(
  double: string,
  responses: ScriptedResponse[],
  envFor: (base: string) => PlannerEnv,
) {
  const name = crypto.randomUUID();
  const script = async (more: ScriptedResponse[]) => {
    const res = await fetch(`${double}/_double/${name}/script`, {
      method: "POST",
      body: JSON.stringify(more),
    });
    expect(res.status).toBe(204);
  };
  await script(responses);
  return {
    env: envFor(`${double}/t/${name}`),
    script,
    requests: async () =>
      (await (await fetch(`${double}/_double/${name}/requests`)).json()) as RecordedRequest[],
  };
}
