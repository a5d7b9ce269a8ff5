import { createWriteStream } from "node:fs";
import { readFile, rm, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { EXECUTOR_ERRORS, RunRequest } from "../../src/protocol/execution.ts";
import { ACTIVITY_FILE, STATE_DIR } from "./layout.ts";
import { runInWorkspace, WorkspaceMissingError } from "./run.ts";
import { serve } from "./server.ts";
import { fillWorkspace, RefusedError, touchActivity } from "./workspace.ts";

/**
 * The runner inside the image (bundled to /opt/planport/runner.mjs):
 *
 * - `serve [--port N]` — the command server (Cloudflare Containers talks to it on 8080).
 * - `run [--request FILE]` — one RunRequest (JSON from FILE or stdin) → one RunResult (JSON on
 *   stdout); the local executor uses it through `docker exec`. A refusal prints
 *   `{"error":{"code","message"}}` and exits 3.
 * - `init [FILE]` — the workspace from an uncompressed tar (FILE or stdin), then its baseline.
 * - `idle` — the container's main process for local use: exits after PLANPORT_IDLE_S seconds
 *   (default 900) with no workspace or run, so a container whose host died goes away by itself.
 */

const USAGE = "usage: runner serve [--port N] | run [--request FILE] | init [FILE] | idle";
const IDLE_CHECK_MS = 5_000;

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === "serve") {
    await serve(Number(flag(rest, "--port") ?? process.env.PORT ?? "8080"));
    return -1;
  }
  if (mode === "run") return runMode(flag(rest, "--request"));
  if (mode === "init") return initMode(rest[0]);
  if (mode === "idle") return idleMode(Number(process.env.PLANPORT_IDLE_S ?? "900"));
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

function flag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

async function runMode(requestFile: string | undefined): Promise<number> {
  const text = requestFile === undefined ? await readStdin() : await readFile(requestFile, "utf8");
  if (requestFile !== undefined) await rm(requestFile, { force: true });
  const parsed = RunRequest.safeParse(JSON.parse(text));
  if (!parsed.success) return refuse("bad_request", parsed.error.message);
  try {
    process.stdout.write(`${JSON.stringify(await runInWorkspace(parsed.data))}\n`);
    return 0;
  } catch (err) {
    if (err instanceof WorkspaceMissingError) {
      return refuse(EXECUTOR_ERRORS.workspaceMissing, err.message);
    }
    if (err instanceof RefusedError) return refuse("bad_request", err.message);
    throw err;
  }
}

async function initMode(tarFile: string | undefined): Promise<number> {
  let file = tarFile;
  if (file === undefined) {
    file = `${STATE_DIR}/incoming.tar`;
    await pipeline(process.stdin, createWriteStream(file));
  }
  try {
    await fillWorkspace(file);
    return 0;
  } catch (err) {
    if (err instanceof RefusedError) return refuse("bad_request", err.message);
    throw err;
  } finally {
    await rm(file, { force: true });
  }
}

async function idleMode(idleS: number): Promise<number> {
  await touchActivity();
  const stop = (): void => process.exit(0);
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_CHECK_MS));
    const last = await stat(ACTIVITY_FILE).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (Date.now() - last > idleS * 1000) {
      process.stderr.write(`planport runner: idle for ${idleS} s, exiting\n`);
      return 0;
    }
  }
}

function refuse(code: string, text: string): number {
  process.stdout.write(`${JSON.stringify({ error: { code, message: text } })}\n`);
  return 3;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`planport runner: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
