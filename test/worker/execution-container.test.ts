import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { ExecutorClient } from "../../src/execution/client.ts";
import { COMMAND_SERVER_PORT, CommandContainer } from "../../src/execution/cloudflare-container.ts";
import { containerTransport } from "../../src/execution/container-transport.ts";
import { RunResult } from "../../src/protocol/execution.ts";
import { ContainerRuntimeStandIn, giveContainer } from "../support/worker/container-runtime.ts";
import { ownerObject } from "../support/worker/sessions.ts";

/**
 * The production executor adapter (Cloudflare Containers) at its HTTP boundary.
 *
 * Why this boundary: workerd runs containers only on Cloudflare; `wrangler dev`'s local
 * containers need Docker with buildx and a registry, which this machine and CI lack (issue 33),
 * and the worker tests' pool runs with containers off. So the one piece not exercised is the
 * platform's container runtime itself (`ctx.container`: start, stop, a TCP port). Everything
 * above it runs for real, in workerd: our `CommandContainer` — the package's `Container` class
 * unmodified, with its start/wait-for-port logic, its SQLite state and its request proxying —
 * with a real Durable Object state, and every request goes over real HTTP to a server on the
 * host. The runtime is a stand-in (test/support/worker/container-runtime.ts) that records
 * starts and stops and whose port forwards to that server: the package's own seam
 * (`ctx.container.getTcpPort(port).fetch`).
 *
 * The server is the command server's ECHO (test/support/command-server-echo.ts), not the
 * runner: it answers each route in the API's shapes with what reached it, so the assertions
 * compare what was sent with what arrived, and the answer through the object with the answer
 * the same request gets straight from the server. The runner's own behaviour (commands,
 * changes, cuts) is tested with the local executor against real containers.
 *
 * The transport through the worker's own binding is tested too: the pool runs containers off,
 * as `wrangler dev` and the embedded worker do, and there it must answer 503
 * `executor_unavailable` with a sentence, never throw.
 */

const SERVER = inject("commandServerEchoUrl");

/** Runs `body` with a CommandContainer on a real object state and a stand-in runtime. */
async function withContainer<T>(
  runtime: ContainerRuntimeStandIn,
  body: (box: CommandContainer, alarms: number[]) => Promise<T>,
  vars: Partial<Cloudflare.Env> = {},
): Promise<T> {
  const borrowed = ownerObject(`container-state-${crypto.randomUUID()}`);
  return await runInDurableObject(borrowed, async (_owner, state) => {
    const { alarms } = giveContainer(state, runtime);
    const box = new CommandContainer(state as ConstructorParameters<typeof CommandContainer>[0], {
      ...env,
      ...vars,
    });
    return await body(box, alarms);
  });
}

/** A response read to its end inside the object (its body cannot leave the object's context). */
interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  json(): unknown;
}

async function answer(response: Response): Promise<Answer> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    json: () => JSON.parse(new TextDecoder().decode(bytes)),
  };
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** 300 KiB holding every byte value, like a tar of a working tree (binary, NULs and all). */
function tarLikeBody(): Uint8Array {
  const bytes = new Uint8Array(300 * 1024);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 10)) % 256;
  return bytes;
}

const runBody = {
  command: "npm test -- --grep 'é ✓'",
  timeout_ms: 120_000,
  files: [
    { path: "src/a.ts", content: 'export const a = "\\u0000 é";\n' },
    { path: "old.txt", content: null },
  ],
};

describe("the Cloudflare Containers adapter at its HTTP boundary", () => {
  it("a workspace upload reaches the command server byte for byte, headers and all", async () => {
    const runtime = new ContainerRuntimeStandIn(SERVER);
    const body = tarLikeBody();
    const response = await withContainer(runtime, async (box) =>
      answer(
        await box.fetch(
          new Request("http://executor/v1/sessions/s-1/workspace", {
            method: "PUT",
            headers: { "content-type": "application/x-tar", authorization: "Bearer t-1" },
            body,
          }),
        ),
      ),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get("x-echo-body-bytes")).toBe(String(body.length));
    expect(response.headers.get("x-echo-body-sha256")).toBe(await sha256Hex(body));
    expect(response.headers.get("x-echo-authorization")).toBe("Bearer t-1");
    expect(runtime.sent).toContain(`${COMMAND_SERVER_PORT} /v1/sessions/s-1/workspace`);
  });

  it("a run's request arrives as sent and its answer comes back exactly as the server gave it", async () => {
    const runtime = new ContainerRuntimeStandIn(SERVER);
    const request = () =>
      new Request("http://executor/v1/sessions/s-2/run", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(runBody),
      });
    const through = await withContainer(runtime, async (box) => answer(await box.fetch(request())));
    const straight = await fetch(new Request(`${SERVER}/v1/sessions/s-2/run`, request()));

    expect(through.status).toBe(200);
    expect(through.headers.get("content-type")).toBe("application/json");
    expect(through.bytes).toEqual(new Uint8Array(await straight.arrayBuffer()));
    const result = RunResult.parse(through.json());
    expect(JSON.parse(result.stdout.text)).toEqual({
      method: "POST",
      path: "/v1/sessions/s-2/run",
      session: "s-2",
      content_type: "application/json",
      body: runBody,
    });
    expect(result.stderr.cut).toBe(true);
    expect(result.changes).toEqual([
      { path: "made-by-echo.txt", kind: "created", content: "é\u0000?\n" },
    ]);
  });

  it("the command server's refusals pass unchanged (409 workspace_missing, 404)", async () => {
    const runtime = new ContainerRuntimeStandIn(SERVER);
    const { missing, unknown } = await withContainer(runtime, async (box) => ({
      missing: await answer(
        await box.fetch(
          new Request("http://executor/v1/sessions/missing/run", {
            method: "POST",
            body: JSON.stringify(runBody),
          }),
        ),
      ),
      unknown: await answer(await box.fetch(new Request("http://executor/v1/nothing-here"))),
    }));
    expect(missing.status).toBe(409);
    expect(missing.json()).toEqual({
      error: { code: "workspace_missing", message: "This session has no workspace." },
    });
    expect(unknown.status).toBe(404);
    expect((unknown.json() as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("one container serves the session's requests: started once, without internet, as `cloudflare`", async () => {
    const runtime = new ContainerRuntimeStandIn(SERVER);
    const statuses = await withContainer(runtime, async (box) => {
      const out: number[] = [];
      for (let i = 0; i < 3; i++) {
        out.push((await box.fetch(new Request("http://executor/v1/health"))).status);
      }
      return out;
    });
    expect(statuses).toEqual([200, 200, 200]);
    expect(runtime.starts).toEqual([
      { enableInternet: false, env: { PLANPORT_EXECUTOR: "cloudflare" } },
    ]);
  });

  it('PLANPORT_EXEC_NETWORK = "on" starts the container with the internet', async () => {
    const runtime = new ContainerRuntimeStandIn(SERVER);
    await withContainer(runtime, (box) => box.fetch(new Request("http://executor/v1/health")), {
      PLANPORT_EXEC_NETWORK: "on",
    });
    expect(runtime.starts.map((s) => s.enableInternet)).toEqual([true]);
  });

  it("DELETE /v1/sessions/:id stops the running container and starts none when none runs", async () => {
    const running = new ContainerRuntimeStandIn(SERVER);
    const [health, deleted, again] = await withContainer(running, async (box) => [
      await box.fetch(new Request("http://executor/v1/health")),
      await box.fetch(new Request("http://executor/v1/sessions/s-3", { method: "DELETE" })),
      await box.fetch(new Request("http://executor/v1/sessions/s-3", { method: "DELETE" })),
    ]);
    expect([health?.status, deleted?.status, again?.status]).toEqual([200, 204, 204]);
    expect(running.running).toBe(false);
    expect(running.destroys).toHaveLength(1);
    expect(running.starts).toHaveLength(1);

    const idle = new ContainerRuntimeStandIn(SERVER);
    const status = await withContainer(idle, async (box) => {
      return (await box.fetch(new Request("http://executor/v1/sessions/s-4", { method: "DELETE" })))
        .status;
    });
    expect(status).toBe(204);
    expect(idle.starts).toHaveLength(0);
    expect(idle.sent).toHaveLength(0);
  });

  it("a container that cannot start answers 503 executor_unavailable with a sentence", async () => {
    const runtime = new ContainerRuntimeStandIn(
      SERVER,
      "there is no container instance that can be provided to this durable object",
    );
    const response = await withContainer(runtime, async (box) =>
      answer(await box.fetch(new Request("http://executor/v1/health"))),
    );
    expect(response.status).toBe(503);
    const body = response.json() as { error: { code: string; message: string } };
    expect(body.error.code).toBe("executor_unavailable");
    expect(body.error.message).toContain("did not start");
    expect(body.error.message).toContain("max_instances");
  });

  it("where containers are off (this pool, wrangler dev, the embedded worker) the transport answers 503, never throws", async () => {
    const send = containerTransport(env, "s-5");
    const response = await send(new Request("http://executor/v1/health"));
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("executor_unavailable");
    expect(body.error.message).toContain("local executor");
    // The session's release (its DELETE) through the same transport fails as loudly.
    await expect(
      new ExecutorClient(containerTransport(env, "s-5"), "The container").release("s-5"),
    ).rejects.toThrow(/did not release the container \(HTTP 503/);
  });

  it("without the binding the transport says what is missing", async () => {
    const response = await containerTransport(
      { ...env, EXECUTOR_CONTAINERS: undefined },
      "s-6",
    )(new Request("http://executor/v1/health"));
    expect(response.status).toBe(503);
    expect(await response.text()).toContain("EXECUTOR_CONTAINERS");
  });
});
