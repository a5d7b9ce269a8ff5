import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EmbeddedLease, useEmbeddedWorker } from "../../local-client/embedded/worker.ts";
import { SESSION_LABEL } from "../../local-client/execution/executor.ts";
import { type Api, createApi } from "../../local-client/http/api.ts";
import type { ScriptedTurn, Session } from "../../src/protocol/index.ts";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, runCli } from "../client/run-cli.ts";
import {
  answerProject,
  bash,
  changedPaths,
  containersLabelled,
  executionScript,
  toolCalls,
} from "../support/cloud-execution.ts";
import { eventually } from "../support/eventually.ts";
import { gitRepository, uploadRepository } from "./planner-support.ts";

/**
 * "Approve and run in the cloud" through the embedded worker (issue 33): the worker host runs
 * the local executor itself, so a user with Docker gets commands in containers with nothing to
 * set up. Also: a worker killed with `kill -9` while a command runs leaves its container, and
 * the next start removes it; without Docker, the approval says so and nothing starts.
 */

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Embedded {
  home: ReturnType<typeof isolatedHome>;
  api: Api;
  lease: EmbeddedLease;
}

async function embedded(extraEnv: Record<string, string> = {}): Promise<Embedded> {
  const home = isolatedHome();
  home.env.PLANPORT_ALLOW_SCRIPTED = "true";
  Object.assign(home.env, extraEnv);
  cleanups.push(() => rmSync(join(home.home, ".."), { recursive: true, force: true }));
  cleanups.push(() => runCli(["embedded", "--stop"], { env: home.env }));
  // Started by the command, as a user's terminal does: the worker host inherits its environment
  // (DOCKER_HOST, PLANPORT_EXEC_*), where the executor reads its settings.
  const started = await runCli(["embedded", "--start"], { env: home.env });
  if (started.code !== 0) throw new Error(`planport embedded --start: ${started.stderr}`);
  const lease = await useEmbeddedWorker({ env: home.env });
  cleanups.push(() => lease.release());
  return { home, api: createApi({ server: lease.server, token: lease.token }), lease };
}

async function startSession(
  { api }: Embedded,
  repo: string,
  script: ScriptedTurn[],
): Promise<{ id: string; planCall: string }> {
  const snapshot = await uploadRepository(api, repo);
  const created = await api.createSession({
    prompt: "Make the answer 42",
    planner: "scripted",
    script,
    snapshot_id: snapshot.id,
  });
  return { id: created.id, planCall: await waitForPlan(api, created.id, 120_000) };
}

async function until(api: Api, id: string, done: (s: Session) => boolean): Promise<Session> {
  let last: Session | null = null;
  await eventually(async () => {
    last = await api.getSession(id);
    return done(last);
  });
  return last!;
}

function repository(marker: string): string {
  const repo = gitRepository(answerProject(marker));
  cleanups.push(() => rmSync(repo, { recursive: true, force: true }));
  return repo;
}

describe("cloud execution through the embedded worker", () => {
  it("runs the tests in a container, fixes, reruns; pull --apply brings edit and command output home", async () => {
    const worker = await embedded();
    const marker = `marker-${randomUUID()}`;
    const repo = repository(marker);
    const { id, planCall } = await startSession(worker, repo, executionScript());
    expect(containersLabelled(SESSION_LABEL, id)).toEqual([]);

    await worker.api.decide(id, { tool_use_id: planCall, decision: "approve" });
    const done = await until(worker.api, id, (s) => s.phase === "done" || s.status === "archived");
    expect(done).toMatchObject({ phase: "done", outcome: { kind: "approved" } });
    expect(done.last_test_run).toMatchObject({ command: "npm test", exit_code: 0 });

    const events = (await worker.api.events(id, { limit: 1000 })).data;
    const runs = toolCalls(events).filter((c) => c.name === "Bash");
    expect(runs.map((r) => [r.denied, r.isError])).toEqual([
      [true, true],
      [false, true],
      [false, false],
      [false, false],
    ]);
    await eventually(() => containersLabelled(SESSION_LABEL, id).length === 0);

    const pulled = await runCli(["pull", id, "--apply"], { env: worker.home.env, cwd: repo });
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(readFileSync(join(repo, "src/answer.js"), "utf8")).toBe("exports.answer = () => 42;\n");
    const ranIn = readFileSync(join(repo, "ran-in.txt"), "utf8");
    expect(ranIn).toContain(`marker: ${marker}`);
    expect(ranIn).toContain("pwd: /workspace");
    expect(ranIn).not.toContain(`host: ${hostname()}\n`);
    expect(changedPaths(repo)).toEqual(["ran-in.txt", "src/answer.js"]);
  }, 600_000);

  it("a worker killed with kill -9 during a command leaves its container; the next start removes it", async () => {
    const worker = await embedded();
    const repo = repository(`marker-${randomUUID()}`);
    const script = executionScript();
    // After approval: one long command, then the rest never comes.
    const { id, planCall } = await startSession(worker, repo, [
      script[0]!,
      bash("sleep 600", "Wait", 600_000),
    ]);
    await worker.api.decide(id, { tool_use_id: planCall, decision: "approve" });
    const left = await eventually(() => containersLabelled(SESSION_LABEL, id)[0] ?? null);

    const record = JSON.parse(
      readFileSync(join(worker.home.data, "planport", "embedded", "worker.json"), "utf8"),
    ) as { pid: number };
    process.kill(-record.pid, "SIGKILL");
    await eventually(() => {
      try {
        process.kill(record.pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect(left).not.toBeNull();
    expect(containersLabelled(SESSION_LABEL, id)).toContain(left);

    const started = await runCli(["embedded", "--start"], { env: worker.home.env });
    expect(started.code, started.stderr).toBe(0);
    // The container the killed worker left is gone (the session may start a new one for the
    // interrupted call: that one is its own).
    await eventually(() => !containersLabelled(SESSION_LABEL, id).includes(left!));

    // Stopping the session releases whatever container it has now.
    const stopped = await runCli(["stop", id], { env: worker.home.env });
    expect(stopped.code, stopped.stderr).toBe(0);
    await eventually(() => containersLabelled(SESSION_LABEL, id).length === 0);
  }, 600_000);

  it("without Docker, approve says so before anything starts, and the plan stays ready", async () => {
    const worker = await embedded({ DOCKER_HOST: "unix:///nonexistent/planport-docker.sock" });
    const repo = repository(`marker-${randomUUID()}`);
    const { id, planCall } = await startSession(worker, repo, executionScript());
    const refused = await worker.api
      .decide(id, { tool_use_id: planCall, decision: "approve" })
      .then(
        () => null,
        (err: unknown) => err as { status: number; code: string; message: string },
      );
    expect(refused).toMatchObject({ status: 409, code: "executor_unavailable" });
    expect(refused?.message).toContain("Nothing was started");
    expect(refused?.message).toContain(
      "Docker is not available: nothing answers at /nonexistent/planport-docker.sock",
    );
    const session = await worker.api.getSession(id);
    expect(session).toMatchObject({ phase: "plan_ready", outcome: null });
  }, 600_000);
});
