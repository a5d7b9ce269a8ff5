import { delimiter } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScriptedResponse } from "../client/anthropic-double-types.ts";
import { candidateOf, type GeminiDouble, startGeminiDouble } from "../client/gemini-double.ts";
import { isolatedHome, planportOnPath } from "../client/run-cli.ts";
import { eventually } from "../support/eventually.ts";
import { ensureGeminiCli, geminiEnv, geminiHome } from "../support/gemini.ts";
import {
  readmeGeminiHeadless,
  readmeGeminiPolicy,
  readmeGeminiSettings,
} from "../support/readme-setups.ts";
import {
  sessionIdIn,
  sessionStartedBy,
  startAgent,
  stillWaiting,
  teleportWhenReady,
} from "./agent-round-trip.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * planport's MCP server in the real Gemini CLI (0.61.0, installed on demand into the test cache:
 * test/support/gemini.ts), configured exactly as README.md says (the settings.json, the policy
 * file and the headless `gemini … -p` line are read from it), against `wrangler dev` with the
 * offline planner. Gemini's model is the Gemini API double (GOOGLE_GEMINI_BASE_URL), playing an
 * agent asked to plan with planport: it calls `plan`, then `wait_for_plan` until it returns
 * something else. The test plays the reviewer from outside over the HTTP API and reads what
 * Gemini sent its model next.
 */

const TOKEN = "e2e-gemini-token";
/** How Gemini CLI 0.61.0 names an MCP server's tools to its model. */
const TOOL = (name: string) => `mcp_planport_${name}`;
const TASK = "add GitHub OAuth login next to the password login";

const gemini = await ensureGeminiCli();
// Only a machine that has neither the cache nor a way to install it skips; CI always runs it.
const skip = !gemini.ok && process.env.CI !== "true";
if (!gemini.ok)
  console.warn(`gemini-mcp.test.ts: ${skip ? "skipped" : "cannot run"}: ${gemini.reason}`);

type Part = {
  text?: string;
  functionCall?: { name: string; args?: Record<string, unknown> };
  functionResponse?: { name: string; response?: unknown };
};
type GeminiRequest = {
  contents: { role: string; parts: Part[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
};

/** Every string inside a value, joined: a functionResponse's text, whatever its wrapping. */
function textsOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(textsOf).join("\n");
  if (typeof value === "object" && value !== null)
    return Object.values(value).map(textsOf).join("\n");
  return "";
}

/** Every tool call of the conversation so far, with its result once there is one. */
function toolCalls(req: GeminiRequest) {
  const calls: { name: string; args: Record<string, unknown>; result?: string }[] = [];
  for (const content of req.contents) {
    for (const part of content.parts) {
      if (part.functionCall)
        calls.push({ name: part.functionCall.name, args: part.functionCall.args ?? {} });
      if (part.functionResponse) {
        const call = calls.findLast(
          (c) => c.name === part.functionResponse?.name && c.result === undefined,
        );
        if (call) call.result = textsOf(part.functionResponse.response);
      }
    }
  }
  return calls;
}

/** The planport tools the request offers the model. */
function planportTools(req: GeminiRequest): string[] {
  return (req.tools ?? [])
    .flatMap((t) => t.functionDeclarations ?? [])
    .map((f) => f.name)
    .filter((n) => n.startsWith(TOOL("")));
}

/** Whether a request is the agent's conversation (not a side request such as a title). */
function isConversation(req: GeminiRequest): boolean {
  return (req.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0);
}

const reply = (body: unknown): ScriptedResponse => ({ status: 200, body });
const say = (text: string) => reply(candidateOf([{ text }]));
const use = (name: string, args: Record<string, unknown>) =>
  reply(candidateOf([{ functionCall: { name: TOOL(name), args } }]));

/** The agent the double plays, read off the request (the tool results so far). */
function agent(req: GeminiRequest): ScriptedResponse {
  if (!isConversation(req)) return say("{}");
  if (!planportTools(req).includes(TOOL("plan"))) return say("planport's tools are not available.");
  const calls = toolCalls(req);
  const last = calls.at(-1);
  if (!last) return use("plan", { task: TASK });
  const sessionId = sessionIdIn(calls.find((c) => c.name === TOOL("plan"))?.result ?? "");
  if (
    last.name === TOOL("plan") ||
    (last.name === TOOL("wait_for_plan") && stillWaiting(last.result ?? ""))
  ) {
    if (!sessionId) return say(`The plan tool failed: ${last.result}`);
    // Short waits, so the conversation also shows the "still waiting → call again" loop.
    return use("wait_for_plan", { session_id: sessionId, timeout_s: 2 });
  }
  return say("The plan is here; implementing it now.");
}

describe.skipIf(skip)("planport in the real Gemini CLI, set up as the README says", () => {
  const suite = offlineWorkerSuite(TOKEN, "planport-e2e-gemini-");
  let double: GeminiDouble;
  beforeAll(async () => {
    double = await startGeminiDouble();
  });
  afterAll(async () => {
    await double?.close();
  });

  /** `gemini <args>` in the fixture repository, its model on `lane`, planport on PATH. */
  function runGemini(lane: string, args: string[]) {
    if (!gemini.ok) throw new Error(gemini.reason);
    const home = geminiHome({
      userSettings: readmeGeminiSettings(),
      policies: { "planport.toml": readmeGeminiPolicy() },
      trusted: [suite.repo],
    });
    const env = geminiEnv({
      home,
      geminiBaseUrl: `${double.url}/t/${lane}`,
      extra: {
        // README's settings run `planport` by name, as a global install provides it.
        PATH: `${planportOnPath()}${delimiter}${process.env.PATH ?? ""}`,
        // From the user's shell; PLANPORT_TOKEN reaches `planport mcp` only because the
        // README's settings allow it past Gemini's redaction of secret-looking names.
        PLANPORT_URL: suite.worker.url,
        PLANPORT_TOKEN: TOKEN,
        PLANPORT_HOME: String(isolatedHome().env.PLANPORT_HOME),
      },
    });
    return startAgent(gemini.bin, args, { cwd: suite.repo, env });
  }

  async function asked(lane: string): Promise<string> {
    return (await double.received(lane))
      .map((r) => {
        const b = r.body as GeminiRequest;
        return JSON.stringify({ tools: planportTools(b), calls: toolCalls(b) });
      })
      .join("\n---\n");
  }

  it("gemini -p: plan, wait_for_plan until the review ends, and the plan sent here reaches the model", async () => {
    const lane = "round-trip";
    double.respond(lane, (body) => agent(body as GeminiRequest));
    const since = Date.now();
    const run = runGemini(lane, readmeGeminiHeadless());
    try {
      const id = await sessionStartedBy(run, suite.api, since, () => asked(lane));
      await eventually(async () =>
        (await double.received(lane)).some((r) =>
          toolCalls(r.body as GeminiRequest).some(
            (c) => c.name === TOOL("wait_for_plan") && stillWaiting(c.result ?? ""),
          ),
        ),
      );
      await teleportWhenReady(suite.api, id);
      const { code, stdout, stderr } = await run.done;
      expect(code, `${stdout}\n${stderr}\n${await asked(lane)}`).toBe(0);

      const plan = (await suite.api.plan(id)).content.trim();
      expect(plan.length).toBeGreaterThan(100);
      const requests = (await double.received(lane))
        .map((r) => r.body as GeminiRequest)
        .filter(isConversation);
      expect(planportTools(requests[0] as GeminiRequest)).toEqual(
        expect.arrayContaining([TOOL("plan"), TOOL("wait_for_plan"), TOOL("status"), TOOL("list")]),
      );
      const calls = toolCalls(requests.at(-1) as GeminiRequest);
      expect(calls.map((c) => c.name)).toEqual([
        TOOL("plan"),
        ...calls.slice(1).map(() => TOOL("wait_for_plan")),
      ]);
      expect(calls.length).toBeGreaterThanOrEqual(3);
      expect(calls[0]?.result).toContain(id);
      const waited = calls.at(-1)?.result ?? "";
      expect(waited).toContain("Implement this plan here");
      expect(waited).toContain(plan);
      // The model passed no repo: the snapshot came from the folder Gemini started planport in.
      expect(plan).toContain("src/auth/login.ts");
      expect((await suite.api.getSession(id)).outcome).toMatchObject({ kind: "teleport" });
      expect(stdout).toContain("The plan is here; implementing it now.");
    } finally {
      run.child.kill();
    }
  }, 300_000);

  it("without the run's --allowed-tools, a headless gemini is not offered plan; the read-only tools need no approval", async () => {
    const lane = "no-approval";
    double.respond(lane, (body) => {
      const req = body as GeminiRequest;
      if (!isConversation(req)) return say("{}");
      const calls = toolCalls(req);
      if (calls.length === 0) return use("list", { limit: 5 });
      return say(`offered: ${planportTools(req).join(", ")}`);
    });
    const args = readmeGeminiHeadless();
    const allowed = args.indexOf("--allowed-tools");
    expect(args[allowed + 1]).toBe(TOOL("plan"));
    const { code, stdout, stderr } = await runGemini(lane, [
      ...args.slice(0, allowed),
      ...args.slice(allowed + 2),
    ]).done;
    expect(code, `${stdout}\n${stderr}\n${await asked(lane)}`).toBe(0);
    const requests = (await double.received(lane))
      .map((r) => r.body as GeminiRequest)
      .filter(isConversation);
    const last = requests.at(-1) as GeminiRequest;
    expect(planportTools(last)).toContain(TOOL("wait_for_plan"));
    expect(planportTools(last)).not.toContain(TOOL("plan"));
    const calls = toolCalls(last);
    expect(calls.map((c) => c.name)).toEqual([TOOL("list")]);
    expect(calls[0]?.result).toMatch(/\bses_|No planport sessions yet/);
  }, 300_000);
});
