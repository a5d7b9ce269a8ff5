import { describe, expect, it } from "vitest";
import { ExecutorClient } from "../../src/execution/client.ts";
import { executionFor } from "../../src/execution/executor.ts";
import { type EngineState, INITIAL_ENGINE_STATE } from "../../src/planner/engine-state.ts";
import { decidePermission } from "../../src/planner/permissions.ts";
import type { SessionCommands } from "../../src/planner/port.ts";
import { mainScope, runToolCalls } from "../../src/planner/tool-calls.ts";
import { describeRun } from "../../src/planner/tools/bash-report.ts";
import { toolSpecsFor } from "../../src/planner/tools/index.ts";
import {
  isTestCommand,
  type PermissionMode,
  type RunResult,
  type ToolUseBlock,
} from "../../src/protocol/index.ts";
import { refuseWithoutExecutor } from "../../src/session/commands.ts";
import { MemoryPort } from "../support/memory-port.ts";

/**
 * The `Bash` tool's rules and its session side, with the executor replaced where a test needs
 * a command's result: the permission check, the catalogue, how a run lands in the overlay and
 * the record of test runs, what the model reads, and the executor client's handling of hostile
 * answers. Real commands in real containers: test/e2e/cloud-execution.test.ts.
 */

const PLAN = "/plans/bold-eagle.md";

function result(overrides: Partial<RunResult> = {}): RunResult {
  return {
    exit_code: 0,
    timed_out: false,
    duration_ms: 12,
    stdout: { text: "ok\n", bytes: 3, cut: false },
    stderr: { text: "", bytes: 0, cut: false },
    changes: [],
    ...overrides,
  };
}

/**
 * TEST DOUBLE of the session's executor: answers each command with the next canned result and
 * keeps what it was asked (the real executor is exercised in test/e2e/cloud-execution.test.ts).
 */
function cannedCommands(results: RunResult[]): SessionCommands & { asked: [string, number][] } {
  const asked: [string, number][] = [];
  return {
    where: "the test's executor",
    asked,
    async run(command, timeoutMs) {
      asked.push([command, timeoutMs]);
      const next = results.shift();
      if (next === undefined) throw new Error("no more canned results");
      return next;
    },
  };
}

class ModePort extends MemoryPort {
  mode: PermissionMode = "default";
  override permissionMode(): PermissionMode {
    return this.mode;
  }
}

function call(input: Record<string, unknown>, id = "toolu_bash_1"): ToolUseBlock {
  return { type: "tool_use", id, name: "Bash", input };
}

async function runBash(port: MemoryPort, input: Record<string, unknown>) {
  let state: EngineState = INITIAL_ENGINE_STATE;
  const cell = { get: () => state, set: (next: EngineState) => (state = next) };
  const run = await runToolCalls(port, [call(input)], mainScope(cell, false));
  const event = run.appended[0] as unknown as {
    message: { content: { content: string; is_error: boolean }[] };
    permission_denied?: boolean;
  };
  const block = event.message.content[0]!;
  return { text: block.content, isError: block.is_error, denied: event.permission_denied === true };
}

describe("Bash: where the permission check allows it", () => {
  const decide = (mode: PermissionMode, runsCommands: boolean, agent?: "subagent") =>
    decidePermission({
      mode,
      tool: "Bash",
      input: { command: "npm test" },
      planPath: PLAN,
      runsCommands,
      ...(agent && { agent }),
    });

  it("is refused in plan mode, whatever else is true, with a reason that says what to do", () => {
    const denied = decide("plan", true);
    expect(denied.behavior).toBe("deny");
    expect(denied).toMatchObject({ reason: expect.stringContaining("Plan mode is active") });
    expect(decide("plan", false).behavior).toBe("deny");
  });

  it("is allowed after approval only where commands can run", () => {
    expect(decide("default", true)).toEqual({ behavior: "allow" });
    expect(decide("acceptEdits", true)).toEqual({ behavior: "allow" });
    expect(decide("default", false)).toMatchObject({
      behavior: "deny",
      reason: expect.stringContaining("PLANPORT_EXECUTION=overlay"),
    });
  });

  it("is refused to a subagent in every mode, and with an input that is not an object", () => {
    for (const mode of ["plan", "default", "acceptEdits"] as const)
      expect(decide(mode, true, "subagent").behavior).toBe("deny");
    expect(
      decidePermission({
        mode: "default",
        tool: "Bash",
        input: "npm test",
        planPath: PLAN,
        runsCommands: true,
      }).behavior,
    ).toBe("deny");
  });

  it("is offered last after approval where commands run, and never while planning", () => {
    const names = (mode: PermissionMode, runs: boolean) =>
      toolSpecsFor("simple", mode, runs).map((s) => s.name);
    expect(names("plan", true)).not.toContain("Bash");
    expect(names("default", false)).not.toContain("Bash");
    expect(names("default", true).at(-1)).toBe("Bash");
    expect(
      toolSpecsFor("deep", "acceptEdits", true)
        .map((s) => s.name)
        .slice(-2),
    ).toEqual(["Task", "Bash"]);
    const spec = toolSpecsFor("simple", "default", true).at(-1)!;
    expect(Object.keys((spec.input_schema as { properties: object }).properties)).toEqual([
      "command",
      "timeout",
      "description",
    ]);
  });

  it("a plan-mode call runs nothing: the executor is never asked", async () => {
    const commands = cannedCommands([result()]);
    const port = new ModePort({ files: { "a.txt": "a\n" }, commands });
    port.mode = "plan";
    const answer = await runBash(port, { command: "rm -rf /" });
    expect(answer.denied).toBe(true);
    expect(commands.asked).toEqual([]);
    expect(port.listOverlay()).toEqual([]);
  });
});

describe("Bash: a run lands in the overlay with its tool result", () => {
  it("writes created and changed files, deletes, records the run, and reports exit code 0", async () => {
    const commands = cannedCommands([
      result({
        changes: [
          { path: "a.txt", kind: "modified", content: "A\n" },
          { path: "gen/out.json", kind: "created", content: "{}\n" },
          { path: "old.md", kind: "deleted" },
        ],
      }),
    ]);
    const port = new ModePort({ files: { "a.txt": "a\n", "old.md": "x\n" }, commands });
    const answer = await runBash(port, { command: "npm test", timeout: 5_000 });
    expect(commands.asked).toEqual([["npm test", 5_000]]);
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain("Exit code 0");
    expect(answer.text).toContain("created gen/out.json");
    expect(port.readOverlay("a.txt")).toBe("A\n");
    expect(port.readOverlay("gen/out.json")).toBe("{}\n");
    expect(port.readOverlay("old.md")).toBeNull();
    expect(port.commandRuns).toEqual([
      {
        toolUseId: "toolu_bash_1",
        command: "npm test",
        exitCode: 0,
        timedOut: false,
        durationMs: 12,
      },
    ]);
  });

  it("uses the default timeout of 120,000 ms when none is given", async () => {
    const commands = cannedCommands([result()]);
    await runBash(new ModePort({ commands }), { command: "ls" });
    expect(commands.asked).toEqual([["ls", 120_000]]);
  });

  it("keeps out what no write may touch and what is not text, and says so", async () => {
    const commands = cannedCommands([
      result({
        exit_code: 1,
        changes: [
          { path: ".git/config", kind: "created", content: "[core]\n" },
          { path: "logo.png", kind: "created", skipped: "binary" },
          { path: "big.log", kind: "created", skipped: "too_large" },
          { path: "-rf", kind: "created", content: "" },
        ],
      }),
    ]);
    const port = new ModePort({ commands });
    const answer = await runBash(port, { command: "make" });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain("Exit code 1");
    expect(answer.text).toContain("logo.png (not text)");
    expect(answer.text).toContain("big.log (larger than 1 MiB)");
    expect(answer.text).toContain(".git/config (a path no change may touch)");
    expect(port.listOverlay()).toEqual([]);
  });

  it("refuses a timeout over 600,000 ms and an empty command without running anything", async () => {
    const commands = cannedCommands([]);
    const port = new ModePort({ commands });
    expect((await runBash(port, { command: "ls", timeout: 600_001 })).isError).toBe(true);
    expect((await runBash(port, { command: "" })).isError).toBe(true);
    expect(commands.asked).toEqual([]);
  });

  it("an executor that fails gives the model an error result and changes nothing", async () => {
    const port = new ModePort({
      commands: {
        where: "x",
        run: async () => {
          throw new Error("The local executor could not be reached: connection refused");
        },
      },
    });
    const answer = await runBash(port, { command: "npm test" });
    expect(answer.isError).toBe(true);
    expect(answer.text).toContain("connection refused");
    expect(port.commandRuns).toEqual([]);
  });

  it("without commands (overlay-only execution) the call is refused", async () => {
    const answer = await runBash(new ModePort({}), { command: "npm test" });
    expect(answer.denied).toBe(true);
    expect(answer.text).toContain("PLANPORT_EXECUTION=overlay");
  });
});

describe("what the model reads of a run", () => {
  it("says a timeout, a cut stream with its size, and stderr apart from stdout", () => {
    const text = describeRun(
      result({
        exit_code: null,
        timed_out: true,
        stdout: { text: "a".repeat(10), bytes: 200_000, cut: true },
        stderr: { text: "warning\n", bytes: 8, cut: false },
      }),
      { timeoutMs: 1_000, refused: [] },
    );
    expect(text).toContain("[stdout cut: the first 10 of 200000 bytes are shown]");
    expect(text).toContain("stderr:\nwarning");
    expect(text).toContain("Command timed out after 1000 ms and was stopped");
  });

  it("says when there was no output", () => {
    const text = describeRun(result({ stdout: { text: "", bytes: 0, cut: false } }), {
      timeoutMs: 1,
      refused: [],
    });
    expect(text).toBe("(no output)\n\nExit code 0");
  });
});

describe("which commands are test runs", () => {
  it.each([
    ["npm test", true],
    ["npm run test:unit", true],
    ["cd app && CI=1 npm test -- --run", true],
    ["npx vitest run", true],
    ["python3 -m pytest -q", true],
    ["pytest", true],
    ["go test ./...", true],
    ["cargo test", true],
    ["node --test", true],
    ["make test", true],
    ["timeout 60 yarn test", true],
    ["ls -la", false],
    ["npm install", false],
    ["make", false],
    ["cat test/a.test.ts", false],
    ["echo npm test", false],
  ])("%s → %s", (command, expected) => {
    expect(isTestCommand(command)).toBe(expected);
  });
});

describe("where commands run (the worker's configuration)", () => {
  it("overlay when asked, the local executor at a URL, and a refusal with the way out otherwise", () => {
    expect(executionFor({ PLANPORT_EXECUTION: "overlay" }, "ses_1", null).kind).toBe("overlay");
    expect(
      executionFor(
        { PLANPORT_EXECUTOR_URL: "http://127.0.0.1:9/", PLANPORT_EXECUTOR_TOKEN: "t" },
        "s",
        null,
      ).kind,
    ).toBe("commands");
    const none = executionFor({}, "ses_1", null);
    expect(none).toMatchObject({
      kind: "unavailable",
      reason: expect.stringContaining("planport executor"),
    });
    expect(executionFor({ PLANPORT_EXECUTION: "yes" }, "s", null)).toMatchObject({
      kind: "unavailable",
      reason: expect.stringContaining('"commands"'),
    });
    expect(executionFor({ PLANPORT_EXECUTOR_URL: "not a url" }, "s", null).kind).toBe(
      "unavailable",
    );
  });

  it("an approval without an executor is refused with 409 executor_unavailable, before anything starts", async () => {
    const refusal = await refuseWithoutExecutor(executionFor({}, "ses_1", null));
    expect(refusal).toMatchObject({
      ok: false,
      error: { status: 409, code: "executor_unavailable" },
    });
    expect(refusal?.error.message).toContain("Nothing was started");
    expect(await refuseWithoutExecutor({ kind: "overlay" })).toBeNull();
  });

  it("an executor whose health check says Docker is down refuses the approval with its reason", async () => {
    const client = new ExecutorClient(
      async () =>
        Response.json(
          { ok: false, executor: "docker", reason: "Docker is not available: nothing answers." },
          { status: 503 },
        ),
      "The local executor (Docker on this machine)",
    );
    const refusal = await refuseWithoutExecutor({ kind: "commands", client });
    expect(refusal?.error.message).toContain("Docker is not available: nothing answers.");
  });
});

describe("the executor client treats answers as hostile", () => {
  const client = (answer: () => Response | Promise<Response>) =>
    new ExecutorClient(async () => answer(), "The executor");
  const request = { command: "ls", timeout_ms: 1_000, files: [] };

  it("a run answered with something that is not a run result is an error, not a result", async () => {
    await expect(client(() => Response.json({ exit_code: "0" })).run("s", request)).rejects.toThrow(
      "not a run result",
    );
    await expect(client(() => new Response("<html>")).run("s", request)).rejects.toThrow(
      "not a run result",
    );
  });

  it("409 workspace_missing asks for the workspace; other refusals carry their sentence", async () => {
    expect(
      await client(() =>
        Response.json({ error: { code: "workspace_missing", message: "x" } }, { status: 409 }),
      ).run("s", request),
    ).toEqual({ kind: "workspace_missing" });
    await expect(
      client(() =>
        Response.json({ error: { code: "internal", message: "disk full" } }, { status: 500 }),
      ).run("s", request),
    ).rejects.toThrow("The executor did not run the command (HTTP 500: disk full).");
  });

  it("an unreachable executor is an unhealthy one, with the reason", async () => {
    const health = await new ExecutorClient(async () => {
      throw new TypeError("fetch failed");
    }, "The executor").health();
    expect(health).toMatchObject({
      ok: false,
      reason: "The executor could not be reached: fetch failed",
    });
  });
});
