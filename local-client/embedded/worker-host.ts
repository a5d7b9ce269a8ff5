import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { LocalExecutor } from "../execution/server.ts";
import { PACKAGE_ROOT } from "../package-root.ts";
import { withExecutor } from "./host-executor.ts";
import { workerdBinary } from "./workerd-binary.ts";
import {
  type AssetsManifest,
  type BuiltWorker,
  SOCKET_NAME,
  workerdConfig,
} from "./workerd-config.ts";

/**
 * The embedded worker's host: a small Node process that runs the built worker
 * (`dist/worker/`, made by `npm run build`) in workerd, the Workers runtime, from a
 * configuration it writes itself (workerd-config.ts). `planport` starts it detached for the
 * embedded local worker and in the foreground for `planport serve` (worker-process.ts).
 *
 * What it does, in order:
 *
 * 1. binds the TCP port on 127.0.0.1 itself (exclusively: a port another program holds is
 *    refused, never shared) and hands that socket to workerd (`--socket-fd`), so the worker
 *    answers on the port this host proved it holds — no moment where the port is named but
 *    not yet bound;
 * 2. writes the config (mode 0600, in a 0700 folder; it holds the vars of the env file) and
 *    starts workerd on it with an empty environment, then deletes the config once workerd has
 *    read it;
 * 3. reports `{"event":"ready","port","runtime_pid"}` on the ready descriptor (`--ready-fd`)
 *    when workerd listens, or `{"event":"failed","message"}`;
 * 4. writes workerd's output to the log (rotated at {@link LOG_ROTATE_BYTES}, {@link LOG_KEEP}
 *    old files kept) or to its own stderr;
 * 5. stops workerd on SIGTERM, SIGINT or SIGHUP, and exits when workerd exits.
 *
 * Why not Miniflare (what this host ran before) or `wrangler dev`: both are development
 * servers. Miniflare opens a second HTTP server for workerd's call-backs that asks for no
 * credential and reads and writes files for whoever connects; a daemon a user leaves running
 * for days on a shared machine must offer nothing but the worker's own API (docs/DESIGN.md
 * "The embedded worker"). It is also faster to start and about 170 MB smaller in memory.
 *
 * @example
 * node dist/cli/worker-host.js --port 8787 --persist ~/.local/share/planport/persist \
 *   --config-dir ~/.local/share/planport/embedded --env-file ~/.local/share/planport/embedded/worker.env \
 *   --log ~/.local/share/planport/embedded/worker.log --ready-fd 3
 */

/** Where a log is rotated, and how many old ones are kept (`worker.log.1`, `worker.log.2`). */
export const LOG_ROTATE_BYTES = 1024 * 1024;
export const LOG_KEEP = 2;
/** How long workerd has to stop cleanly before it is killed. */
const RUNTIME_STOP_GRACE_MS = 5_000;

/** The built worker (`npm run build`). */
export const WORKER_DIR = join(PACKAGE_ROOT, "dist", "worker");

export interface HostArgs {
  /** 0: any free port. */
  port: number;
  /** With `--any-port`: a free port when `port` is taken (the embedded worker); else refuse. */
  anyPort: boolean;
  persistDir: string;
  /** A private (0700) folder for the config file while workerd reads it. */
  configDir: string;
  envFile?: string;
  logFile?: string;
  /** `--var NAME=value` pairs (tests; real secrets come in the env file, not on `ps`). */
  vars: Record<string, string>;
  /** A descriptor the starter reads the ready (or failed) line from. */
  readyFd?: number;
  /** The runtime's temporary folder (its TMPDIR). */
  tmpDir?: string;
  /** Stop once unused for this long (the embedded worker): see {@link watchIdle}. */
  idleExit?: { afterMs: number; usersDir: string; startLock: string; record: string };
}

const USAGE =
  "usage: worker-host --port N [--any-port] --persist DIR --config-dir DIR [--env-file FILE] [--log FILE] [--tmp DIR] [--ready-fd N] [--idle-exit-s S --users DIR --start-lock FILE --record FILE] [--var NAME=value]…";

/**
 * Reads the host's arguments.
 *
 * @example
 * hostArgs(["--port", "8787", "--persist", "/tmp/p", "--config-dir", "/tmp/c"])
 * // → { port: 8787, anyPort: false, persistDir: "/tmp/p", configDir: "/tmp/c", vars: {} }
 */
export function hostArgs(argv: string[]): HostArgs {
  const value = (flag: string): string | undefined => {
    const at = argv.indexOf(flag);
    return at === -1 ? undefined : argv[at + 1];
  };
  const port = Number(value("--port"));
  const persistDir = value("--persist");
  const configDir = value("--config-dir");
  const readyFd = value("--ready-fd");
  if (
    !Number.isInteger(port) ||
    port < 0 ||
    port > 65_535 ||
    persistDir === undefined ||
    configDir === undefined ||
    (readyFd !== undefined && !/^\d+$/.test(readyFd))
  ) {
    throw new Error(USAGE);
  }
  const idleSeconds = value("--idle-exit-s");
  const usersDir = value("--users");
  const startLock = value("--start-lock");
  const record = value("--record");
  let idleExit: HostArgs["idleExit"];
  if (idleSeconds !== undefined) {
    const afterMs = Number(idleSeconds) * 1000;
    if (
      !(afterMs > 0) ||
      usersDir === undefined ||
      startLock === undefined ||
      record === undefined
    ) {
      throw new Error(USAGE);
    }
    idleExit = { afterMs, usersDir, startLock, record };
  }
  const vars: Record<string, string> = {};
  argv.forEach((arg, i) => {
    const pair = arg === "--var" ? argv[i + 1] : undefined;
    const at = pair?.indexOf("=") ?? -1;
    if (pair !== undefined && at > 0) vars[pair.slice(0, at)] = pair.slice(at + 1);
  });
  return {
    port,
    anyPort: argv.includes("--any-port"),
    persistDir,
    configDir,
    envFile: value("--env-file"),
    logFile: value("--log"),
    vars,
    readyFd: readyFd === undefined ? undefined : Number(readyFd),
    tmpDir: value("--tmp"),
    idleExit,
  };
}

/**
 * The vars of a dotenv file as `worker.env` holds them (`NAME=value` a line; `#` comments and
 * blank lines skipped; the value is everything after the first `=`).
 *
 * @example
 * envFileVars("PLANPORT_TOKENS=pp_x\n# note\nPLANPORT_PLANNER=offline\n")
 * // → { PLANPORT_TOKENS: "pp_x", PLANPORT_PLANNER: "offline" }
 */
export function envFileVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
    if (match?.[1] !== undefined) vars[match[1]] = match[2] ?? "";
  }
  return vars;
}

/**
 * Appends lines to a log file and rotates it past {@link LOG_ROTATE_BYTES}
 * (`worker.log` → `worker.log.1` → `worker.log.2`, the oldest dropped).
 */
export class RotatingLog {
  #size: number;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    this.#size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  }

  write(text: string): void {
    if (this.#size + text.length > LOG_ROTATE_BYTES && this.#size > 0) this.rotate();
    appendFileSync(this.path, text, { mode: 0o600 });
    this.#size += Buffer.byteLength(text);
  }

  rotate(): void {
    rmSync(`${this.path}.${LOG_KEEP}`, { force: true });
    for (let n = LOG_KEEP - 1; n >= 1; n--) {
      try {
        renameSync(`${this.path}.${n}`, `${this.path}.${n + 1}`);
      } catch {
        // Not there yet.
      }
    }
    try {
      renameSync(this.path, `${this.path}.1`);
    } catch {
      // Not there yet.
    }
    this.#size = 0;
  }
}

function pipeLines(stream: Readable, sink: (line: string) => void): void {
  stream.setEncoding("utf8");
  let buffered = "";
  stream.on("data", (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) sink(line);
  });
}

/** How often an idle watch looks, at most (and at least once a second). */
const IDLE_CHECK_MAX_MS = 60_000;

/**
 * Stops the worker (`stopWorker`) once, for `afterMs`, no planport command has been registered
 * as its user and no session in it has been open (usage.ts) — the embedded worker goes away
 * when nothing needs it. The stop happens under the start lock, and the record and the
 * runtime are gone before the lock is released, so a command arriving then starts a new worker
 * rather than using one that is stopping (or running beside it on the same state folder).
 */
function watchIdle(
  idle: NonNullable<HostArgs["idleExit"]>,
  url: string,
  tokens: string[],
  stopWorker: () => Promise<void>,
): void {
  let idleSince: number | null = null;
  let checking = false;
  const interval = Math.max(1_000, Math.min(IDLE_CHECK_MAX_MS, idle.afterMs / 4));
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      // Loaded at the first check, not at the start: they bring the API client and zod, which
      // the worker's start does not need (issue 32).
      const [{ tryPidLock }, { readRecord }, { liveUsers, openSessions }] = await Promise.all([
        import("../poll/pid-lock.ts"),
        import("./record.ts"),
        import("./usage.ts"),
      ]);
      const unused = async () => {
        if (liveUsers(idle.usersDir).length > 0) return false;
        for (const token of tokens) {
          const open = await openSessions(url, token);
          if (open === null || open.length > 0) return false;
        }
        return true;
      };
      if (!(await unused())) {
        idleSince = null;
        return;
      }
      idleSince ??= Date.now();
      if (Date.now() - idleSince < idle.afterMs) return;
      const lock = tryPidLock(idle.startLock);
      if (!lock.ok) return;
      try {
        // A command may have registered while the sessions were listed.
        if (liveUsers(idle.usersDir).length > 0) {
          idleSince = null;
          return;
        }
        if (readRecord(idle.record)?.pid === process.pid) rmSync(idle.record, { force: true });
        await stopWorker();
      } finally {
        lock.value();
      }
      process.exit(0);
    } finally {
      checking = false;
    }
  };
  setInterval(() => void check(), interval).unref();
}

/** Why the host could not start the worker, said on the ready descriptor and in the log. */
class StartFailure extends Error {
  constructor(
    message: string,
    readonly code = "start_failed",
  ) {
    super(message);
  }
}

/**
 * Binds 127.0.0.1:`port` exclusively; with `anyPort`, a free port when that one is taken.
 * A port held by any other program — another user's included — is never shared.
 */
async function bindPort(port: number, anyPort: boolean): Promise<Server> {
  const attempt = (p: number) =>
    new Promise<Server>((resolveBound, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port: p, exclusive: true }, () => resolveBound(server));
    });
  try {
    return await attempt(port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" && anyPort) return attempt(0);
    if (code === "EADDRINUSE") {
      throw new StartFailure(
        `port ${port} on 127.0.0.1 is in use by another program (perhaps another user's); choose another with --port`,
        "port_in_use",
      );
    }
    throw new StartFailure(`could not listen on 127.0.0.1:${port}: ${(err as Error).message}`);
  }
}

/** The descriptor of a bound server: what workerd is handed. */
function serverFd(server: Server): number {
  // Node keeps a listening socket's descriptor on its handle; there is no public accessor.
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) {
    throw new StartFailure("this platform does not let planport hand a socket to workerd");
  }
  return fd;
}

/** The built worker's options and assets index (dist/worker/). */
function builtWorker(): { built: BuiltWorker; assets: AssetsManifest | null } {
  const built = JSON.parse(readFileSync(join(WORKER_DIR, "options.json"), "utf8")) as BuiltWorker;
  const assets =
    built.options.assets === undefined
      ? null
      : (JSON.parse(readFileSync(join(WORKER_DIR, "assets.json"), "utf8")) as AssetsManifest);
  return { built, assets };
}

/**
 * Starts workerd on the bound socket and resolves once it listens, with the port.
 */
async function startRuntime(
  args: HostArgs,
  server: Server,
  sink: (line: string) => void,
): Promise<{
  runtime: ChildProcess;
  port: number;
  tokens: string[];
  executor: LocalExecutor | null;
}> {
  const { built, assets } = builtWorker();
  const fromFile =
    args.envFile === undefined ? {} : envFileVars(readFileSync(args.envFile, "utf8"));
  const { vars, executor } = await withExecutor(
    { ...fromFile, ...args.vars },
    resolve(args.persistDir),
    sink,
  );
  mkdirSync(args.configDir, { recursive: true, mode: 0o700 });
  mkdirSync(args.persistDir, { recursive: true, mode: 0o700 });
  const configPath = join(args.configDir, `workerd-${process.pid}.capnp`);
  const { text, directories } = workerdConfig({
    built,
    configDir: args.configDir,
    workerModule: join(WORKER_DIR, built.main),
    runtimeDir: join(WORKER_DIR, "runtime"),
    assets:
      assets === null || built.options.assets === undefined
        ? null
        : { directory: resolve(PACKAGE_ROOT, built.options.assets.directory), manifest: assets },
    persistDir: resolve(args.persistDir),
    vars,
  });
  for (const dir of directories) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const port = (server.address() as { port: number }).port;
  let runtime: ChildProcess;
  try {
    writeFileSync(configPath, text, { mode: 0o600 });
    runtime = spawn(
      workerdBinary(),
      ["serve", "--experimental", configPath, `--socket-fd=${SOCKET_NAME}=3`, "--control-fd=4"],
      {
        cwd: args.configDir,
        // Nothing of the user's environment: the worker's settings are all in its config.
        env: { ...(args.tmpDir === undefined ? {} : { TMPDIR: args.tmpDir }), LANG: "C.UTF-8" },
        stdio: ["ignore", "pipe", "pipe", serverFd(server), "pipe"],
      },
    );
    if (runtime.stdout) pipeLines(runtime.stdout, sink);
    if (runtime.stderr) pipeLines(runtime.stderr, sink);
    await listening(runtime);
  } finally {
    // workerd has read its config (or failed): the file with the vars goes.
    rmSync(configPath, { force: true });
  }
  const tokens = (vars.PLANPORT_TOKENS ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
    // `label:token` entries: the token is what follows the first ":".
    .map((entry) => (entry.includes(":") ? entry.slice(entry.indexOf(":") + 1) : entry));
  return { runtime, port, tokens, executor };
}

/** Resolves when workerd reports its socket listening on the control descriptor. */
function listening(runtime: ChildProcess): Promise<void> {
  const control = runtime.stdio[4] as Readable | null | undefined;
  return new Promise((resolveListening, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(
        new StartFailure(
          `workerd exited (${signal ?? `code ${code}`}) before it listened; its output is in the log`,
        ),
      );
    runtime.once("exit", onExit);
    runtime.once("error", (err) =>
      reject(new StartFailure(`workerd did not start: ${err.message}`)),
    );
    if (!control) return reject(new StartFailure("no control descriptor to workerd"));
    pipeLines(control, (line) => {
      try {
        const message = JSON.parse(line) as { event?: string; socket?: string };
        if (message.event === "listen" && message.socket === SOCKET_NAME) {
          runtime.off("exit", onExit);
          resolveListening();
        }
      } catch {
        // Not a control message.
      }
    });
  });
}

function report(fd: number | undefined, message: Record<string, unknown>): void {
  if (fd === undefined) return;
  try {
    writeFileSync(fd, `${JSON.stringify(message)}\n`);
  } catch {
    // The starter is gone: nobody to tell.
  }
}

async function main(): Promise<void> {
  const args = hostArgs(process.argv.slice(2));
  const log = args.logFile === undefined ? null : new RotatingLog(args.logFile);
  const sink = (line: string) => {
    const text = `${new Date().toISOString()} ${line}\n`;
    if (log) log.write(text);
    else process.stderr.write(text);
  };
  let runtime: ChildProcess | null = null;
  let executor: LocalExecutor | null = null;
  let stopping = false;
  const stopRuntime = async (why: string) => {
    if (stopping) return;
    stopping = true;
    sink(`stopping (${why})`);
    if (runtime !== null && runtime.exitCode === null && runtime.signalCode === null) {
      runtime.kill("SIGTERM");
      const timer = setTimeout(() => runtime?.kill("SIGKILL"), RUNTIME_STOP_GRACE_MS);
      await once(runtime, "exit");
      clearTimeout(timer);
    }
    // Its containers go with it (a host killed outright leaves them to the next one's reaping).
    await executor?.stop().catch((err: unknown) => sink(`executor: ${String(err)}`));
  };
  const stop = async (why: string, code: number) => {
    await stopRuntime(why);
    process.exit(code);
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => void stop(signal, 0));
  }
  try {
    const server = await bindPort(args.port, args.anyPort);
    const started = await startRuntime(args, server, sink);
    runtime = started.runtime;
    executor = started.executor;
    // workerd holds the socket now; this process's copy would only keep the port open after
    // workerd is gone.
    server.close();
    // workerd exiting on its own ends the host; one this host is stopping is its to finish.
    runtime.once("exit", (code, signal) => {
      if (!stopping) void stop(`workerd exited: ${signal ?? code}`, 1);
    });
    const url = `http://127.0.0.1:${started.port}`;
    sink(`ready at ${url} (state in ${args.persistDir})`);
    report(args.readyFd, { event: "ready", port: started.port, runtime_pid: runtime.pid });
    if (args.idleExit !== undefined) {
      watchIdle(args.idleExit, url, started.tokens, () => stopRuntime("unused"));
    }
  } catch (err) {
    const message = err instanceof StartFailure ? err.message : String(err);
    const code = err instanceof StartFailure ? err.code : "start_failed";
    sink(`the worker did not start: ${message}`);
    report(args.readyFd, { event: "failed", code, message });
    await stop("start failed", 1);
  } finally {
    if (args.readyFd !== undefined) closeQuietly(args.readyFd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
