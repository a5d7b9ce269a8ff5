import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useEmbeddedWorker } from "../../local-client/embedded/worker.ts";
import { createApi } from "../../local-client/http/api.ts";
import { isAlive } from "../../local-client/poll/pid-lock.ts";
import { waitForPlan } from "../client/fixture-repo.ts";
import { isolatedHome, runCli } from "../client/run-cli.ts";

/**
 * Review links that keep working (DESIGN.md "Review links"): the embedded worker comes back
 * on the port it last ran on, so a link printed before a restart still opens the review page;
 * when that port is taken it falls back to a free one, remembers it, the command that started
 * it says the old links lead elsewhere now, and `planport status` / `list` show links on the new
 * port, because the server builds every `review_url` from the request it answers rather than
 * storing a host.
 */

interface Recorded {
  pid: number;
  port: number;
  url: string;
}

function recorded(data: string): Recorded {
  const path = join(data, "planport", "embedded", "worker.json");
  return JSON.parse(readFileSync(path, "utf8")) as Recorded;
}

function rememberedPort(data: string): number {
  return Number(readFileSync(join(data, "planport", "embedded", "port"), "utf8").trim());
}

async function statusCode(url: string): Promise<number> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
}

/** Holds a TCP port on loopback, as another program would. */
async function occupy(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return server;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("review links of the embedded worker", () => {
  it("survive a restart on the remembered port; a taken port falls back, is said, and status/list link to the new one", async () => {
    const home = isolatedHome();
    // A scripted plan keeps the session open (plan_ready), so the worker outlives each command.
    home.env.PLANPORT_ALLOW_SCRIPTED = "true";
    cleanups.push(() => runCli(["embedded", "--stop"], { env: home.env }));

    // Start the worker and open a session in it, as `planport plan` does.
    const lease = await useEmbeddedWorker({ env: home.env });
    const api = createApi({ server: lease.server, token: lease.token });
    const created = await api.createSession({
      prompt: "plan the OAuth login",
      planner: "scripted",
      seed_plan: "# Plan\n\n1. Add the OAuth callback.\n",
      script: [{ content: [{ type: "tool_use", name: "ExitPlanMode", input: {} }] }],
    });
    await waitForPlan(api, created.id);
    expect((await lease.release()).stopped).toBe(false);
    const first = recorded(home.data);
    const link = created.review_url;
    expect(link.startsWith(`${first.url}/review/${created.id}?key=`)).toBe(true);
    expect(rememberedPort(home.data)).toBe(first.port);
    expect(await statusCode(link)).toBe(200);

    // Stopped, then started again: the same port, and the old link still works.
    expect((await runCli(["embedded", "--stop"], { env: home.env })).code).toBe(0);
    expect(isAlive(first.pid)).toBe(false);
    expect((await runCli(["embedded", "--start"], { env: home.env })).code).toBe(0);
    const status = await runCli(["status", created.id, "--json"], { env: home.env });
    expect(status.code, status.stderr).toBe(0);
    const second = recorded(home.data);
    expect(second.pid).not.toBe(first.pid);
    expect(second.port).toBe(first.port);
    expect((JSON.parse(status.stdout) as { review_url: string }).review_url).toBe(link);
    expect(await statusCode(link)).toBe(200);

    // Another program takes the port while the worker is stopped: the next start falls back.
    expect((await runCli(["embedded", "--stop"], { env: home.env })).code).toBe(0);
    const squatter = await occupy(first.port);
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    const restarted = await runCli(["embedded", "--start"], { env: home.env });
    expect(restarted.code, restarted.stderr).toBe(0);
    // It says the old links now lead to that other program; nothing else, no stack, no EADDRINUSE.
    expect(restarted.stderr).toContain(
      `could not have its port ${first.port} back (another program holds it)`,
    );
    expect(restarted.stderr).not.toMatch(/error|EADDRINUSE|^\s+at /im);
    const moved = await runCli(["status", created.id, "--json"], { env: home.env });
    expect(moved.code, moved.stderr).toBe(0);
    const third = recorded(home.data);
    expect(third.port).not.toBe(first.port);
    expect(rememberedPort(home.data)).toBe(third.port);
    const newLink = (JSON.parse(moved.stdout) as { review_url: string }).review_url;
    expect(newLink).toBe(link.replace(first.url, third.url));
    expect(await statusCode(newLink)).toBe(200);

    const listed = await runCli(["list", "--json"], { env: home.env });
    expect(listed.code, listed.stderr).toBe(0);
    const rows = (JSON.parse(listed.stdout) as { data: { id: string; review_url: string }[] }).data;
    expect(rows).toEqual([expect.objectContaining({ id: created.id, review_url: newLink })]);

    // The new port is the one remembered: with the old one free again, it is kept.
    await new Promise((resolve) => squatter.close(resolve));
    expect((await runCli(["embedded", "--stop"], { env: home.env })).code).toBe(0);
    expect((await runCli(["embedded", "--start"], { env: home.env })).code).toBe(0);
    const again = await runCli(["status", created.id, "--json"], { env: home.env });
    expect(again.code, again.stderr).toBe(0);
    expect(recorded(home.data).port).toBe(third.port);
    expect(await statusCode(newLink)).toBe(200);
  }, 300_000);
});
