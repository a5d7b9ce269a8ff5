import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerClient } from "../../../local-client/execution/docker.ts";
import {
  EXECUTOR_LABEL,
  executorId,
  SESSION_LABEL,
} from "../../../local-client/execution/executor.ts";
import { buildExecImage, defaultImageName } from "../../../local-client/execution/image.ts";
import { startLocalExecutor } from "../../../local-client/execution/server.ts";
import { ExecutorHealth } from "../../../src/protocol/execution.ts";
import { api, workspaceTar } from "./executor-fixture.ts";

/**
 * Where containers come from and where they go: the limits they are made with, DELETE and
 * stop(), the reaping of a killed executor's containers, and the answer when Docker is absent.
 */

const docker = new DockerClient();
const CHILD = resolve(import.meta.dirname, "executor-child.ts");

beforeAll(async () => {
  await buildExecImage(docker, { image: defaultImageName(), progress: () => {} });
});

async function containersOf(executor: string, session?: string): Promise<string[]> {
  const labels = [`${EXECUTOR_LABEL}=${executor}`];
  if (session !== undefined) labels.push(`${SESSION_LABEL}=${session}`);
  return (await docker.listContainers(labels)).map((c) => c.Id);
}

describe("the local executor's containers", () => {
  const stateDir = mkdtempSync(join(tmpdir(), "planport-exec-life-"));
  let executor: Awaited<ReturnType<typeof startLocalExecutor>>;
  beforeAll(async () => {
    executor = await startLocalExecutor({ stateDir });
  });
  afterAll(async () => {
    await executor?.stop();
  });

  it("answers health with the image, and refuses a request without the token", async () => {
    const health = ExecutorHealth.parse(await (await api(executor).health()).json());
    expect(health).toEqual({ ok: true, executor: "docker", image: defaultImageName() });
    const res = await fetch(`${executor.url}/v1/health`);
    expect(res.status).toBe(401);
    const wrong = await fetch(`${executor.url}/v1/health`, {
      headers: { authorization: `Bearer ${executor.token}x` },
    });
    expect(wrong.status).toBe(401);
  });

  it("makes a container with limits, no network, no mounts and no capabilities beyond the runner's", async () => {
    const session = "ses_limits000000000000000001";
    expect((await api(executor).putWorkspace(session, workspaceTar({ "a.txt": "a" }))).status).toBe(
      204,
    );
    const [id] = await containersOf(executor.id, session);
    const info = (await docker.inspectContainer(id ?? "missing")) as {
      HostConfig: Record<string, unknown>;
      Config: { Env: string[]; Hostname: string };
      Mounts: unknown[];
    };
    expect(info.HostConfig).toMatchObject({
      NetworkMode: "none",
      Memory: 2 * 1024 * 1024 * 1024,
      PidsLimit: 512,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      AutoRemove: true,
    });
    expect(info.HostConfig.NanoCpus).toBeGreaterThan(0);
    expect(info.Mounts).toEqual([]);
    expect(info.Config.Env.filter((e) => !e.startsWith("PATH="))).toEqual(["PLANPORT_IDLE_S=900"]);
    expect(info.Config.Hostname).toBe("planport-exec");
  });

  it("removes the session's container on DELETE, and a run after it needs the workspace again", async () => {
    const session = "ses_delete000000000000000001";
    const client = api(executor);
    expect((await client.putWorkspace(session, workspaceTar({ "a.txt": "a" }))).status).toBe(204);
    expect(await containersOf(executor.id, session)).toHaveLength(1);
    expect((await client.remove(session)).status).toBe(204);
    expect(await containersOf(executor.id, session)).toEqual([]);
    expect((await client.remove(session)).status).toBe(204);
    const res = await client.runRaw(session, "true");
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      "workspace_missing",
    );
  });

  it("removes its containers when stopped", async () => {
    const own = await startLocalExecutor({
      stateDir: mkdtempSync(join(tmpdir(), "planport-exec-stop-")),
    });
    const session = "ses_stop00000000000000000001";
    expect((await api(own).putWorkspace(session, workspaceTar({ "a.txt": "a" }))).status).toBe(204);
    expect(await containersOf(own.id)).toHaveLength(1);
    await own.stop();
    expect(await containersOf(own.id)).toEqual([]);
  });
});

describe("after its host is killed", () => {
  it("the next executor on the same state folder removes the containers the killed one left", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "planport-exec-reap-"));
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, stateDir], {
      cwd: resolve(import.meta.dirname, "../../.."),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
    const started = JSON.parse(line) as { url: string; token: string };
    const session = "ses_reap00000000000000000001";
    expect((await api(started).putWorkspace(session, workspaceTar({ "a.txt": "a" }))).status).toBe(
      204,
    );
    const id = executorId(stateDir);
    expect(await containersOf(id, session)).toHaveLength(1);
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await containersOf(id, session)).toHaveLength(1);

    const next = await startLocalExecutor({ stateDir });
    try {
      expect(next.id).toBe(id);
      expect(await containersOf(id)).toEqual([]);
    } finally {
      await next.stop();
    }
  });
});

describe("a container nobody uses", () => {
  it("goes away by itself after PLANPORT_EXEC_IDLE_S, and the next run asks for the workspace", async () => {
    const executor = await startLocalExecutor({
      stateDir: mkdtempSync(join(tmpdir(), "planport-exec-idle-")),
      env: { ...process.env, PLANPORT_EXEC_IDLE_S: "10" },
    });
    try {
      const session = "ses_idle00000000000000000001";
      const client = api(executor);
      expect((await client.putWorkspace(session, workspaceTar({ "a.txt": "a" }))).status).toBe(204);
      expect(await containersOf(executor.id, session)).toHaveLength(1);
      // Waits for the container's own exit (no assertion on how soon: only that it comes).
      while ((await containersOf(executor.id, session)).length > 0) {
        await new Promise((r) => setTimeout(r, 1000));
      }
      const res = await client.runRaw(session, "true");
      expect(res.status).toBe(409);
    } finally {
      await executor.stop();
    }
  });
});

describe("without Docker", () => {
  it("health answers 503 with the sentence a user acts on", async () => {
    const executor = await startLocalExecutor({
      stateDir: mkdtempSync(join(tmpdir(), "planport-exec-nodocker-")),
      env: { ...process.env, DOCKER_HOST: "unix:///nonexistent" },
    });
    try {
      const res = await api(executor).health();
      expect(res.status).toBe(503);
      const health = ExecutorHealth.parse(await res.json());
      expect(health.ok).toBe(false);
      expect(health.reason).toContain(
        "Docker is not available: nothing answers at /nonexistent. Install Docker and start it (dockerd)",
      );
      const put = await api(executor).putWorkspace("ses_x", workspaceTar({ "a.txt": "a" }));
      expect(put.status).toBe(503);
    } finally {
      await executor.stop();
    }
  });
});
