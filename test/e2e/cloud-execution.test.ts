import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_LABEL } from "../../local-client/execution/executor.ts";
import { type LocalExecutor, startLocalExecutor } from "../../local-client/execution/server.ts";
import { runCli } from "../client/run-cli.ts";
import {
  answerProject,
  bash,
  changedPaths,
  containersLabelled,
  executionScript,
  toolCalls,
} from "../support/cloud-execution.ts";
import { eventually } from "../support/eventually.ts";
import {
  gitRepository,
  type PlanportWorker,
  settled,
  startPlanportWorker,
  uploadRepository,
} from "./planner-support.ts";

/**
 * "Approve and run in the cloud" end to end under `wrangler dev` (issue 33): the worker talks to
 * the local executor, which runs every command in a Docker container holding the snapshot and
 * the overlay's edits. The scripted model tries Bash while planning (refused, and no container
 * exists then), then after approval runs `npm test` (fails), fixes the line, runs it again
 * (passes), and has a command write a file that says where it ran; `planport pull --apply`
 * brings both changes home. The command's output holds a value only the snapshot's files hold,
 * and its working folder and host name are the container's, not this machine's.
 */

let executor: LocalExecutor;
let pp: PlanportWorker;
const cleanup: string[] = [];

beforeAll(async () => {
  const state = mkdtempSync(join(tmpdir(), "planport-e2e-executor-"));
  cleanup.push(state);
  executor = await startLocalExecutor({ stateDir: state });
  pp = await startPlanportWorker({
    PLANPORT_ALLOW_SCRIPTED: "true",
    PLANPORT_EXECUTOR_URL: executor.url,
    PLANPORT_EXECUTOR_TOKEN: executor.token,
  });
}, 300_000);

afterAll(async () => {
  await pp?.close();
  await executor?.stop();
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

describe("cloud execution under wrangler dev, commands in Docker", () => {
  it("runs the project's tests in a container, fixes, reruns, and pull --apply brings edit and command output home", async () => {
    const marker = `marker-${randomUUID()}`;
    const repo = gitRepository(answerProject(marker));
    cleanup.push(repo);
    const snapshot = await uploadRepository(pp.client, repo);
    const created = await pp.client.createSession({
      prompt: "Make the answer 42",
      planner: "scripted",
      script: executionScript([
        bash("sleep 30", "Wait too long", 1_500),
        bash("head -c 200000 /dev/zero | tr '\\0' a", "Print a lot"),
      ]),
      snapshot_id: snapshot.id,
    });

    const review = await settled(pp, created.id, 120_000);
    expect(review.phase).toBe("plan_ready");
    // Planning ran nothing: the Bash call was refused, and no container exists for the session.
    const planning = toolCalls(await pp.api.allEvents(pp.auth, created.id));
    expect(planning[0]).toMatchObject({ name: "Bash", denied: true, isError: true });
    expect(planning[0]!.result).toContain("Plan mode is active");
    expect(containersLabelled(SESSION_LABEL, created.id)).toEqual([]);

    await pp.client.decide(created.id, {
      tool_use_id: review.pending!.tool_use_id,
      decision: "approve",
    });
    const done = await settled(pp, created.id, 600_000);
    expect(done).toMatchObject({ phase: "done", outcome: { kind: "approved" } });

    const runs = toolCalls(await pp.api.allEvents(pp.auth, created.id)).filter(
      (c) => c.name === "Bash" && !c.denied,
    );
    const [failing, passing, recording, slow, loud] = runs;
    expect(failing?.isError, failing?.result).toBe(true);
    expect(failing?.result).toContain("Exit code 1");
    expect(failing?.result).toMatch(/41 !== 42|Expected values to be strictly equal/);
    expect(passing?.isError, passing?.result).toBe(false);
    expect(passing?.result).toContain("Exit code 0");
    expect(recording?.result).toContain("created ran-in.txt");
    // Ignored by the repository's .gitignore: not a change.
    expect(recording?.result).not.toContain("out/build.txt");
    expect(slow?.isError).toBe(true);
    expect(slow?.result).toContain("Command timed out after 1500 ms and was stopped");
    expect(loud?.result).toContain("[stdout cut: the first 30000 of 200000 bytes are shown]");

    expect(done.last_test_run).toMatchObject({
      command: "npm test",
      exit_code: 0,
      timed_out: false,
    });

    // The execution is over: its container is gone.
    await eventually(() => containersLabelled(SESSION_LABEL, created.id).length === 0);

    const home = mkdtempSync(join(tmpdir(), "planport-e2e-pull-home-"));
    cleanup.push(home);
    const pulled = await runCli(
      ["pull", created.id, "--apply", "--server", pp.worker.url, "--token", pp.auth.token],
      { env: { ...process.env, PLANPORT_HOME: home }, cwd: repo },
    );
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(readFileSync(join(repo, "src/answer.js"), "utf8")).toBe("exports.answer = () => 42;\n");
    const ranIn = readFileSync(join(repo, "ran-in.txt"), "utf8");
    expect(ranIn).toContain(`marker: ${marker}`);
    expect(ranIn).toContain("pwd: /workspace");
    expect(ranIn).not.toContain(`host: ${hostname()}\n`);
    expect(ranIn).not.toContain(repo);
    expect(existsSync(join(repo, "out"))).toBe(false);
    expect(existsSync(join(repo, "planned.txt"))).toBe(false);
    expect(changedPaths(repo)).toEqual(["ran-in.txt", "src/answer.js"]);
  }, 900_000);
});
