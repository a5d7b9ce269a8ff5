import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { abortAfter } from "../http/abort-after.ts";
import { readBodyAtMost } from "../http/response-body.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/**
 * Runs the planport worker on this machine, in one of two ways:
 *
 * - `"built"`: the bundle `npm run build` made (`dist/worker/`), run by the worker host
 *   (worker-host.ts, Miniflare's API). What the embedded local worker and `planport serve`
 *   run: no bundling at start, nothing written outside the folders it is given.
 * - `"wrangler"`: `wrangler dev` on the TypeScript entry (wrangler.toml's `main`), as a
 *   contributor runs it; the end-to-end tests start the worker this way.
 */

export { PACKAGE_ROOT };

const READY_TIMEOUT_MS = 60_000;
const READY_PROBE_INTERVAL_MS = 25;

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
  /** `"wrangler"` (default): `wrangler dev` on the sources; `"built"`: the built bundle. */
  runtime?: "wrangler" | "built";
  /** With `"built"`: Miniflare's temporary files go here (default: the OS's). */
  tmpDir?: string;
  /** With `"built"`: where the host keeps its code cache (none when absent). */
  cacheDir?: string;
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
 * Starts the worker (`opts.runtime`) and resolves once `/v1/healthz` answers; a worker that
 * exits before that is an error at once.
 *
 * @example
 * const worker = await startWorkerProcess({ persistDir: "/tmp/pp", vars: { PLANPORT_TOKENS: "t" } });
 * await fetch(`${worker.url}/v1/healthz`);
 * await worker.stop();
 */
export async function startWorkerProcess(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  // Ports this module picked were free a moment ago, not reserved: on a busy machine another
  // process can take one before the worker binds it, and the worker exits. Then it starts
  // again on fresh ports; a port the caller chose, or a worker that fails for another reason
  // three times, is the caller's error, with the worker's last lines.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (!(err instanceof EarlyExit) || opts.port !== undefined || attempt >= START_ATTEMPTS)
        throw err;
    }
  }
}

const START_ATTEMPTS = 3;

/** The worker exited before it answered its health check. */
class EarlyExit extends Error {}

async function startOnce(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const port = opts.port ?? (await freePort());
  const args = opts.runtime === "built" ? builtArgs(opts, port) : await wranglerArgs(opts, port);
  const logFd = opts.logFile === undefined ? undefined : openSync(opts.logFile, "a", 0o600);

  // The built worker runs from its state folder: nothing of it lands in the package's folder,
  // which an ordinary user may not be able to write.
  const cwd = opts.runtime === "built" ? opts.persistDir : PACKAGE_ROOT;
  mkdirSync(cwd, { recursive: true, mode: 0o700 });
  const child = spawn(process.execPath, args, {
    cwd,
    // Its own process group, so a kill reaches workerd too and never leaves a port held.
    detached: true,
    stdio: logFd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", logFd, logFd],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      NO_COLOR: "1",
      CI: "true",
      ...(opts.tmpDir === undefined ? {} : { TMPDIR: opts.tmpDir }),
      // wrangler's debug logs go to a temporary folder, not to ~/.config/.wrangler/logs
      // where every run would leave one.
      ...(opts.runtime === "built"
        ? {}
        : { WRANGLER_LOG_PATH: join(tmpdir(), "planport-wrangler-logs") }),
    },
  });
  if (logFd !== undefined) closeSync(logFd);
  const exited = once(child, "exit").then(() => undefined);
  const recent: string[] = [];
  pipeLines(child, (line) => {
    recent.push(line);
    if (recent.length > OUTPUT_TAIL_LINES) recent.shift();
    opts.log?.(line);
  });

  const url = `http://127.0.0.1:${port}`;
  stopOnExit(child);
  try {
    // With a log file the output is there, and the caller shows it.
    await waitUntilHealthy(url, child, () => recent.join("\n"));
  } catch (err) {
    killGroup(child, "SIGKILL");
    await exited;
    throw err;
  } finally {
    starting.delete(child);
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

/** `wrangler dev` on the TypeScript entry. */
async function wranglerArgs(opts: WorkerProcessOptions, port: number): Promise<string[]> {
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
  return args;
}

/** The worker host on the built bundle (dist/, made by `npm run build`). */
function builtArgs(opts: WorkerProcessOptions, port: number): string[] {
  const host = join(PACKAGE_ROOT, "dist", "cli", "worker-host.js");
  if (!existsSync(host) || !existsSync(join(PACKAGE_ROOT, "dist", "worker", "index.js"))) {
    throw new Error(
      `the worker is not built in ${PACKAGE_ROOT} (no dist/); run \`npm run build\` there (\`npm ci\` does it)`,
    );
  }
  const args = [host, "--port", String(port), "--persist", opts.persistDir];
  if (opts.envFile !== undefined) args.push("--env-file", opts.envFile);
  if (opts.logFile !== undefined) args.push("--log", opts.logFile);
  if (opts.cacheDir !== undefined) args.push("--cache", opts.cacheDir);
  for (const [name, value] of Object.entries(opts.vars ?? {}))
    args.push("--var", `${name}=${value}`);
  return args;
}

/** Workers still starting: nothing has recorded them yet, so no one else could stop them. */
const starting = new Set<ChildProcess>();
let exitHookSet = false;

/**
 * A worker that is not ready when this process exits (a second Ctrl-C during start-up) is
 * stopped with it, rather than left running where no record names it.
 */
function stopOnExit(child: ChildProcess): void {
  if (!exitHookSet) {
    exitHookSet = true;
    process.on("exit", () => {
      for (const c of starting) killGroup(c, "SIGKILL");
    });
  }
  starting.add(child);
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

const OUTPUT_TAIL_LINES = 30;

function pipeLines(child: ChildProcess, log: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    stream.setEncoding("utf8");
    let buffered = "";
    stream.on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) log(line);
    });
  }
}

async function waitUntilHealthy(
  url: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      // The exit event can come before the last output: give the pipes a moment to drain.
      await new Promise((r) => setTimeout(r, 100));
      const said = output().trim();
      throw new EarlyExit(
        `the worker exited (code ${child.exitCode ?? child.signalCode}) before it was ready` +
          (said === "" ? "" : `; its last output:\n${said}`),
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
  throw new Error(`the worker did not become ready at ${url} within ${READY_TIMEOUT_MS / 1000}s`);
}
