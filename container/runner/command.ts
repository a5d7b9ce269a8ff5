import { spawn } from "node:child_process";
import type { CommandOutput } from "../../src/protocol/execution.ts";
import { COMMAND_GID, COMMAND_HOME, COMMAND_UID, WORKSPACE_DIR } from "./layout.ts";
import { OutputHead } from "./output.ts";
import { endCommandProcesses } from "./processes.ts";

/** What one command did, before the tree is compared. */
export interface CommandEnd {
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  stdout: CommandOutput;
  stderr: CommandOutput;
}

/**
 * The whole environment a command gets: nothing of the runner's or the host's (no tokens, no
 * host paths), only what a shell and the usual tools need.
 */
export const COMMAND_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  HOME: COMMAND_HOME,
  LANG: "C.UTF-8",
  CI: "true",
};

/**
 * Runs `bash -c command` as the commands' user in the workspace, in a process group of its
 * own, stdin closed. At `timeoutMs` the whole group is killed (SIGKILL); when bash ends, so does
 * every other process of that user. Only the head of each stream is kept.
 */
export function runCommand(command: string, timeoutMs: number): Promise<CommandEnd> {
  const started = performance.now();
  const stdout = new OutputHead();
  const stderr = new OutputHead();
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-c", command], {
      cwd: WORKSPACE_DIR,
      env: { ...COMMAND_ENV },
      uid: COMMAND_UID,
      gid: COMMAND_GID,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let timedOut = false;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    let exit: { code: number | null; ms: number } | undefined;
    child.on("exit", (code) => {
      clearTimeout(timer);
      exit = { code, ms: Math.round(performance.now() - started) };
      // What bash left running (a background job, a daemon) ends with it and releases the
      // pipes, so "close" below comes.
      killGroup();
      void endCommandProcesses();
    });
    child.on("close", () => {
      const end = exit ?? { code: child.exitCode, ms: Math.round(performance.now() - started) };
      resolve({
        exit_code: timedOut ? null : end.code,
        timed_out: timedOut,
        duration_ms: end.ms,
        stdout: stdout.output(),
        stderr: stderr.output(),
      });
    });
  });
}
