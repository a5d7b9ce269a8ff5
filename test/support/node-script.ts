import { spawn } from "node:child_process";
import { once } from "node:events";
import { resolve } from "node:path";

/**
 * Runs a TypeScript file of the tests as its own Node process (tsx), from the repository's
 * root, and answers its exit code and output. For tests whose subject must run apart from the
 * test: a client that blocks its own event loop, a poll whose unsettled await ends the process.
 * Killed after `killAfterMs` so that a hang fails the test instead of holding it.
 *
 * @example
 * const { code, stdout } = await runNodeScript(CHILD, [server, "900"], 60_000);
 */
export async function runNodeScript(
  script: string,
  args: readonly string[],
  killAfterMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: resolve(import.meta.dirname, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(killer);
  return { code, stdout, stderr };
}
