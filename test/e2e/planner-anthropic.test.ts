import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANTHROPIC_VERSION } from "../../src/planner/models/anthropic.ts";
import { APPROVED_PLAN_MARKER, TOOL_NAMES } from "../../src/protocol/index.ts";
import {
  type AnthropicDouble,
  type RecordedRequest,
  type ScriptedResponse,
  startAnthropicDouble,
} from "../client/anthropic-double.ts";
import {
  gitRepository,
  type PlanportWorker,
  settled,
  startPlanportWorker,
  uploadRepository,
} from "./planner-support.ts";

/**
 * The anthropic planner end to end: the worker runs in `wrangler dev` and reaches an Anthropic
 * Messages API TEST DOUBLE served over real HTTP by this test process, through
 * `ANTHROPIC_BASE_URL` — exactly as a deployment reaches a gateway. With an API key set and
 * `PLANPORT_PLANNER=auto`, new sessions get the anthropic planner. The double refuses
 * malformed requests (400), so a wire-format bug fails the session and this test.
 */

const LANE = "e2e-wire";
const KEY = "sk-test-double-e2e";
const PLAN = "# Plan\n\nRound `invoiceTotal` to cents.\n";

type Block = {
  type: string;
  id?: string;
  name?: string;
  tool_use_id?: string;
  text?: string;
  content?: unknown;
  is_error?: boolean;
  cache_control?: unknown;
};
type Body = {
  model: string;
  max_tokens: number;
  system: { type: string; text: string; cache_control?: unknown }[];
  tools: { name: string; description: string; input_schema: { type: string } }[];
  messages: { role: string; content: Block[] }[];
};

const message = (content: unknown[]): ScriptedResponse => ({
  status: 200,
  body: {
    id: "msg_e2e",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content,
    stop_reason: "tool_use",
    usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 90 },
  },
});

let double: AnthropicDouble;
let pp: PlanportWorker;
let repo: string;

beforeAll(async () => {
  double = await startAnthropicDouble();
  pp = await startPlanportWorker({
    ANTHROPIC_API_KEY: KEY,
    ANTHROPIC_BASE_URL: `${double.url}/t/${LANE}`,
    ANTHROPIC_MODEL: "claude-test",
    PLANPORT_EXECUTION: "overlay",
  });
  repo = gitRepository({
    "README.md": "# Shop\n",
    "src/billing/invoice.ts":
      "export function invoiceTotal(subtotal: number, tax: number): number {\n  return subtotal + tax;\n}\n",
  });
}, 120_000);

afterAll(async () => {
  await pp?.close();
  await double?.close();
  if (repo) rmSync(repo, { recursive: true, force: true });
});

const script = (responses: ScriptedResponse[]) => double.script(LANE, responses);
const received = (): Promise<RecordedRequest[]> => double.received(LANE);

describe("the anthropic planner under wrangler dev (Messages API test double over HTTP)", () => {
  it("is picked by auto, speaks the wire format, retries 429 and 529, reaches plan_ready and executes the approved plan", async () => {
    await script([
      {
        status: 429,
        headers: { "retry-after": "1" },
        body: { type: "error", error: { type: "rate_limit_error", message: "Slow down" } },
      },
      {
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      },
      message([
        { type: "text", text: "Let me read the invoice code." },
        {
          type: "tool_use",
          id: "toolu_e2e_read",
          name: "Read",
          input: { file_path: "src/billing/invoice.ts" },
        },
        {
          type: "tool_use",
          id: "toolu_e2e_grep",
          name: "Grep",
          input: { pattern: "invoiceTotal", output_mode: "files_with_matches" },
        },
      ]),
    ]);
    const snapshot = await uploadRepository(pp.client, repo);
    const created = await pp.client.createSession({
      prompt: "Round invoice totals to cents",
      snapshot_id: snapshot.id,
    });
    expect(created).toMatchObject({ planner: "anthropic", can_execute_remotely: true });
    // The plan file's path exists only now; the retries ahead (a 1 s retry-after, then
    // backoff) leave ample time to queue the reply that writes it before it is asked for.
    const planPath = (await pp.client.plan(created.id)).path;
    await script([
      message([
        {
          type: "tool_use",
          id: "toolu_e2e_write",
          name: "Write",
          input: { file_path: planPath, content: PLAN },
        },
        { type: "tool_use", id: "toolu_e2e_exit", name: "ExitPlanMode", input: {} },
      ]),
    ]);

    const review = await settled(pp, created.id);
    expect(review).toMatchObject({ status: "requires_action", phase: "plan_ready" });
    expect(review.pending?.tool_use_id).toBe("toolu_e2e_exit");
    expect(await pp.client.plan(created.id)).toMatchObject({ content: PLAN, revision: 1 });

    await script([
      message([
        {
          type: "tool_use",
          id: "toolu_e2e_edit",
          name: "Edit",
          input: {
            file_path: "src/billing/invoice.ts",
            old_string: "  return subtotal + tax;",
            new_string: "  return Math.round((subtotal + tax) * 100) / 100;",
          },
        },
      ]),
      message([{ type: "text", text: "Done: totals are rounded to cents." }]),
    ]);
    await pp.client.decide(created.id, { tool_use_id: "toolu_e2e_exit", decision: "approve" });
    const done = await settled(pp, created.id);
    expect(done).toMatchObject({
      status: "idle",
      phase: "done",
      outcome: { kind: "approved", execution_target: "remote" },
      usage: { input_tokens: 480, output_tokens: 120 },
    });
    expect(await pp.client.changes(created.id)).toContain(
      "+  return Math.round((subtotal + tax) * 100) / 100;",
    );

    const sent = await received();
    // 429 and 529, the retry, the plan reply, then two calls of remote execution.
    expect(sent).toHaveLength(6);
    expect(sent[2]!.body).toEqual(sent[0]!.body); // a retry resends the same request
    expect(sent[1]!.body).toEqual(sent[0]!.body);
    for (const r of sent) {
      expect(r.headers["x-api-key"]).toBe(KEY);
      expect(r.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
    }
    const bodies = sent.map((r) => r.body as Body);

    // Tools with JSON schemas, the same stable prefix on every call, cached.
    const first = bodies[0]!;
    expect(first.model).toBe("claude-test");
    expect(first.tools.map((t) => t.name)).toEqual(TOOL_NAMES);
    for (const tool of first.tools) {
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.input_schema.type).toBe("object");
    }
    expect(first.system).toEqual([
      {
        type: "text",
        text: expect.stringContaining("planport"),
        cache_control: { type: "ephemeral" },
      },
    ]);
    for (const body of bodies) {
      expect(body.tools).toEqual(first.tools);
      expect(body.system).toEqual(first.system);
      expect(body.messages.at(-1)!.content.at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    }

    // The plan-mode reminder travels with the task, naming this session's plan file.
    const opening = first.messages[0]!;
    expect(opening.content[0]).toEqual({ type: "text", text: "Round invoice totals to cents" });
    expect(opening.content[1]!.text).toContain("<system-reminder>\nPlan mode is active.");
    expect(opening.content[1]!.text).toContain(planPath);

    // Every tool_result is paired with its tool_use, in order, at the start of the next message.
    const pairs = (body: Body) =>
      body.messages.flatMap((m, i) =>
        m.role === "assistant"
          ? [
              {
                asked: m.content.filter((b) => b.type === "tool_use").map((b) => b.id),
                answered: (body.messages[i + 1]?.content ?? [])
                  .filter((b) => b.type === "tool_result")
                  .map((b) => b.tool_use_id),
              },
            ]
          : [],
      );
    expect(pairs(bodies[3]!)).toEqual([
      {
        asked: ["toolu_e2e_read", "toolu_e2e_grep"],
        answered: ["toolu_e2e_read", "toolu_e2e_grep"],
      },
    ]);
    const execution = bodies[4]!;
    expect(pairs(execution)).toEqual([
      {
        asked: ["toolu_e2e_read", "toolu_e2e_grep"],
        answered: ["toolu_e2e_read", "toolu_e2e_grep"],
      },
      {
        asked: ["toolu_e2e_write", "toolu_e2e_exit"],
        answered: ["toolu_e2e_write", "toolu_e2e_exit"],
      },
    ]);
    const approval = execution.messages
      .at(-1)!
      .content.find((b) => b.tool_use_id === "toolu_e2e_exit")!;
    expect(approval.is_error).toBe(false);
    expect(JSON.stringify(approval.content)).toContain(APPROVED_PLAN_MARKER);
    expect(pairs(bodies[5]!).at(-1)).toEqual({
      asked: ["toolu_e2e_edit"],
      answered: ["toolu_e2e_edit"],
    });
    // Earlier turns are resent unchanged: only the newest block carries the cache mark.
    expect(bodies[5]!.messages.slice(0, execution.messages.length)).toEqual(
      execution.messages.map((m, i, all) =>
        i === all.length - 1
          ? { ...m, content: m.content.map(({ cache_control: _, ...b }) => b) }
          : m,
      ),
    );
  }, 120_000);
});
