import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ownerIdOf } from "../../src/api/auth.ts";
import { createSession } from "../../src/owner/sessions.ts";
import {
  DEEP_TOOL_NAMES,
  type Session,
  SessionSchema,
  TOOL_NAMES,
} from "../../src/protocol/index.ts";
import { ALICE, api, errorCode, ORIGIN, withPort } from "../support/worker/sessions.ts";

/**
 * The planning workflow (`variant`), the best-of-N group and the cost, as the session stores
 * and shows them (docs/PROTOCOL.md "Extensions"), on the real session Durable Object.
 */

const create = (body: Record<string, unknown>) =>
  api.call("POST", "/v1/sessions", ALICE, { json: { prompt: "Add OAuth login", ...body } });

describe("a session's variant and group", () => {
  it("defaults to simple, no group and a cost of 0 for the offline planner", async () => {
    const res = await create({});
    expect(res.status).toBe(201);
    const session = SessionSchema.parse(await res.json());
    expect(session).toMatchObject({
      variant: "simple",
      group: null,
      usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    });
    const [init] = await api.allEvents(ALICE, session.id);
    expect(init).toMatchObject({
      type: "system",
      subtype: "init",
      variant: "simple",
      tools: [...TOOL_NAMES],
    });
  });

  it("stores the variant and the group as given at create, in the Session and in system/init", async () => {
    const res = await create({ variant: "visual", group: "try-3_a" });
    expect(res.status).toBe(201);
    const session = (await res.json()) as Session;
    expect(session).toMatchObject({ variant: "visual", group: "try-3_a", planner: "offline" });
    expect(await api.getSession(ALICE, session.id)).toMatchObject({
      variant: "visual",
      group: "try-3_a",
    });
    const [init] = await api.allEvents(ALICE, session.id);
    expect(init).toMatchObject({ variant: "visual", tools: [...TOOL_NAMES] });
  });

  it("answers 400 variant_unavailable for deep on the offline and the scripted planner", async () => {
    for (const body of [
      { variant: "deep" },
      {
        variant: "deep",
        planner: "scripted",
        script: [{ content: [{ type: "text", text: "x" }] }],
      },
    ]) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(await errorCode(res.clone())).toBe("variant_unavailable");
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /cannot run the deep variant: .+ Choose the simple or visual variant, or a model planner/,
      );
    }
    const unknown = await create({ variant: "deeper" });
    expect(unknown.status).toBe(400);
    expect(await errorCode(unknown)).toBe("invalid_body");
  });

  it("offers Task in a deep session of a model planner: in system/init and to the engine", async () => {
    const created = await createSession(
      { ...env, ANTHROPIC_API_KEY: "sk-test" },
      await ownerIdOf(ALICE.token),
      { prompt: "Add OAuth login", planner: "anthropic", variant: "deep" },
      ORIGIN,
      { autostart: false },
    );
    if (!created.ok) throw new Error(created.error.message);
    expect(created.value).toMatchObject({
      variant: "deep",
      planner: "anthropic",
      usage: { cost_usd: 0 },
    });
    const [init] = await api.allEvents(ALICE, created.value.id);
    expect(init).toMatchObject({ variant: "deep", tools: [...DEEP_TOOL_NAMES] });
    expect(await withPort(created.value.id, (port) => port.facts.variant)).toBe("deep");
  });
});

describe("a session's cost", () => {
  it("adds each call's cost, and becomes null for good once a price is unknown", async () => {
    const res = await create({});
    const { id } = (await res.json()) as Session;
    await withPort(id, (port) => {
      port.addUsage({ input_tokens: 1_000, output_tokens: 100 }, 0.0045);
      port.addUsage({ input_tokens: 1_000, output_tokens: 100 }, 0.0045);
    });
    expect((await api.getSession(ALICE, id)).usage).toEqual({
      input_tokens: 2_000,
      output_tokens: 200,
      cost_usd: 0.009,
    });
    await withPort(id, (port) => {
      port.addUsage({ input_tokens: 10, output_tokens: 1 }, null);
      port.addUsage({ input_tokens: 10, output_tokens: 1 }, 0.5);
    });
    expect((await api.getSession(ALICE, id)).usage).toEqual({
      input_tokens: 2_020,
      output_tokens: 202,
      cost_usd: null,
    });
  });
});
