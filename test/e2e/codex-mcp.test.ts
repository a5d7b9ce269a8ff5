import { delimiter } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScriptedResponse } from "../client/anthropic-double-types.ts";
import {
  functionCall,
  messageItem,
  type ResponsesDouble,
  responseOf,
  startResponsesDouble,
} from "../client/responses-double.ts";
import { isolatedHome, planportOnPath } from "../client/run-cli.ts";
import { codexEnv, codexHome, ensureCodex } from "../support/codex.ts";
import { eventually } from "../support/eventually.ts";
import { readmeCodexConfig, readmeCodexExec } from "../support/readme-setups.ts";
import {
  sessionIdIn,
  sessionStartedBy,
  startAgent,
  stillWaiting,
  teleportWhenReady,
} from "./agent-round-trip.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * planport's MCP server in the real Codex CLI (0.169.0, installed on demand into the test cache:
 * test/support/codex.ts), configured exactly as README.md says (the `[mcp_servers.planport]`
 * table and the unattended `codex exec` line are read from it), against `wrangler dev` with the
 * offline planner. Codex's model is the Responses API double, playing an agent asked to plan
 * with planport: it calls `plan`, then `wait_for_plan` until it returns something else. The test
 * plays the reviewer from outside: it sends the plan to the waiting agent over the HTTP API and
 * reads what Codex sent its model next.
 */

const TOKEN = "e2e-codex-token";
/** How Codex 0.169.0 offers an MCP server's tools: one namespace tool per server. */
const NAMESPACE = "mcp__planport";
const TASK = "add GitHub OAuth login next to the password login";

const codex = await ensureCodex();
// Only a machine that has neither the cache nor a way to install it skips; CI always runs it.
const skip = !codex.ok && process.env.CI !== "true";
if (!codex.ok)
  console.warn(`codex-mcp.test.ts: ${skip ? "skipped" : "cannot run"}: ${codex.reason}`);

type Tool = { type: string; name?: string; tools?: { name: string }[] };
type Item = {
  type?: string;
  role?: string;
  call_id?: string;
  name?: string;
  namespace?: string;
  arguments?: string;
  output?: string | { type: string; text?: string }[];
};
type ResponsesRequest = { tools?: Tool[]; input: Item[] };

/** The text of a function_call_output (Codex sends a list: "Wall time…", then the result). */
function outputText(item: Item): string {
  if (typeof item.output === "string") return item.output;
  return (item.output ?? []).map((c) => c.text ?? "").join("\n");
}

/** Every tool call of the conversation so far, with its result once there is one. */
function toolCalls(req: ResponsesRequest) {
  const calls = new Map<
    string,
    { name: string; namespace?: string; args: string; result?: string }
  >();
  for (const item of req.input) {
    if (item.type === "function_call" && item.call_id) {
      calls.set(item.call_id, {
        name: item.name ?? "?",
        namespace: item.namespace,
        args: item.arguments ?? "",
      });
    }
    if (item.type === "function_call_output" && item.call_id) {
      const call = calls.get(item.call_id);
      if (call) call.result = outputText(item);
    }
  }
  return [...calls.values()];
}

/** The planport tools the request offers the model. */
function planportTools(req: ResponsesRequest): string[] {
  const ns = (req.tools ?? []).find((t) => t.type === "namespace" && t.name === NAMESPACE);
  return (ns?.tools ?? []).map((t) => t.name);
}

const reply = (body: unknown): ScriptedResponse => ({ status: 200, body });
const say = (text: string) => reply(responseOf([messageItem(text)]));
const use = (name: string, args: unknown) =>
  reply(responseOf([functionCall(name, args, NAMESPACE)]));

/**
 * The agent the double plays: what a model asked to plan with planport does next, read off
 * the request (the tool results so far).
 */
function agent(req: ResponsesRequest): ScriptedResponse {
  if (!planportTools(req).includes("plan")) return say("planport's tools are not available.");
  const calls = toolCalls(req);
  const last = calls.at(-1);
  if (!last) return use("plan", { task: TASK });
  const sessionId = sessionIdIn(calls.find((c) => c.name === "plan")?.result ?? "");
  if (last.name === "plan" || (last.name === "wait_for_plan" && stillWaiting(last.result ?? ""))) {
    if (!sessionId) return say(`The plan tool failed: ${last.result}`);
    // Short waits, so the conversation also shows the "still waiting → call again" loop.
    return use("wait_for_plan", { session_id: sessionId, timeout_s: 2 });
  }
  return say("The plan is here; implementing it now.");
}

describe.skipIf(skip)("planport in the real Codex CLI, set up as the README says", () => {
  const suite = offlineWorkerSuite(TOKEN, "planport-e2e-codex-");
  let double: ResponsesDouble;
  beforeAll(async () => {
    double = await startResponsesDouble();
  });
  afterAll(async () => {
    await double?.close();
  });

  /** `codex <args>` in the fixture repository, its model on `lane`, planport on PATH. */
  function runCodex(lane: string, args: string[]) {
    if (!codex.ok) throw new Error(codex.reason);
    const home = codexHome({
      responsesBaseUrl: `${double.url}/t/${lane}/v1`,
      userConfig: readmeCodexConfig(),
    });
    const planportHome = isolatedHome();
    const env = codexEnv({
      codexHome: home,
      extra: {
        // README's config runs `planport` by name, as a global install provides it.
        PATH: `${planportOnPath()}${delimiter}${process.env.PATH ?? ""}`,
        // Passed on to `planport mcp` by the README's env_vars, as from the user's shell.
        PLANPORT_URL: suite.worker.url,
        PLANPORT_TOKEN: TOKEN,
        // Not passed on (Codex gives MCP servers a minimal environment): the server's state
        // goes under HOME, which Codex does pass.
        PLANPORT_HOME: String(planportHome.env.PLANPORT_HOME),
      },
    });
    return startAgent(codex.bin, args, { cwd: suite.repo, env });
  }

  async function asked(lane: string): Promise<string> {
    return (await double.received(lane))
      .map((r) => {
        const b = r.body as ResponsesRequest;
        return JSON.stringify({ tools: planportTools(b), calls: toolCalls(b) });
      })
      .join("\n---\n");
  }

  it("codex exec: plan, wait_for_plan until the review ends, and the plan sent here reaches the model", async () => {
    const lane = "round-trip";
    double.respond(lane, (body) => agent(body as ResponsesRequest));
    const since = Date.now();
    const run = runCodex(lane, readmeCodexExec());
    try {
      const id = await sessionStartedBy(run, suite.api, since, () => asked(lane));
      // The agent is told the plan is still under review at least once, and calls again.
      await eventually(async () =>
        (await double.received(lane)).some((r) =>
          toolCalls(r.body as ResponsesRequest).some(
            (c) => c.name === "wait_for_plan" && stillWaiting(c.result ?? ""),
          ),
        ),
      );
      await teleportWhenReady(suite.api, id);
      const { code, stdout, stderr } = await run.done;
      expect(code, `${stdout}\n${stderr}`).toBe(0);

      const plan = (await suite.api.plan(id)).content.trim();
      expect(plan.length).toBeGreaterThan(100);
      const requests = (await double.received(lane)).map((r) => r.body as ResponsesRequest);
      // Codex streamed every turn, and offered planport's tools from the first request on
      // (required = true: it waited for the server).
      expect(requests.every((r) => (r as { stream?: boolean }).stream === true)).toBe(true);
      expect(planportTools(requests[0] as ResponsesRequest)).toEqual(
        expect.arrayContaining(["plan", "wait_for_plan", "status", "list", "stop", "pull_changes"]),
      );
      const calls = toolCalls(requests.at(-1) as ResponsesRequest);
      expect(calls.map((c) => c.name)).toEqual([
        "plan",
        ...calls.slice(1).map(() => "wait_for_plan"),
      ]);
      expect(calls.length).toBeGreaterThanOrEqual(3);
      expect(calls.every((c) => c.namespace === NAMESPACE)).toBe(true);
      expect(calls[0]?.result).toContain(id);
      const waited = calls.at(-1)?.result ?? "";
      expect(waited).toContain("Implement this plan here");
      expect(waited).toContain(plan);
      // The model passed no repo: the snapshot came from the folder Codex started planport in.
      expect(plan).toContain("src/auth/login.ts");
      expect((await suite.api.getSession(id)).outcome).toMatchObject({ kind: "teleport" });
      expect(stdout).toContain("The plan is here; implementing it now.");
    } finally {
      run.child.kill();
    }
  }, 300_000);

  it("without the run's approval, codex exec is refused plan; the read-only tools need none", async () => {
    const lane = "no-approval";
    let turn = 0;
    double.respond(lane, (body) => {
      const req = body as ResponsesRequest;
      turn += 1;
      if (turn === 1) return use("list", { limit: 5 });
      if (turn === 2) return use("plan", { task: TASK });
      return say(
        `done: ${toolCalls(req)
          .map((c) => c.name)
          .join(", ")}`,
      );
    });
    const args = readmeCodexExec();
    // The README's run without its `-c …approval_mode="approve"`.
    const approval = args.indexOf("-c");
    expect(args[approval + 1]).toBe('mcp_servers.planport.tools.plan.approval_mode="approve"');
    const { code, stdout, stderr } = await runCodex(lane, [
      ...args.slice(0, approval),
      ...args.slice(approval + 2),
    ]).done;
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const calls = toolCalls((await double.received(lane)).at(-1)?.body as ResponsesRequest);
    expect(calls.map((c) => c.name)).toEqual(["list", "plan"]);
    expect(calls[0]?.result).toMatch(/\bses_|No planport sessions yet/);
    expect(calls[0]?.result).not.toContain("approval");
    expect(calls[1]?.result).toContain(
      "MCP tool call requires approval, but approval policy is never",
    );
  }, 300_000);
});
