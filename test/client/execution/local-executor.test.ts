import { mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerClient } from "../../../local-client/execution/docker.ts";
import { buildExecImage, defaultImageName } from "../../../local-client/execution/image.ts";
import { type LocalExecutor, startLocalExecutor } from "../../../local-client/execution/server.ts";
import { OUTPUT_LIMIT_BYTES } from "../../../src/protocol/execution.ts";
import { api, workspaceTar } from "./executor-fixture.ts";

/**
 * The local executor running real commands in real containers (Docker must be running; the
 * image is built, or reused, first). One session's container serves every test; each test
 * sends its own workspace.
 */

const SESSION = "ses_localexecutortests0000001";
let executor: LocalExecutor;
let client: ReturnType<typeof api>;

beforeAll(async () => {
  await buildExecImage(new DockerClient(), { image: defaultImageName(), progress: () => {} });
  process.env.PLANPORT_TEST_HOST_SECRET = "host-secret-value";
  executor = await startLocalExecutor({ stateDir: mkdtempSync(join(tmpdir(), "planport-exec-")) });
  client = api(executor);
});

afterAll(async () => {
  delete process.env.PLANPORT_TEST_HOST_SECRET;
  await executor?.stop();
});

async function freshWorkspace(
  files: Record<string, string | Buffer>,
  executable: string[] = [],
): Promise<void> {
  const res = await client.putWorkspace(SESSION, workspaceTar(files, executable));
  expect(res.status, await res.text()).toBe(204);
}

describe("the local executor", () => {
  it("runs a command over the workspace's files, in the container, not on the host", async () => {
    await freshWorkspace({ "config/value.txt": "only-in-the-snapshot-7f3a\n" });
    const result = await client.run(SESSION, "cat config/value.txt; pwd; hostname; id -u");
    expect(result.exit_code).toBe(0);
    const [value, cwd, host, uid] = result.stdout.text.trim().split("\n");
    expect(value).toBe("only-in-the-snapshot-7f3a");
    expect(cwd).toBe("/workspace");
    expect(host).not.toBe(hostname());
    expect(uid).toBe("1000");
    expect(result.changes).toEqual([]);
  });

  it("writes the overlay's files before the command and reports the exit code", async () => {
    await freshWorkspace({ "a.txt": "a\n", "gone.txt": "bye\n" });
    const result = await client.run(SESSION, "cat src/new.ts; test -e gone.txt; exit 7", {
      files: [
        { path: "src/new.ts", content: "export const x = 1;\n" },
        { path: "gone.txt", content: null },
      ],
    });
    expect(result.stdout.text).toBe("export const x = 1;\n");
    expect(result.exit_code).toBe(7);
    expect(result.changes).toEqual([]);
  });

  it("keeps an edited script executable", async () => {
    await freshWorkspace({ "run.sh": "#!/bin/sh\necho one\n" }, ["run.sh"]);
    const result = await client.run(SESSION, "./run.sh", {
      files: [{ path: "run.sh", content: "#!/bin/sh\necho two\n" }],
    });
    expect(result).toMatchObject({ exit_code: 0, stdout: { text: "two\n" }, changes: [] });
  });

  it("refuses an overlay path outside the workspace", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const res = await client.runRaw(SESSION, "true", {
      files: [{ path: "../etc/x", content: "" }],
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("..");
  });

  it("reports created, modified and deleted files; ignored files are not changes; binaries are skipped", async () => {
    await freshWorkspace({
      ".gitignore": "node_modules/\ndist/\n",
      "keep.txt": "one\n",
      "edit.txt": "before\n",
      "drop.txt": "x\n",
    });
    const result = await client.run(
      SESSION,
      [
        "echo after > edit.txt",
        "rm drop.txt",
        "mkdir -p made node_modules/pkg dist",
        "echo fresh > made/new.txt",
        "echo ignored > node_modules/pkg/index.js",
        "echo built > dist/out.js",
        "printf 'a\\000b' > made/blob.bin",
      ].join(" && "),
    );
    expect(result.exit_code).toBe(0);
    expect(result.changes).toEqual([
      { path: "drop.txt", kind: "deleted" },
      { path: "edit.txt", kind: "modified", content: "after\n" },
      { path: "made/blob.bin", kind: "created", skipped: "binary" },
      { path: "made/new.txt", kind: "created", content: "fresh\n" },
    ]);
  });

  it("keeps the head of a long output and says it was cut", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const result = await client.run(
      SESSION,
      "python3 -c \"import sys; [sys.stdout.write('%05d %s\\n' % (i, 'x' * 93)) for i in range(2000)]\"",
    );
    expect(result.exit_code).toBe(0);
    expect(result.stdout.bytes).toBe(200_000);
    expect(result.stdout.cut).toBe(true);
    expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(OUTPUT_LIMIT_BYTES);
    expect(result.stdout.text.startsWith("00000 ")).toBe(true);
    expect(result.stdout.text.endsWith("\n")).toBe(true);
    expect(result.stderr).toEqual({ text: "", bytes: 0, cut: false });
  });

  it("stops a command at its timeout, leaves no process, and the container runs the next one", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const slow = await client.run(SESSION, "echo started; (setsid sleep 31 &); sleep 30", {
      timeout_ms: 1000,
    });
    expect(slow.timed_out).toBe(true);
    expect(slow.exit_code).toBeNull();
    expect(slow.stdout.text).toBe("started\n");
    const next = await client.run(
      SESSION,
      "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done",
    );
    expect(next.exit_code).toBe(0);
    expect(next.timed_out).toBe(false);
    expect(next.stdout.text).not.toContain("sleep");
  });

  it("has no network", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const result = await client.run(
      SESSION,
      "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\" && echo connected || echo blocked",
    );
    expect(result.stdout.text.trim()).toBe("blocked");
  });

  it("passes nothing of the host's environment", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const result = await client.run(
      SESSION,
      "printenv PLANPORT_TEST_HOST_SECRET || echo absent; env",
    );
    expect(result.stdout.text.split("\n")[0]).toBe("absent");
    expect(result.stdout.text).not.toContain("host-secret-value");
    expect(result.stdout.text).not.toContain(process.env.HOME ?? "/root-home-unset");
  });

  it("keeps the git state out of the workspace", async () => {
    await freshWorkspace({ "a.txt": "a\n" });
    const result = await client.run(SESSION, "ls -A; ls /var/lib/planport 2>&1 || true");
    expect(result.stdout.text.split("\n")[0]).toBe("a.txt");
    expect(result.stdout.text).toContain("Permission denied");
  });
});
