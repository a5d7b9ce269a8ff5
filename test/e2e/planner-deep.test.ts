import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compactBoundaryOf,
  DEEP_TOOL_NAMES,
  type Event,
  parentToolUseIdOf,
  READ_ONLY_TOOLS,
  toolResultText,
} from "../../src/protocol/index.ts";
import { type AnthropicDouble, startAnthropicDouble } from "../client/anthropic-double.ts";
import type { RecordedRequest } from "../client/anthropic-double-types.ts";
import { type OpenaiDouble, startOpenaiDouble } from "../client/openai-double.ts";
import { call, type Provider, reply, SESSION_REQUEST, say } from "../support/provider-replies.ts";
import {
  gitRepository,
  type PlanportWorker,
  settled,
  startPlanportWorker,
  uploadRepository,
} from "./planner-support.ts";

/**
 * Planning depth end to end: the worker runs in `wrangler dev` and reaches the Anthropic and
 * OpenAI provider TEST DOUBLES (served over real HTTP by this process) through
 * ANTHROPIC_BASE_URL and OPENAI_BASE_URL, exactly as a deployment reaches a gateway. A `deep`
 * session runs three explorers at once and a critique after the plan is written; a long
 * session with a small PLANPORT_CONTEXT_TOKENS compacts and reaches plan_ready; the cost comes
 * from the built-in price of the model the double says answered.
 */

const ANTHROPIC_LANE = "e2e-deep";
const OPENAI_LANE = "e2e-deep-openai";
const CONTEXT_TOKENS = 12_000;
/** What the double answers as: a dated snapshot of a model in the built-in price table. */
const ANSWERING_MODEL = "claude-sonnet-4-5-20250929";
/** claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write, per million. */
const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const EXPLORER_LATENCY_MS = 600;

let anthropic: AnthropicDouble;
let openai: OpenaiDouble;
let pp: PlanportWorker;
let repo: string;
let snapshotId: string;

beforeAll(async () => {
  anthropic = await startAnthropicDouble();
  openai = await startOpenaiDouble();
  pp = await startPlanportWorker({
    ANTHROPIC_API_KEY: "sk-test-double-e2e",
    ANTHROPIC_BASE_URL: `${anthropic.url}/t/${ANTHROPIC_LANE}`,
    ANTHROPIC_MODEL: "claude-sonnet-4-5",
    OPENAI_BASE_URL: `${openai.url}/t/${OPENAI_LANE}/v1`,
    OPENAI_MODEL: "gpt-test",
    PLANPORT_CONTEXT_TOKENS: String(CONTEXT_TOKENS),
    PLANPORT_MODEL_BACKOFF_MS: "10",
  });
  repo = gitRepository({
    "README.md": "# Shop\n",
    "src/billing/invoice.ts":
      "export function invoiceTotal(subtotal: number, tax: number): number {\n  return subtotal + tax;\n}\n",
  });
  snapshotId = (await uploadRepository(pp.client, repo)).id;
}, 120_000);

afterAll(async () => {
  await pp?.close();
  await anthropic?.close();
  await openai?.close();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

/** The whole deep workflow for one session; every marker carries `tag` so sessions never share a reply. */
function deepScript(provider: Provider, tag: string, planPath: string) {
  const r = (x: Parameters<typeof reply>[1]) =>
    reply(provider, { usage: { input: 200, output: 30, cacheRead: 1_000, cacheWrite: 100 }, ...x });
  const session = `${SESSION_REQUEST}`;
  const explorers = ["ARCH", "FILES", "RISKS"].map((x) => `${tag}-EXPLORE-${x}`);
  return {
    explorers,
    responses: [
      r({
        match: session,
        content: explorers.map((m, i) =>
          call(`toolu_${tag}_x${i}`, "Task", {
            description: m,
            prompt: `${m}: report on src/billing/invoice.ts.`,
          }),
        ),
      }),
      ...explorers.flatMap((m, i) => [
        r({
          match: m,
          delay_ms: EXPLORER_LATENCY_MS,
          content: [
            call(`toolu_${tag}_x${i}_read`, "Read", { file_path: "src/billing/invoice.ts" }),
          ],
        }),
        r({ match: m, content: [say(`${m} REPORT: invoiceTotal adds tax without rounding.`)] }),
      ]),
      r({
        match: session,
        content: [
          call(`toolu_${tag}_w`, "Write", {
            file_path: planPath,
            content: "# Plan\n\n1. Round in invoiceTotal.\n",
          }),
        ],
      }),
      r({
        match: session,
        content: [
          call(`toolu_${tag}_c`, "Task", {
            description: "Critique",
            prompt: `${tag}-CRITIQUE: read ${planPath} and report gaps.`,
          }),
        ],
      }),
      r({
        match: `${tag}-CRITIQUE`,
        content: [call(`toolu_${tag}_cr`, "Read", { file_path: planPath })],
      }),
      r({ match: `${tag}-CRITIQUE`, content: [say("CRITIQUE: add a test for half-cents.")] }),
      r({ match: session, content: [call(`toolu_${tag}_exit`, "ExitPlanMode", {})] }),
    ],
  };
}

const byTask = (events: readonly Event[], id: string) =>
  events.filter((e) => parentToolUseIdOf(e) === id);
const taskResult = (events: readonly Event[], id: string) => {
  for (const e of events)
    if (e.type === "user" && parentToolUseIdOf(e) === null && Array.isArray(e.message.content))
      for (const b of e.message.content)
        if (b.type === "tool_result" && b.tool_use_id === id) return toolResultText(b.content);
  return null;
};
const toolNames = (r: RecordedRequest) =>
  (r.body as { tools: { name?: string; function?: { name: string } }[] }).tools.map(
    (t) => t.name ?? t.function?.name,
  );

describe("planning depth under wrangler dev (provider doubles over HTTP)", () => {
  it.each(["anthropic", "openai"] as const)(
    "a deep session on %s: concurrent read-only explorers, a critique after the plan, plan_ready",
    async (provider) => {
      const tag = `deep-${provider}`;
      const created = await pp.client.createSession({
        prompt: "Round invoice totals to cents",
        snapshot_id: snapshotId,
        planner: provider,
        variant: "deep",
      });
      expect(created).toMatchObject({ planner: provider, variant: "deep", group: null });
      const planPath = (await pp.client.plan(created.id)).path;
      const script = deepScript(provider, tag, planPath);
      const responses = script.responses.map((x) =>
        provider === "anthropic"
          ? { ...x, body: { ...(x.body as object), model: ANSWERING_MODEL } }
          : x,
      );
      await (provider === "anthropic"
        ? anthropic.script(ANTHROPIC_LANE, responses)
        : openai.script(OPENAI_LANE, responses));

      const done = await settled(pp, created.id, 90_000);
      expect(done).toMatchObject({
        status: "requires_action",
        phase: "plan_ready",
        pending: { tool_use_id: `toolu_${tag}_exit` },
      });

      const events = await pp.api.allEvents(pp.auth, created.id);
      expect(events[0]).toMatchObject({
        subtype: "init",
        variant: "deep",
        tools: [...DEEP_TOOL_NAMES],
      });
      for (const [i, m] of script.explorers.entries()) {
        const own = byTask(events, `toolu_${tag}_x${i}`);
        expect(own.map((e) => e.type)).toEqual(["user", "assistant", "user", "assistant"]);
        expect(taskResult(events, `toolu_${tag}_x${i}`)).toBe(
          `${m} REPORT: invoiceTotal adds tax without rounding.`,
        );
      }
      expect(taskResult(events, `toolu_${tag}_c`)).toBe("CRITIQUE: add a test for half-cents.");
      // The critique read the written plan.
      const critiqueRead = byTask(events, `toolu_${tag}_c`).find(
        (e) => e.type === "user" && Array.isArray(e.message.content),
      );
      expect(JSON.stringify(critiqueRead)).toContain("Round in invoiceTotal.");

      const received = await (provider === "anthropic"
        ? anthropic.received(ANTHROPIC_LANE)
        : openai.received(OPENAI_LANE));
      const sent = received.filter((x) => x.matched?.startsWith(tag));
      const firsts = script.explorers.map((m) => sent.find((x) => x.matched === m)!);
      expect(Math.max(...firsts.map((x) => x.received_at))).toBeLessThan(
        Math.min(...firsts.map((x) => x.answered_at!)),
      );
      for (const x of sent.filter((y) => y.matched?.startsWith(tag)))
        expect(toolNames(x)).toEqual([...READ_ONLY_TOOLS]);

      if (provider === "anthropic") {
        // 4 session calls and 8 subagent calls (3 explorers and the critique, 2 each), each 200 in, 30 out, 1,000 cache reads, 100 writes,
        // at claude-sonnet-4-5's built-in price (the double answers as a dated snapshot of it).
        const calls = 12;
        const cost =
          (calls *
            (200 * SONNET.input +
              30 * SONNET.output +
              1_000 * SONNET.cacheRead +
              100 * SONNET.cacheWrite)) /
          1e6;
        expect(done.usage).toMatchObject({ input_tokens: calls * 200, output_tokens: calls * 30 });
        expect(done.usage.cost_usd).toBeCloseTo(cost, 6);
      } else {
        // gpt-test has no price: the cost is unknown, not a guess.
        expect(done.usage.cost_usd).toBeNull();
      }
    },
    120_000,
  );

  it.each(["anthropic", "openai"] as const)(
    "a long session with a small PLANPORT_CONTEXT_TOKENS compacts and reaches plan_ready, even on a model that calls a tool whenever it may (%s)",
    async (provider) => {
      const created = await pp.client.createSession({
        prompt: `Round invoice totals to cents, compactly (${provider})`,
        snapshot_id: snapshotId,
        planner: provider,
      });
      const planPath = (await pp.client.plan(created.id)).path;
      // Every reply is an eager model's: offered tools it may call, it calls one instead of
      // answering in text — the summary request included, unless that forbids tool calls.
      const r = (x: Parameters<typeof reply>[1]) => ({
        ...reply(provider, x),
        eager_tool_use: true,
      });
      const marker = `compactly (${provider})`;
      const double = provider === "anthropic" ? anthropic : openai;
      const lane = provider === "anthropic" ? ANTHROPIC_LANE : OPENAI_LANE;
      await double.script(lane, [
        r({
          match: marker,
          usage: { input: 2_000, output: 40, cacheRead: 8_000 },
          content: [call("toolu_long_read", "Read", { file_path: "src/billing/invoice.ts" })],
        }),
        r({
          match: "is being compacted",
          usage: { input: 9_000, output: 100 },
          content: [say("LONG-SUMMARY: invoiceTotal needs rounding.")],
        }),
        r({
          match: marker,
          content: [
            call("toolu_long_w", "Write", {
              file_path: planPath,
              content: "# Plan\n\n1. Round.\n",
            }),
            call("toolu_long_exit", "ExitPlanMode", {}),
          ],
        }),
      ]);
      const done = await settled(pp, created.id, 60_000);
      const events = await pp.api.allEvents(pp.auth, created.id);
      expect(done, JSON.stringify(events.slice(-3))).toMatchObject({
        phase: "plan_ready",
        pending: { tool_use_id: "toolu_long_exit" },
      });
      const boundaries = events.flatMap((e) => {
        const b = compactBoundaryOf(e);
        return b === null ? [] : [b];
      });
      expect(boundaries).toHaveLength(1);
      expect(boundaries[0]).toMatchObject({
        type: "system",
        subtype: "compact_boundary",
        compact_metadata: { trigger: "auto", pre_tokens: expect.any(Number) },
      });
      expect(boundaries[0]!.compact_metadata.pre_tokens).toBeGreaterThan(CONTEXT_TOKENS * 0.8);
      const sent = (await double.received(lane)).filter((x) =>
        JSON.stringify(x.body).includes(marker),
      );
      // The summary request forbade tool calls and still listed the session's tools.
      const summary = sent.find((x) => x.matched === "is being compacted")!;
      const summaryBody = summary.body as { tool_choice?: unknown; tools: unknown };
      expect(summaryBody.tool_choice).toEqual(provider === "anthropic" ? { type: "none" } : "none");
      expect(summaryBody.tools).toEqual((sent[0]!.body as { tools: unknown }).tools);
      expect(sent.some((x) => x.eager_tool_call)).toBe(false);
      const last = sent.filter((x) => x.matched === marker).at(-1)!;
      expect(JSON.stringify(last.body)).toContain("LONG-SUMMARY");
      expect(JSON.stringify(last.body)).not.toContain("toolu_long_read");
    },
    120_000,
  );
});
