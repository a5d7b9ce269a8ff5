import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { waitForPlan } from "../client/fixture-repo.ts";
import { hostileRepo } from "../client/hostile-repo.ts";
import { isolatedHome, ndjson, PLANPORT_BIN, startCli } from "../client/run-cli.ts";
import { offlineWorkerSuite } from "./offline-worker.ts";

/**
 * `planport plan` and the MCP `plan` tool, the real CLI against `wrangler dev` (offline
 * planner), on a repository whose `.git/` came from someone else and names a command for every
 * key git may run one from (test/client/hostile-repo.ts): the repository is snapshotted and
 * planned, and none of them runs.
 */

const TOKEN = "e2e-hostile-repo-token";
const TASK = "add GitHub OAuth login next to the password login";
const suite = offlineWorkerSuite(TOKEN, "planport-e2e-hostile-repo-");

describe("planning a repository whose configuration names commands", () => {
  it("planport plan snapshots and plans it, running none of them", async () => {
    const hostile = hostileRepo();
    const home = isolatedHome();
    const run = startCli(
      [
        "plan",
        TASK,
        "--repo",
        hostile.repo,
        "--server",
        suite.worker.url,
        "--token",
        TOKEN,
        "--interval",
        "500ms",
        "--json",
      ],
      { env: home.env },
    );
    await run.waitForStdout('"event":"session"', 60_000);
    const id = String(ndjson(run.stdout())[0]?.id);
    const call = await waitForPlan(suite.api, id);
    await run.waitForStdout('"phase":"plan_ready"', 30_000);
    await suite.api.decide(id, { tool_use_id: call, decision: "teleport" });
    const { code, stdout, stderr } = await run.done;
    expect(hostile.ran()).toEqual([]);
    expect(code, stderr).toBe(0);
    // Planned from the snapshot: the offline planner found the login code.
    expect(String(ndjson(stdout).at(-1)?.plan)).toContain("src/auth/login.ts");
  }, 120_000);

  it("the MCP plan tool, from a subfolder, snapshots and plans it, running none of them", async () => {
    const hostile = hostileRepo();
    const home = isolatedHome();
    const env = { ...home.env, PLANPORT_URL: suite.worker.url, PLANPORT_TOKEN: TOKEN };
    const client = new Client({ name: "planport-e2e-hostile", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [PLANPORT_BIN, "mcp"],
        env: Object.fromEntries(
          Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
        ),
        cwd: hostile.repo,
        stderr: "pipe",
      }),
    );
    try {
      const started = (await client.callTool({
        name: "plan",
        arguments: { task: TASK, repo: join(hostile.repo, "src", "auth") },
      })) as CallToolResult;
      const text = started.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
      expect(started.isError, text).toBeFalsy();
      const id = /\bses_[0-9a-z]{26}\b/.exec(text)?.[0] ?? "";
      await waitForPlan(suite.api, id);
      expect(hostile.ran()).toEqual([]);
      await suite.api.archive(id);
    } finally {
      await client.close();
    }
  }, 120_000);
});
