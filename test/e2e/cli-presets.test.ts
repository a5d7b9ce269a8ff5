import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  PRESET_NAMES,
  type PresetName,
  presetInstruction,
  presetLaunch,
} from "../../local-client/handoff/presets.ts";
import { hiddenCharactersIn, readableText } from "../../src/protocol/index.ts";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { type AgentRecord, agentStandIn, pathWith } from "../support/agent-stand-in.ts";
import {
  HIDDEN_TEXT_PLAN,
  HIDDEN_TEXT_PLAN_MARKS,
  HIDDEN_TEXT_SESSION,
} from "../worker/review-fixtures.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * `--on-teleport <preset>` end to end: the real CLI against `wrangler dev` (offline planner), the
 * plan teleported over the HTTP API as the review page does, and a stand-in for each agent on
 * PATH that records the argv, stdin, working directory and environment it was started with.
 */

const TOKEN = "e2e-presets-token";
const suite = offlineWorkerSuite(TOKEN, "planport-e2e-presets-", {
  PLANPORT_ALLOW_SCRIPTED: "true",
});

/** Each agent's own flags for "implement here", as its --help documents them. */
const IMPLEMENT_HERE_HEAD: { [name in PresetName]: string[] } = {
  claude: ["--continue", "--"],
  codex: ["resume", "--last"],
  gemini: ["--resume", "latest", "--prompt-interactive"],
  aider: ["--restore-chat-history", "--read"],
  opencode: ["--continue", "--prompt"],
};

/** `planport plan … --on-teleport <onTeleport>` with PATH = `bin` plus what node needs. */
async function planAndTeleport(onTeleport: string, bin: string, beforeTeleport = () => {}) {
  const home = isolatedHome();
  const run = startCli(
    [
      "plan",
      "add GitHub OAuth login next to the password login",
      "--repo",
      suite.repo,
      "--server",
      suite.worker.url,
      "--token",
      TOKEN,
      "--interval",
      "500ms",
      "--json",
      "--on-teleport",
      onTeleport,
    ],
    { env: { ...home.env, PATH: pathWith(bin) } },
  );
  await run.waitForStdout('"event":"session"', 60_000);
  const id = String(ndjson(run.stdout())[0]?.id);
  const call = await waitForPlan(suite.api, id);
  await run.waitForStdout('"phase":"plan_ready"', 30_000);
  beforeTeleport();
  await suite.api.decide(id, { tool_use_id: call, decision: "teleport" });
  const result = await run.done;
  const outcome = ndjson(result.stdout).find((l) => l.event === "outcome");
  return { ...result, home, outcome };
}

describe("--on-teleport presets against wrangler dev (offline planner)", () => {
  for (const name of PRESET_NAMES) {
    it(`${name}: starts the agent with its own flags and the plan as the first instruction`, async () => {
      const { bin, record } = agentStandIn(name);
      const { code, stderr, outcome } = await planAndTeleport(name, bin);
      expect(code, stderr).toBe(0);
      const planFile = String(outcome?.plan_file);
      const plan = String(outcome?.plan);
      expect(existsSync(planFile)).toBe(true);
      const seen = JSON.parse(readFileSync(record, "utf8")) as AgentRecord;
      // Without a terminal the hand-off is "implement here" (PLANPORT_FRESH_CONTEXT=0).
      const expected = presetLaunch(name as PresetName, { plan, planFile, fresh: false });
      expect(seen.argv).toEqual(expected.args);
      expect(seen.argv.slice(0, IMPLEMENT_HERE_HEAD[name as PresetName].length)).toEqual(
        IMPLEMENT_HERE_HEAD[name as PresetName],
      );
      expect(seen.fresh).toBe("0");
      expect(seen.planFile).toBe(planFile);
      expect(seen.cwd).toBe(suite.repo);
      // The agent's stdin is the terminal's (here the CLI's empty one), not the plan.
      expect(seen.stdin).toBe("");
      const joined = seen.argv.join("\n");
      if (name === "aider") {
        expect(seen.argv).toContain(planFile);
      } else {
        expect(joined).toContain(plan.trim());
      }
    }, 180_000);
  }

  it("a hostile plan reaches a preset's argv, --on-teleport's stdin, the plan file and --json as the review page shows it (issue 30)", async () => {
    const shown = readableText(HIDDEN_TEXT_PLAN);
    const { bin, record } = agentStandIn("claude");
    const stdinCopy = join(bin, "stdin.md");
    for (const onTeleport of ["claude", `cat > ${stdinCopy}`]) {
      const session = await suite.api.createSession(HIDDEN_TEXT_SESSION);
      const call = await waitForPlan(suite.api, session.id);
      const run = startCli(
        [
          "attach",
          session.id,
          "--server",
          suite.worker.url,
          "--token",
          TOKEN,
          "--interval",
          "500ms",
          "--json",
          "--repo",
          suite.repo,
          "--on-teleport",
          onTeleport,
        ],
        { env: { ...isolatedHome().env, PATH: pathWith(bin) } },
      );
      await run.waitForStdout('"phase":"plan_ready"', 60_000);
      await suite.api.decide(session.id, { tool_use_id: call, decision: "teleport" });
      const { code, stderr, stdout } = await run.done;
      expect(code, stderr).toBe(0);
      const outcome = ndjson(stdout).find((l) => l.event === "outcome");
      const planFile = String(outcome?.plan_file);
      if (onTeleport === "claude") {
        const seen = JSON.parse(readFileSync(record, "utf8")) as AgentRecord;
        for (const mark of HIDDEN_TEXT_PLAN_MARKS) expect(seen.argv.at(-1)).toContain(mark);
        expect(hiddenCharactersIn(seen.argv.join("\n"))).toEqual([]);
        expect(seen.argv.at(-1)).toBe(presetInstruction(shown, planFile, "inline"));
      } else {
        expect(readFileSync(stdinCopy, "utf8")).toBe(shown);
      }
      expect(readFileSync(planFile, "utf8")).toBe(shown);
      expect(outcome?.plan).toBe(shown);
    }
  }, 240_000);

  it("a preset that is not installed is refused before any work: exit 2, names the package, no session", async () => {
    const empty = mkdtempSync(join(tmpdir(), "planport-no-agent-"));
    const before = (await suite.api.listSessions({ limit: 100 })).data.length;
    const args = ["plan", "add OAuth", "--repo", suite.repo, "--json", "--on-teleport", "codex"];
    const { code, stdout } = await startCli(
      [...args, "--server", suite.worker.url, "--token", TOKEN],
      { env: { ...isolatedHome().env, PATH: pathWith(empty) } },
    ).done;
    expect(code).toBe(2);
    expect(ndjson(stdout)).toEqual([
      {
        event: "error",
        reason: "usage",
        message:
          "codex is not installed (no `codex` on PATH). Install it with: npm i -g @openai/codex",
        session_id: null,
        reject_count: 0,
      },
    ]);
    expect((await suite.api.listSessions({ limit: 100 })).data).toHaveLength(before);
  }, 60_000);

  it("an agent uninstalled while the plan is awaited: names the package, keeps the plan file, exits 1", async () => {
    const { bin } = agentStandIn("codex");
    const { code, stderr, outcome } = await planAndTeleport("codex", bin, () =>
      rmSync(join(bin, "codex")),
    );
    expect(code).toBe(1);
    expect(stderr).toContain("codex is not installed");
    expect(stderr).toContain("npm i -g @openai/codex");
    const planFile = String(outcome?.plan_file);
    expect(stderr).toContain(planFile);
    expect(readFileSync(planFile, "utf8").trim()).toBe(String(outcome?.plan).trim());
  }, 180_000);
});
