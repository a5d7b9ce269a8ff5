import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { abortAfter } from "../http/abort-after.ts";
import { readBodyAtMost } from "../http/response-body.ts";
import { PACKAGE_ROOT } from "../package-root.ts";

/**
 * Runs the planport worker on this machine, in one of two ways:
 *
 * - `"built"`: the bundle `npm run build` made (`dist/worker/`), run in workerd by the worker
 *   host (worker-host.ts) from planport's own config. What the embedded local worker and
 *   `planport serve` run: the host binds the port itself and says on a pipe when the worker
 *   listens there, so the caller knows the worker on that port is the one it started (no
 *   health check that any program on the port could answer); nothing is written outside the
 *   folders it is given.
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
  /**
   * With `"built"` and a `port`: take a free port when that one is in use (the embedded
   * worker's old port is only a preference); without it, a port in use is refused.
   */
  anyPort?: boolean;
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
  /** With `"built"`: the runtime's temporary files go here (default: the OS's). */
  tmpDir?: string;
  /** With `"built"`: a private folder for the runtime's config while it starts. */
  configDir?: string;
  /**
   * With `"built"`: the host stops the worker once, for `afterSeconds`, no command has been
   * registered in `usersDir` and no session has been open (the embedded worker; usage.ts).
   */
  idleExit?: { afterSeconds: number; usersDir: string; startLock: string; record: string };
}

export interface WorkerProcess {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** With `"built"`: the Workers runtime's pid (workerd, in the host's process group). */
  readonly runtimePid?: number;
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

/** The worker host could not start the worker, and said why (`code`: `port_in_use`, …). */
export class WorkerStartError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function startOnce(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  return opts.runtime === "built" ? startBuilt(opts) : startWrangler(opts);
}

/**
 * The worker host on the built bundle: it binds the port and says on a pipe (its descriptor 3)
 * when workerd listens there, `{"event":"ready","port","runtime_pid"}`, or why it could not.
 */
async function startBuilt(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const args = builtArgs(opts);
  const logFd = opts.logFile === undefined ? undefined : openSync(opts.logFile, "a", 0o600);
  // The built worker runs from its state folder: nothing of it lands in the package's folder,
  // which an ordinary user may not be able to write.
  mkdirSync(opts.persistDir, { recursive: true, mode: 0o700 });
  const child = spawn(process.execPath, args, {
    cwd: opts.persistDir,
    // Its own process group, so a kill reaches workerd too and never leaves a port held.
    detached: true,
    stdio:
      logFd === undefined ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", logFd, logFd, "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  if (logFd !== undefined) closeSync(logFd);
  const { exited, recent } = watchChild(child, opts.log);
  stopOnExit(child);
  let ready: { port: number; runtimePid: number };
  try {
    ready = await readyReport(child, () => recent.join("\n"));
  } catch (err) {
    killGroup(child, "SIGKILL");
    await exited;
    throw err;
  } finally {
    starting.delete(child);
  }
  // Only once it is ready: until then this process must stay alive to see it exit.
  if (opts.unref) child.unref();
  return workerProcess(child, exited, ready.port, ready.runtimePid);
}

/** `wrangler dev` on the sources: ready when its health check answers. */
async function startWrangler(opts: WorkerProcessOptions): Promise<WorkerProcess> {
  const port = opts.port ?? (await freePort());
  const args = await wranglerArgs(opts, port);
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
      ...(opts.tmpDir === undefined ? {} : { TMPDIR: opts.tmpDir }),
      // wrangler's debug logs go to a temporary folder, not to ~/.config/.wrangler/logs
      // where every run would leave one.
      WRANGLER_LOG_PATH: join(tmpdir(), "planport-wrangler-logs"),
    },
  });
  if (logFd !== undefined) closeSync(logFd);
  const { exited, recent } = watchChild(child, opts.log);
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
  if (opts.unref) child.unref();
  return workerProcess(child, exited, port);
}

/** Its exit, and its last lines of output (also passed to `log`). */
function watchChild(
  child: ChildProcess,
  log: ((line: string) => void) | undefined,
): { exited: Promise<void>; recent: string[] } {
  const exited = once(child, "exit").then(() => undefined);
  const recent: string[] = [];
  pipeLines(child, (line) => {
    recent.push(line);
    if (recent.length > OUTPUT_TAIL_LINES) recent.shift();
    log?.(line);
  });
  return { exited, recent };
}

function workerProcess(
  child: ChildProcess,
  exited: Promise<void>,
  port: number,
  runtimePid?: number,
): WorkerProcess {
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    runtimePid,
    exited,
    async stop() {
      // The host gone, workerd perhaps not: whatever is left of the group goes.
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

/** The host's one line on its ready pipe; an exit or a closed pipe without one is an error. */
function readyReport(
  child: ChildProcess,
  output: () => string,
): Promise<{ port: number; runtimePid: number }> {
  const pipe = child.stdio[3] as Readable | null | undefined;
  return new Promise((resolveReady, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(new Error(`the worker did not become ready within ${READY_TIMEOUT_MS / 1000}s`)),
        ),
      READY_TIMEOUT_MS,
    );
    const early = async () => {
      // The exit can come before the last output: give the pipes a moment to drain.
      await new Promise((r) => setTimeout(r, 100));
      const said = output().trim();
      settle(() =>
        reject(
          new EarlyExit(
            `the worker exited (code ${child.exitCode ?? child.signalCode}) before it was ready` +
              (said === "" ? "" : `; its last output:\n${said}`),
          ),
        ),
      );
    };
    child.once("exit", () => void early());
    if (!pipe) return settle(() => reject(new Error("no ready pipe to the worker host")));
    pipeLines({ stdout: pipe, stderr: null }, (line) => {
      let message: {
        event?: unknown;
        port?: unknown;
        runtime_pid?: unknown;
        code?: unknown;
        message?: unknown;
      };
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (message.event === "ready" && typeof message.port === "number") {
        const runtimePid = typeof message.runtime_pid === "number" ? message.runtime_pid : -1;
        settle(() => resolveReady({ port: message.port as number, runtimePid }));
      } else if (message.event === "failed") {
        const code = typeof message.code === "string" ? message.code : "start_failed";
        settle(() => reject(new WorkerStartError(code, String(message.message))));
      }
    });
  });
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
    // Never wrangler's own containers (they need Docker with buildx and a registry): commands
    // run through the local executor here, whatever the config's [dev] says.
    "--enable-containers=false",
    "--log-level",
    "warn",
  ];
  for (const [name, value] of Object.entries(opts.vars ?? {}))
    args.push("--var", `${name}:${value}`);
  if (opts.envFile !== undefined) args.push("--env-file", opts.envFile);
  return args;
}

/** The worker host on the built bundle (dist/, made by `npm run build`). */
function builtArgs(opts: WorkerProcessOptions): string[] {
  const host = join(PACKAGE_ROOT, "dist", "cli", "worker-host.js");
  if (!existsSync(host) || !existsSync(join(PACKAGE_ROOT, "dist", "worker", "index.js"))) {
    throw new Error(
      `the worker is not built in ${PACKAGE_ROOT} (no dist/); run \`npm run build\` there (\`npm ci\` does it)`,
    );
  }
  const args = [
    host,
    "--port",
    String(opts.port ?? 0),
    "--persist",
    opts.persistDir,
    "--config-dir",
    opts.configDir ?? opts.persistDir,
    "--ready-fd",
    "3",
  ];
  if (opts.anyPort) args.push("--any-port");
  if (opts.idleExit !== undefined) {
    const idle = opts.idleExit;
    args.push("--idle-exit-s", String(idle.afterSeconds), "--users", idle.usersDir);
    args.push("--start-lock", idle.startLock, "--record", idle.record);
  }
  if (opts.envFile !== undefined) args.push("--env-file", opts.envFile);
  if (opts.logFile !== undefined) args.push("--log", opts.logFile);
  if (opts.tmpDir !== undefined) args.push("--tmp", opts.tmpDir);
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

function pipeLines(
  child: { stdout: Readable | null; stderr: Readable | null },
  log: (line: string) => void,
): void {
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
