import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { DockerClient } from "../../../local-client/execution/docker.ts";
import { EXECUTOR_LABEL } from "../../../local-client/execution/executor.ts";
import { buildExecImage, defaultImageName } from "../../../local-client/execution/image.ts";
import { api, workspaceTar } from "./executor-fixture.ts";

/** `planport executor` (the built command): serves until Ctrl-C, then removes its containers. */

const ROOT = resolve(import.meta.dirname, "../../..");

describe("planport executor", () => {
  it("prints its url and token, runs commands, and removes its containers on Ctrl-C", async () => {
    const docker = new DockerClient();
    await buildExecImage(docker, { image: defaultImageName(), progress: () => {} });
    const state = mkdtempSync(join(tmpdir(), "planport-exec-cli-"));
    const child = spawn(
      process.execPath,
      [join(ROOT, "local-client/bin/planport.js"), "executor", "--json", "--state", state],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const [line] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
    const started = JSON.parse(line) as {
      event: string;
      url: string;
      token: string;
      health: { ok: boolean };
    };
    expect(started.event).toBe("executor");
    expect(started.health.ok).toBe(true);
    const client = api(started);
    const session = "ses_cli00000000000000000001";
    expect((await client.putWorkspace(session, workspaceTar({ "v.txt": "cli-42\n" }))).status).toBe(
      204,
    );
    expect((await client.run(session, "cat v.txt")).stdout.text).toBe("cli-42\n");
    const [id] = (await docker.listContainers([`dev.planport.session=${session}`])).map(
      (c) => c.Labels[EXECUTOR_LABEL],
    );
    expect(id).toBeDefined();
    // Where the token goes: a file wrangler dev reads, never a command line (`ps`).
    expect(stderr).toContain(".dev.vars");

    child.kill("SIGINT");
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(await docker.listContainers([`${EXECUTOR_LABEL}=${id}`])).toEqual([]);
  });
});
