import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { LocalExecutor } from "../../../local-client/execution/server.ts";
import { RunResult } from "../../../src/protocol/execution.ts";

/** Helpers of the local executor's tests: a workspace tar, and the API called as the worker does. */

/** An uncompressed tar of these files (paths relative to the workspace), made by the host's tar. */
export function workspaceTar(
  files: Record<string, string | Buffer>,
  executable: string[] = [],
): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "planport-ws-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content, { mode: executable.includes(path) ? 0o755 : 0o644 });
  }
  const tar = spawnSync("tar", ["-c", "-C", dir, "."], { maxBuffer: 256 * 1024 * 1024 });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  return tar.stdout;
}

export function api(executor: Pick<LocalExecutor, "url" | "token">) {
  const headers = { authorization: `Bearer ${executor.token}` };
  return {
    async putWorkspace(session: string, tar: Buffer): Promise<Response> {
      return fetch(`${executor.url}/v1/sessions/${session}/workspace`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/x-tar" },
        body: new Uint8Array(tar),
      });
    },
    async runRaw(
      session: string,
      command: string,
      opts: { timeout_ms?: number; files?: { path: string; content: string | null }[] } = {},
    ): Promise<Response> {
      return fetch(`${executor.url}/v1/sessions/${session}/run`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({
          command,
          timeout_ms: opts.timeout_ms ?? 60_000,
          files: opts.files ?? [],
        }),
      });
    },
    async run(
      session: string,
      command: string,
      opts: { timeout_ms?: number; files?: { path: string; content: string | null }[] } = {},
    ): Promise<RunResult> {
      const res = await this.runRaw(session, command, opts);
      if (res.status !== 200) throw new Error(`run answered ${res.status}: ${await res.text()}`);
      return RunResult.parse(await res.json());
    },
    async remove(session: string): Promise<Response> {
      return fetch(`${executor.url}/v1/sessions/${session}`, { method: "DELETE", headers });
    },
    async health(): Promise<Response> {
      return fetch(`${executor.url}/v1/health`, { headers });
    },
  };
}
