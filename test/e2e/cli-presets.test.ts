import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PRESET_NAMES, type PresetName, presetLaunch } from "../../local-client/handoff/presets.ts";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, ndjson, startCli } from "../client/run-cli.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * `--on-teleport <preset>` end to end: the real CLI against `wrangler dev` (offline planner), the
 * plan teleported over the HTTP API as the review page does, and a stand-in for each agent on
 * PATH that records the argv, stdin, working directory and environment it was started with.
 */

const TOKEN = "e2e-presets-token";
const suite = offlineWorkerSuite(TOKEN, "planport-e2e-presets-");

/** Each agent's own flags for "implement here", as its --help documents them. */
const IMPLEMENT_HERE_HEAD: { [name in PresetName]: string[] } = {
  claude: ["--continue", "--"],
  codex: ["resume", "--last"],
  gemini: ["--resume", "latest", "--prompt-interactive"],
  aider: ["--restore-chat-history", "--read"],
  opencode: ["--continue", "--prompt"],
};

interface Record {
  argv: string[];
  stdin: string;
  cwd: string;
  planFile: string;
  fresh: string;
}

/** A folder with an executable stand-in named like the agent; returns it and its record file. */
function standIn(name: string): { bin: string; record: string } {
  const bin = mkdtempSync(join(tmpdir(), "planport-agent-"));
  const record = join(bin, "record.json");
  const script = join(bin, name);
  writeFileSync(
    script,
    `#!${process.execPath}
const fs = require("node:fs");
fs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({
  argv: process.argv.slice(2),
  stdin: fs.readFileSync(0, "utf8"),
  cwd: process.cwd(),
  planFile: process.env.PLANPORT_PLAN_FILE,
  fresh: process.env.PLANPORT_FRESH_CONTEXT,
}));
`,
  );
  chmodSync(script, 0o755);
  return { bin, record };
}

/** PATH = `bin` plus what node and git need. */
const pathWith = (bin: string) => `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`;

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
      const { bin, record } = standIn(name);
      const { code, stderr, outcome } = await planAndTeleport(name, bin);
      expect(code, stderr).toBe(0);
      const planFile = String(outcome?.plan_file);
      const plan = String(outcome?.plan);
      expect(existsSync(planFile)).toBe(true);
      const seen = JSON.parse(readFileSync(record, "utf8")) as Record;
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
    const { bin } = standIn("codex");
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
