import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerClient } from "../../../local-client/execution/docker.ts";
import { buildExecImage, defaultImageName } from "../../../local-client/execution/image.ts";
import { ExecutorHealth, RunResult } from "../../../src/protocol/execution.ts";
import { workspaceTar } from "./executor-fixture.ts";

/**
 * The command server inside the image (`runner serve`, what Cloudflare Containers talks to in
 * production), at its HTTP boundary: a real container of the image with its port 8080
 * published on 127.0.0.1.
 */

const docker = new DockerClient();
let container: string;
let base: string;

beforeAll(async () => {
  const image = defaultImageName();
  await buildExecImage(docker, { image, progress: () => {} });
  container = await docker.createContainer({
    Image: image,
    Cmd: ["serve"],
    Labels: { "dev.planport.test": "runner-server" },
    ExposedPorts: { "8080/tcp": {} },
    HostConfig: {
      AutoRemove: true,
      PortBindings: { "8080/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] },
    },
  });
  await docker.startContainer(container);
  const info = (await docker.inspectContainer(container)) as {
    NetworkSettings: { Ports: Record<string, { HostPort: string }[]> };
  };
  base = `http://127.0.0.1:${info.NetworkSettings.Ports["8080/tcp"]?.[0]?.HostPort}`;
  // The server listens once node has started: ask until it answers. Docker's port proxy may
  // hold a connection made before that without answering, hence each try's own deadline.
  for (let attempt = 0; ; attempt++) {
    const ok = await fetch(`${base}/v1/health`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 300) throw new Error(`the runner's server never answered at ${base}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  if (container !== undefined) await docker.removeContainer(container);
});

const run = (body: unknown) =>
  fetch(`${base}/v1/sessions/any-id/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("the image's command server", () => {
  it("answers health", async () => {
    const health = ExecutorHealth.parse(await (await fetch(`${base}/v1/health`)).json());
    expect(health.ok).toBe(true);
  });

  it("asks for the workspace first, then runs commands over it and reports their changes", async () => {
    const early = await run({ command: "true", timeout_ms: 10_000, files: [] });
    expect(early.status).toBe(409);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe(
      "workspace_missing",
    );
    const put = await fetch(`${base}/v1/sessions/any-id/workspace`, {
      method: "PUT",
      body: new Uint8Array(workspaceTar({ "v.txt": "value-from-tar-91\n", "old.txt": "x\n" })),
    });
    expect(put.status).toBe(204);
    const res = await run({
      command: "cat v.txt over.txt; rm old.txt; echo made > made.txt",
      timeout_ms: 60_000,
      files: [{ path: "over.txt", content: "from-overlay\n" }],
    });
    expect(res.status).toBe(200);
    const result = RunResult.parse(await res.json());
    expect(result.stdout.text).toBe("value-from-tar-91\nfrom-overlay\n");
    expect(result.exit_code).toBe(0);
    expect(result.changes).toEqual([
      { path: "made.txt", kind: "created", content: "made\n" },
      { path: "old.txt", kind: "deleted" },
    ]);
  });

  it("refuses a malformed request and a tar member outside the workspace", async () => {
    expect((await run({ command: "", timeout_ms: 1, files: [] })).status).toBe(400);
    const evil = Buffer.from(workspaceTar({ "a.txt": "a" }));
    // A member renamed to climb out: same length, checksum fixed below.
    const name = evil.indexOf("./a.txt");
    evil.write("../a.tx", name, "ascii");
    evil.fill(" ", name + 148 - (name % 512), name + 156 - (name % 512));
    const headerAt = name - (name % 512);
    let sum = 0;
    for (let i = headerAt; i < headerAt + 512; i++) sum += evil[i] ?? 0;
    evil.write(`${sum.toString(8).padStart(6, "0")}\0 `, headerAt + 148, "ascii");
    const put = await fetch(`${base}/v1/sessions/any-id/workspace`, {
      method: "PUT",
      body: new Uint8Array(evil),
    });
    expect(put.status).toBe(400);
    expect(await put.text()).toContain("..");
  });

  it("forgets the workspace on DELETE", async () => {
    const del = await fetch(`${base}/v1/sessions/any-id`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect((await run({ command: "true", timeout_ms: 10_000, files: [] })).status).toBe(409);
  });
});
