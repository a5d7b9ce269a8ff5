import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { abortAfter } from "./abort-after.ts";
import { readBodyAtMost } from "./response-body.ts";

/**
 * Runs the planport worker in wrangler's local runtime (`wrangler dev`): the embedded default
 * server and the end-to-end tests both start it through here.
 */

/** The planport package root (where `wrangler.toml` and `node_modules/wrangler` live). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const READY_TIMEOUT_MS = 60_000;
const READY_PROBE_INTERVAL_MS = 100;

export interface WorkerProcessOptions {
  /** Directory for Durable Object SQLite files and R2 blobs; survives restarts. */
  persistDir: string;
  /** Port to listen on; a free one is picked when absent. */
  port?: number;
  /** `--var NAME:value` pairs (tokens, planner choice…). */
  vars?: Record<string, string>;
  /** Where wrangler's own output goes; discarded when absent. */
  log?: (line: string) => void;
  /**
   * A dotenv file of vars and secrets (wrangler's `--env-file`): keeps tokens and API keys off
   * the command line, where other local users could read them in `ps`.
   */
  envFile?: string;
  /** Append wrangler's output to this file instead of piping it (a worker that outlives us). */
  logFile?: string;
  /** Let this Node process exit while the worker keeps running (with `logFile`). */
  unref?: boolean;
  /** A wrangler config to run instead of the package's wrangler.toml (tests derive one from it). */
  configPath?: string;
}

export interface WorkerProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Resolves when the process has exited (for whatever reason). */
  readonly exited: Promise<void>;
  /** Stops the process group gracefully (SIGTERM), then hard after a grace period. */
  stop(): Promise<void>;
  /** SIGKILLs the whole process group (wrangler and its workerd child): a crash. */
  kill(): Promise<void>;
}

/** Asks the OS for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (address === null || typeof address === "string") throw new Error("could not get a port");
  return address.port;
}

/**
 * Starts `wrangler dev` for this package and resolves once `/v1/healthz` answers.
 *
 * @example
 * const worker = await startWorkerProcess({ persistDir: "/tmp/pp", vars: { PLANPORT_TOKENS: "t" } });
 * await fetch(`${worker.url}/v1/healthz`);
 * await worker.stop();
 */
export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const port = opts.port ?? (await freePort());
  const inspectorPort = await freePort();
  const wranglerBin = join(PACKAGE_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  if (!existsSync(wranglerBin)) {
    throw new Error(
      `wrangler is not installed at ${wranglerBin}; run \`npm ci\` in ${PACKAGE_ROOT} first`,
    );
  }
  const args = [
    wranglerBin,
    "dev",
    "--config",
    opts.configPath ?? join(PACKAGE_ROOT, "wrangler.toml"),
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    opts.persistDir,
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
  ];
  for (const [name, value] of Object.entries(opts.vars ?? {}))
    args.push("--var", `${name}:${value}`);
  if (opts.envFile !== undefined) args.push("--env-file", opts.envFile);
  const logFd = opts.logFile === undefined ? undefined : openSync(opts.logFile, "a", 0o600);

  const child = spawn(process.execPath, args, {
    cwd: PACKAGE_ROOT,
    // Its own process group, so a kill reaches workerd too and never leaves a port held.
    detached: true,
    stdio: logFd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", logFd, logFd],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      NO_COLOR: "1",
      CI: "true",
    },
  });
  if (logFd !== undefined) closeSync(logFd);
  const exited = once(child, "exit").then(() => undefined);
  pipeLines(child, opts.log);

  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilHealthy(url, child);
  } catch (err) {
    killGroup(child, "SIGKILL");
    await exited;
    throw err;
  }
  // Only once it is ready: until then this process must stay alive to see it exit.
  if (opts.unref) child.unref();

  return {
    url,
    port,
    pid: child.pid ?? -1,
    exited,
    async stop() {
      // wrangler gone, workerd perhaps not: whatever is left of the group goes.
      if (hasExited(child)) return killGroup(child, "SIGKILL");
      killGroup(child, "SIGTERM");
      const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      killGroup(child, "SIGKILL");
      await exited;
    },
  };
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Signals wrangler's whole process group. Also after wrangler itself has exited: its workerd
 * children can outlive it (a crash of the parent), and the group id stays valid while any of
 * them is alive; once none is, the kill fails harmlessly.
 */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function pipeLines(child: ChildProcess, log: ((line: string) => void) | undefined): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    stream.setEncoding("utf8");
    let buffered = "";
    stream.on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      if (log) for (const line of lines) log(line);
    });
  }
}

async function waitUntilHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `wrangler dev exited (code ${child.exitCode ?? child.signalCode}) before it was ready`,
      );
    }
    const limit = abortAfter(2_000);
    try {
      const res = await fetch(`${url}/v1/healthz`, { signal: limit.signal });
      // Read under the same signal: Node's fetch can leave a body read pending after an abort
      // (docs/DESIGN.md "The client's requests").
      await readBodyAtMost(res, 64 * 1024, limit.signal);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    } finally {
      limit.clear();
    }
    await new Promise((r) => setTimeout(r, READY_PROBE_INTERVAL_MS));
  }
  throw new Error(`wrangler dev did not become ready at ${url} within ${READY_TIMEOUT_MS / 1000}s`);
}
