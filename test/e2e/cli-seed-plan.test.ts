import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../../src/protocol/index.ts";
import {
  type AnthropicDouble,
  type ScriptedResponse,
  startAnthropicDouble,
} from "../client/anthropic-double.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { gitRepository, type PlanportWorker, startPlanportWorker } from "./planner-support.ts";

/**
 * `planport plan --seed-plan FILE|-` end to end: the real CLI against `wrangler dev`, with the
 * anthropic planner reaching a Messages API TEST DOUBLE that answers every call with plain
 * text, so nothing but the draft ever writes the plan file. The session's revision 1 is the
 * file's text byte for byte, `system/init` says `seed_plan: true`, and the model's very first
 * request already tells it the plan file holds a draft to refine.
 */

const LANE = "e2e-seed";
const DRAFT = [
  "# Round invoice totals",
  "",
  "1. Round `invoiceTotal` to whole cents.",
  "2. Show the currency — ünïcode stays as written ✓",
  "",
].join("\n");

const textReply: ScriptedResponse = {
  status: 200,
  body: {
    id: "msg_e2e_seed",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text: "I will refine the draft." }],
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  },
};

let double: AnthropicDouble;
let pp: PlanportWorker;
let repo: string;
let dir: string;

beforeAll(async () => {
  double = await startAnthropicDouble();
  pp = await startPlanportWorker({
    ANTHROPIC_API_KEY: "sk-test-double-seed",
    ANTHROPIC_BASE_URL: `${double.url}/t/${LANE}`,
    ANTHROPIC_MODEL: "claude-test",
  });
  repo = gitRepository({
    "README.md": "# Shop\n",
    "src/billing/invoice.ts":
      "export function invoiceTotal(subtotal: number, tax: number): number {\n  return subtotal + tax;\n}\n",
  });
  dir = mkdtempSync(join(tmpdir(), "planport-e2e-seed-"));
}, 120_000);

afterAll(async () => {
  await pp?.close();
  await double?.close();
  for (const d of [repo, dir]) if (d) rmSync(d, { recursive: true, force: true });
});

function plan(args: string[], input?: string) {
  return startCli(
    [
      "plan",
      ...args,
      "--planner",
      "anthropic",
      "--repo",
      repo,
      "--server",
      pp.worker.url,
      "--token",
      pp.auth.token,
      "--interval",
      "500ms",
      "--json",
    ],
    { env: isolatedHome().env, input },
  );
}

/** Waits until the double has received `count` requests of the lane in all. */
async function requestsReceived(count: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const sent = await double.received(LANE);
    if (sent.length >= count) return sent;
    if (Date.now() > deadline) throw new Error(`the double received ${sent.length} requests`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The seeded session as stored: revision 1, the init event, and what the model was sent first. */
async function expectSeeded(id: string, draft: string) {
  const planFile = await pp.client.plan(id);
  expect(planFile).toMatchObject({ revision: 1, content: draft, edited_by_user: false });
  const page = await pp.client.events(id, { limit: 1 });
  const init = page.data[0] as Event & { seed_plan?: boolean };
  expect(init).toMatchObject({ type: "system", subtype: "init", seed_plan: true });
}

function firstUserText(body: unknown): string {
  const { messages } = body as { messages: { role: string; content: { text?: string }[] }[] };
  return messages[0]!.content.map((b) => b.text ?? "").join("\n");
}

describe("planport plan --seed-plan against wrangler dev", () => {
  it("sends the file as revision 1 before the first model call, with the task as given", async () => {
    await double.script(LANE, [textReply]);
    const file = join(dir, "draft.md");
    writeFileSync(file, DRAFT);
    const before = (await double.received(LANE)).length;
    const run = plan(["round invoice totals", "--seed-plan", file]);
    await run.waitForStdout('"event":"session"', 60_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    const sent = await requestsReceived(before + 1);
    const first = firstUserText(sent[before]!.body);
    expect(first).toContain("already holds a draft written elsewhere");
    expect(first).toContain("round invoice totals");
    await expectSeeded(id, DRAFT);
    expect((await pp.client.getSession(id)).title).toBe("round invoice totals");
    await pp.client.archive(id);
    const { code } = await run.done;
    expect(code).toBe(3);
  }, 120_000);

  it("reads the draft from stdin with -, and derives the task from its first heading", async () => {
    await double.script(LANE, [textReply]);
    const run = plan(["--seed-plan", "-"], DRAFT);
    await run.waitForStdout('"event":"session"', 60_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    await expectSeeded(id, DRAFT);
    expect((await pp.client.getSession(id)).title).toBe("Refine this plan: Round invoice totals");
    await pp.client.archive(id);
    expect((await run.done).code).toBe(3);
  }, 120_000);

  it("gives every session of an --attempts group the draft", async () => {
    await double.script(LANE, [textReply, textReply]);
    const file = join(dir, "group-draft.md");
    writeFileSync(file, DRAFT);
    const run = plan(["--seed-plan", file, "--attempts", "2"]);
    await run.waitForStdout('"event":"group"', 60_000);
    const group = ndjson(run.stdout()).find((l) => l.event === "group") as {
      sessions: { id: string }[];
    };
    expect(group.sessions).toHaveLength(2);
    for (const s of group.sessions) await expectSeeded(s.id, DRAFT);
    for (const s of group.sessions) await pp.client.archive(s.id);
    expect((await run.done).code).toBe(3);
  }, 120_000);

  it("exits 2 with a sentence naming the file for a bad draft, and when neither task nor draft is given", async () => {
    mkdirSync(join(dir, "a-folder"), { recursive: true });
    writeFileSync(join(dir, "empty.md"), "");
    writeFileSync(join(dir, "binary.md"), new Uint8Array([0x23, 0xff, 0xfe, 0x00]));
    writeFileSync(join(dir, "long.md"), "x".repeat(200_001));
    const cases: [string[], RegExp][] = [
      [["--seed-plan", join(dir, "nope.md")], /nope\.md: there is no file/],
      [["--seed-plan", join(dir, "a-folder")], /a-folder is a directory/],
      [["--seed-plan", join(dir, "empty.md")], /empty\.md is empty/],
      [["--seed-plan", join(dir, "binary.md")], /binary\.md is not UTF-8 text/],
      [["--seed-plan", join(dir, "long.md")], /long\.md is too long/],
      [[], /describe the task to plan.*--seed-plan FILE/],
    ];
    for (const [args, message] of cases) {
      const { code, stdout } = await plan(args).done;
      expect(code, args.join(" ")).toBe(2);
      const last = ndjson(stdout).at(-1);
      expect(last).toMatchObject({ event: "error", reason: "usage" });
      expect(String(last?.message)).toMatch(message);
    }
  }, 120_000);
});
