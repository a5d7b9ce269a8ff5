import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWorkerProcess,
  type WorkerProcess,
} from "../../local-client/embedded/worker-process.ts";
import { type Api, createApi } from "../../local-client/http/api.ts";
import { type AnthropicDouble, startAnthropicDouble } from "../client/anthropic-double.ts";
import type { ScriptedResponse } from "../client/anthropic-double-types.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { isolatedHome, planportOnPath } from "../client/run-cli.ts";
import { claudeCodeEnv, ensureClaudeCode } from "../support/claude-code.ts";

/**
 * The Claude Code plugin (integrations/claude-code) end to end with the real `claude` binary
 * (2.1.328, installed on demand into a cache: test/support/claude-code.ts) against `wrangler
 * dev` with the offline planner. Claude Code's model is the Anthropic double, playing an agent
 * that follows the slash command: it loads the deferred planport tools with ToolSearch, calls
 * `plan`, then `wait_for_plan` until it returns something else. The test plays the review page
 * from outside: it teleports the plan over the HTTP API while the MCP server polls, and reads
 * what Claude Code sent its model next.
 */

const TOKEN = "e2e-claude-code-token";
const PLUGIN_DIR = resolve(import.meta.dirname, "../../integrations/claude-code");
const TOOL = (name: string) => `mcp__plugin_planport_planport__${name}`;
const TASK = "add GitHub OAuth login next to the password login";
const SEED = [
  "# Add GitHub OAuth login",
  "",
  "1. Add a GitHub OAuth callback route next to the password login in src/auth/login.ts.",
  "2. Store the GitHub user id in a new users column (src/db/migrations).",
  "3. Test the callback in test/login.test.ts.",
].join("\n");

const claude = await ensureClaudeCode();
// Only a machine that has neither the cache nor a way to install it skips; CI always runs it.
const skip = !claude.ok && process.env.CI !== "true";
if (!claude.ok) {
  console.warn(`claude-code-plugin.test.ts: ${skip ? "skipped" : "cannot run"}: ${claude.reason}`);
}

let worker: WorkerProcess;
let api: Api;
let double: AnthropicDouble;
let repo: string;
const persist = mkdtempSync(join(tmpdir(), "planport-e2e-claude-"));

beforeAll(async () => {
  if (skip) return;
  worker = await startWorkerProcess({
    persistDir: persist,
    vars: { PLANPORT_TOKENS: TOKEN, PLANPORT_PLANNER: "offline" },
  });
  api = createApi({ server: worker.url, token: TOKEN });
  double = await startAnthropicDouble();
  repo = fixtureRepo();
}, 120_000);

afterAll(async () => {
  await double?.close();
  await worker?.stop();
  rmSync(persist, { recursive: true, force: true });
});

type Block = {
  type: string;
  id?: string;
  name?: string;
  tool_use_id?: string;
  text?: string;
  content?: unknown;
};
type MessagesRequest = {
  tools?: { name: string }[];
  messages: { role: string; content: string | Block[] }[];
};

function blocks(content: string | Block[]): Block[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** The text of a tool_result block. */
function resultText(block: Block): string {
  if (typeof block.content === "string") return block.content;
  if (!Array.isArray(block.content)) return "";
  return (block.content as Block[]).map((b) => b.text ?? "").join("\n");
}

/** Every tool result of the conversation so far, with the name of the tool that gave it. */
function toolResults(req: MessagesRequest): { name: string; text: string }[] {
  const names = new Map<string, string>();
  const results: { name: string; text: string }[] = [];
  for (const m of req.messages) {
    for (const b of blocks(m.content)) {
      if (b.type === "tool_use" && b.id && b.name) names.set(b.id, b.name);
      if (b.type === "tool_result" && b.tool_use_id) {
        results.push({ name: names.get(b.tool_use_id) ?? "?", text: resultText(b) });
      }
    }
  }
  return results;
}

let turn = 0;
function reply(content: Block[] | Record<string, unknown>[], stop: string): ScriptedResponse {
  turn += 1;
  return {
    status: 200,
    body: {
      id: `msg_double_${turn}`,
      type: "message",
      role: "assistant",
      model: "claude-double",
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 10 },
    },
  };
}
const say = (text: string) => reply([{ type: "text", text }], "end_turn");
const use = (name: string, input: unknown) =>
  reply([{ type: "tool_use", id: `toolu_double_${turn + 1}`, name, input }], "tool_use");

/**
 * The agent the double plays: what a model following /planport:plan or /planport:refine does
 * next, read off the request. Requests without Claude Code's main tools (titles and other side
 * requests) get plain text.
 */
function agent(opts: { seed: boolean }) {
  return (body: unknown): ScriptedResponse => {
    const req = body as MessagesRequest;
    const tools = (req.tools ?? []).map((t) => t.name);
    if (!tools.includes("ToolSearch") && !tools.includes(TOOL("plan"))) return say("planport");
    // Before any planport command: the user asked for a draft, and the model writes one.
    if (!JSON.stringify(req.messages).includes("<command-name>/planport:")) return say(SEED);
    const results = toolResults(req);
    const last = results.at(-1);
    if (!last) {
      return use("ToolSearch", {
        query: `select:${TOOL("plan")},${TOOL("wait_for_plan")}`,
      });
    }
    if (last.name === "ToolSearch") {
      if (!opts.seed) return use(TOOL("plan"), { task: TASK, repo });
      // /planport:refine: the conversation's current plan is the model's own earlier draft.
      const draft = req.messages
        .filter((m) => m.role === "assistant")
        .flatMap((m) => blocks(m.content))
        .filter((b) => b.type === "text" && (b.text ?? "").startsWith("# "))
        .at(-1)?.text;
      if (!draft) return say("There is no plan in this conversation to refine.");
      return use(TOOL("plan"), { task: "Refine the OAuth login plan", seed_plan: draft, repo });
    }
    const sessionId = /\bses_[0-9a-z]{26}\b/.exec(
      results.find((r) => r.name === TOOL("plan"))?.text ?? "",
    )?.[0];
    if (last.name === TOOL("plan") || /^Still (waiting|planning)/.test(last.text)) {
      if (!sessionId) return say(`The plan tool failed: ${last.text}`);
      // Short waits, so the conversation also shows the "still waiting → call again" loop.
      return use(TOOL("wait_for_plan"), { session_id: sessionId, timeout_s: 2 });
    }
    return say("The plan is here; implementing it now.");
  };
}

interface ClaudeRun {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * Runs `claude -p prompt` with the plugin in the fixture repository. `claudeHome` (its HOME)
 * keeps its conversations: with `continue`, the prompt goes on in the last one.
 */
function runClaude(
  lane: string,
  prompt: string,
  opts: { claudeHome?: string; continue?: boolean } = {},
): ClaudeRun {
  if (!claude.ok) throw new Error(claude.reason);
  const home = isolatedHome();
  const env = claudeCodeEnv({
    home: opts.claudeHome ?? mkdtempSync(join(tmpdir(), "planport-claude-home-")),
    anthropicBaseUrl: `${double.url}/t/${lane}`,
    extra: {
      // The plugin's .mcp.json runs `planport mcp` by name, as from a global install.
      PATH: `${planportOnPath()}${delimiter}${process.env.PATH ?? ""}`,
      PLANPORT_URL: worker.url,
      PLANPORT_TOKEN: TOKEN,
      PLANPORT_HOME: String(home.env.PLANPORT_HOME),
      XDG_DATA_HOME: String(home.env.XDG_DATA_HOME),
    },
  });
  const child = spawn(
    claude.bin,
    [
      "-p",
      "--plugin-dir",
      PLUGIN_DIR,
      "--allowedTools",
      "mcp__plugin_planport_planport",
      "--output-format",
      "stream-json",
      "--verbose",
      ...(opts.continue ? ["--continue"] : []),
      "--",
      prompt,
    ],
    { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const done = once(child, "exit").then(([code]) => ({
    code: code as number | null,
    stdout,
    stderr,
  }));
  return { child, done };
}

/**
 * The id of the session Claude Code started (created after `since`). If claude exits first,
 * fails with what it printed and what its model was asked.
 */
async function newSession(run: ClaudeRun, lane: string, since: number): Promise<string> {
  let exited = false;
  let found = false;
  const failure = run.done.then(async ({ code, stdout, stderr }) => {
    exited = true;
    if (found) return "";
    const asked = (await double.received(lane)).map((r) => {
      const b = r.body as MessagesRequest;
      return JSON.stringify({ tools: (b.tools ?? []).map((t) => t.name), messages: b.messages });
    });
    throw new Error(
      `claude exited (${code}) before starting a session:\n${stdout}\n${stderr}\nrequests:\n${asked.join("\n---\n")}`,
    );
  });
  failure.catch(() => {});
  const id = await Promise.race([failure, firstSession(since, () => exited)]);
  found = true;
  return id;
}

async function firstSession(
  since: number,
  stop: () => boolean,
  timeoutMs = 120_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (stop()) return "";
    const { data } = await api.listSessions({ limit: 5 });
    const fresh = data.find((s) => Date.parse(s.created_at) >= since - 1000);
    if (fresh) return fresh.id;
    if (Date.now() > deadline) throw new Error("Claude Code never started a planport session");
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until the model was told at least once that wait_for_plan is still waiting. */
async function sawStillWaiting(lane: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const requests = await double.received(lane);
    const told = requests.some((r) =>
      toolResults(r.body as MessagesRequest).some(
        (t) => t.name === TOOL("wait_for_plan") && t.text.startsWith("Still waiting"),
      ),
    );
    if (told) return;
    if (Date.now() > deadline) throw new Error("wait_for_plan never answered 'Still waiting'");
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until the session's plan waits for a decision and a terminal polls it. */
async function teleportable(id: string, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const session = await api.getSession(id);
    if (session.pending?.kind === "plan" && session.terminal_polled_at) {
      return session.pending.tool_use_id;
    }
    if (Date.now() > deadline) throw new Error(`${id} was never teleportable: ${session.phase}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(skip)("the Claude Code plugin with the real claude", () => {
  it("/planport:plan offloads the task, and the teleported plan arrives as wait_for_plan's result", async () => {
    const lane = "plan";
    double.respond(lane, agent({ seed: false }));
    const since = Date.now();
    const run = runClaude(lane, `/planport:plan ${TASK}`);
    try {
      const id = await newSession(run, lane, since);
      await sawStillWaiting(lane);
      const toolUseId = await teleportable(id);
      await api.decide(id, { tool_use_id: toolUseId, decision: "teleport" });
      const { code, stdout, stderr } = await run.done;
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      const plan = (await api.plan(id)).content.trim();
      expect(plan.length).toBeGreaterThan(100);
      const requests = (await double.received(lane)).map((r) => r.body as MessagesRequest);
      // The slash command reached the model as the plugin's instructions with the task, and
      // the planport tools were deferred until ToolSearch loaded them.
      const main = requests.filter((r) => (r.tools ?? []).some((t) => t.name === "ToolSearch"));
      const names = (r: MessagesRequest | undefined) => (r?.tools ?? []).map((t) => t.name);
      expect(JSON.stringify(main[0]?.messages[0])).toContain(TASK);
      expect(JSON.stringify(main[0]?.messages[0])).toContain(TOOL("wait_for_plan"));
      expect(names(main[0])).not.toContain(TOOL("plan"));
      expect(names(main.at(-1))).toEqual(
        expect.arrayContaining([TOOL("plan"), TOOL("wait_for_plan")]),
      );
      const results = toolResults(requests.at(-1) ?? { messages: [] });
      const waited = results.filter((r) => r.name === TOOL("wait_for_plan")).at(-1);
      expect(waited?.text).toContain("Implement this plan here");
      expect(waited?.text).toContain(plan);
      expect(results.find((r) => r.name === TOOL("plan"))?.text).toContain(id);
      expect((await api.getSession(id)).outcome).toMatchObject({ kind: "teleport" });
    } finally {
      run.child.kill();
    }
  }, 300_000);

  it("/planport:refine sends the conversation's plan as seed_plan: revision 1 is the draft", async () => {
    const lane = "refine";
    double.respond(lane, agent({ seed: true }));
    // One conversation: the user asks for a draft, then sends it to planport.
    const claudeHome = mkdtempSync(join(tmpdir(), "planport-claude-home-"));
    const drafted = await runClaude(lane, "Draft a plan to add GitHub OAuth login", {
      claudeHome,
    }).done;
    expect(drafted.code, drafted.stderr).toBe(0);
    expect(drafted.stdout).toContain("Store the GitHub user id");
    const since = Date.now();
    const run = runClaude(lane, "/planport:refine keep it small", { claudeHome, continue: true });
    try {
      const id = await newSession(run, lane, since);
      const toolUseId = await teleportable(id);
      const events = await api.events(id, { limit: 100 });
      const init = events.data.find((e) => e.type === "system" && e.subtype === "init");
      expect(init).toMatchObject({ seed_plan: true });
      await api.decide(id, { tool_use_id: toolUseId, decision: "teleport" });
      const { code, stdout, stderr } = await run.done;
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      // Revision 1 was the draft; the planner's one rewrite, which keeps its steps, is 2.
      const plan = await api.plan(id);
      expect(plan.revision).toBe(2);
      for (const step of SEED.split("\n").filter((l) => /^\d\. /.test(l))) {
        expect(plan.content).toContain(step);
      }
      const requests = (await double.received(lane)).map((r) => r.body as MessagesRequest);
      const planCall = requests
        .flatMap((r) => r.messages)
        .flatMap((m) => blocks(m.content))
        .find((b) => b.type === "tool_use" && b.name === TOOL("plan")) as
        | (Block & { input?: { seed_plan?: string } })
        | undefined;
      expect(planCall?.input?.seed_plan).toBe(SEED);
      const results = toolResults(requests.at(-1) ?? { messages: [] });
      expect(results.find((r) => r.name === TOOL("plan"))?.text).toContain("refining the draft");
      const waited = results.filter((r) => r.name === TOOL("wait_for_plan")).at(-1);
      expect(waited?.text).toContain(plan.content.trim());
    } finally {
      run.child.kill();
    }
  }, 300_000);
});
