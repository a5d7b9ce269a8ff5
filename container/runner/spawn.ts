import { spawn } from "node:child_process";
import type { Readable } from "node:stream";

/** The outcome of a small helper program the runner starts (git, tar). */
export interface Finished {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs a program to its end and collects its output (for git and tar, whose output is small or
 * bounded by the workspace). `input` is piped to its stdin.
 *
 * @example
 * const { code, stdout } = await finish("git", ["write-tree"], { env });
 */
export function finish(
  file: string,
  args: string[],
  opts: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    input?: Buffer | Readable;
    uid?: number;
    gid?: number;
  } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: opts.env ?? {},
      cwd: opts.cwd,
      uid: opts.uid,
      gid: opts.gid,
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") }),
    );
    if (child.stdin !== null && opts.input !== undefined) {
      // A program that stops reading early (tar refusing a member) must not crash the runner.
      child.stdin.on("error", () => {});
      if (Buffer.isBuffer(opts.input)) child.stdin.end(opts.input);
      else opts.input.pipe(child.stdin);
    }
  });
}

/** Like {@link finish}, but a non-zero exit is an error naming the program and its stderr. */
export async function succeed(
  file: string,
  args: string[],
  opts: Parameters<typeof finish>[2] = {},
): Promise<Buffer> {
  const done = await finish(file, args, opts);
  if (done.code !== 0) {
    throw new Error(`${file} ${args[0] ?? ""} failed (exit ${done.code}): ${done.stderr.trim()}`);
  }
  return done.stdout;
}
