import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Runs the real `planport` CLI (bin/planport.js) as a child process, with its own home dirs. */

export const PLANPORT_BIN = resolve(import.meta.dirname, "../../local-client/bin/planport.js");

/**
 * A folder holding only a `planport` command (a link to this clone's bin), to put in front of
 * PATH where a client starts `planport` by name (the Claude Code plugin's `.mcp.json`), as a
 * global install would provide it.
 */
export function planportOnPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "planport-path-"));
  symlinkSync(PLANPORT_BIN, join(dir, "planport"));
  return dir;
}

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout contains `text`. */
  waitForStdout(text: string, timeoutMs?: number): Promise<void>;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** A fresh PLANPORT_HOME and XDG_DATA_HOME, so tests never read or write the user's. */
export function isolatedHome(): { home: string; data: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), "planport-cli-"));
  const home = join(root, "home");
  const data = join(root, "data");
  const env: NodeJS.ProcessEnv = { ...process.env, PLANPORT_HOME: home, XDG_DATA_HOME: data };
  for (const name of ["PLANPORT_URL", "PLANPORT_TOKEN", "PLANPORT_ON_TELEPORT", "CI"])
    delete env[name];
  return { home, data, env };
}

export function startCli(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd?: string; input?: string },
): CliRun {
  const child = spawn(process.execPath, [PLANPORT_BIN, ...args], {
    env: opts.env,
    cwd: opts.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    for (const w of waiters.splice(0)) {
      if (stdout.includes(w.text)) w.resolve();
      else waiters.push(w);
    }
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdin?.end(opts.input ?? "");
  const done = once(child, "exit").then(([code]) => ({
    code: code as number | null,
    stdout,
    stderr,
  }));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForStdout(text, timeoutMs = 20_000) {
      if (stdout.includes(text)) return Promise.resolve();
      return new Promise<void>((res, rej) => {
        const timer = setTimeout(
          () => rej(new Error(`stdout never contained ${text}; stdout=${stdout} stderr=${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          text,
          resolve: () => {
            clearTimeout(timer);
            res();
          },
        });
      });
    },
    done,
  };
}

export function runCli(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd?: string; input?: string },
) {
  return startCli(args, opts).done;
}

/** Parses NDJSON stdout; fails on any line that is not a JSON object. */
export function ndjson(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const v: unknown = JSON.parse(l);
      if (typeof v !== "object" || v === null || Array.isArray(v))
        throw new Error(`not an object: ${l}`);
      return v as Record<string, unknown>;
    });
}
