import { expect, inject } from "vitest";
import type { PlannerEnv } from "../../../src/planner/port.ts";
import type { RecordedRequest, ScriptedResponse } from "../../client/anthropic-double-types.ts";

/**
 * A lane of the Anthropic Messages API TEST DOUBLE (started by the vitest global setup in Node;
 * tests in workerd reach it over real HTTP through ANTHROPIC_BASE_URL, exactly as a deployment
 * reaches a gateway): queues `responses` and answers the planner env that points at them.
 *
 * @example
 * const { env, requests } = await anthropicLane([{ status: 429, headers: { "retry-after": "1" }, body }]);
 */
export async function anthropicLane(responses: ScriptedResponse[]) {
  const double = inject("anthropicDoubleUrl");
  const name = crypto.randomUUID();
  const res = await fetch(`${double}/_double/${name}/script`, {
    method: "POST",
    body: JSON.stringify(responses),
  });
  expect(res.status).toBe(204);
  const env: PlannerEnv = {
    ANTHROPIC_API_KEY: "sk-test-double",
    ANTHROPIC_BASE_URL: `${double}/t/${name}`,
    ANTHROPIC_MODEL: "claude-test",
  };
  return {
    env,
    requests: async () =>
      (await (await fetch(`${double}/_double/${name}/requests`)).json()) as RecordedRequest[],
  };
}
