import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataDir, generateToken, writePrivateFile } from "../home.ts";
import { createApi } from "../http/api.ts";
import { waitForPidLock } from "../poll/pid-lock.ts";
import { type EmbeddedRecord, isOurWorker, readRecord, stopRecordedWorker } from "./record.ts";
import { liveUsers, openSessions } from "./usage.ts";
import { startWorkerProcess } from "./worker-process.ts";

/**
 * The embedded local worker: with no server configured, the CLI runs the planport worker on
 * this machine (the built worker in workerd, worker-host.ts; state, temporary files and its
 * log under `$XDG_DATA_HOME/planport`, nothing anywhere else).
 *
 * Decision: the worker runs detached and may outlive the CLI that started it. A planning
 * session is driven by Durable Object alarms inside that worker and its review link points at
 * it, so a worker tied to one CLI process would freeze the session the moment the CLI exits —
 * breaking "Ctrl-C leaves the session running" and "approved: the cloud is executing". So:
 * CLIs register as users of the worker; the last user to leave stops it cleanly when no
 * session in it is still open (not archived, not done), and otherwise leaves it running for
 * those sessions; the host stops it once it has been unused for
 * {@link DEFAULT_IDLE_EXIT_S} (usage.ts), and sessions nobody waits for or reviews expire after
 * {@link EMBEDDED_IDLE_DAYS} day (PLANPORT_IDLE_DAYS). Read-only commands never start it.
 *
 * A later CLI reuses a running worker only when it is the recorded one (record.ts: its pid
 * belongs to this user and started when the record says) and it proves on its port that it
 * holds this machine's token (src/protocol/server-proof.ts) — the token is sent to nothing
 * that has not proved that.
 */

/** How long sessions of the embedded worker that nobody waits for or reviews stay open. */
export const EMBEDDED_IDLE_DAYS = "1";
/** How long the embedded worker keeps running with no command using it and no session open. */
export const DEFAULT_IDLE_EXIT_S = 300;
/** How long a running worker has to prove itself before it counts as not running. */
const PROVE_TIMEOUT_MS = 5_000;

/** wrangler dev plus workerd start-up, with room for a slow first run. */
const START_LOCK_WAIT_MS = 120_000;
/** Planner keys the user's environment may carry to the local worker. */
const PROVIDER_VARS = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_MODEL",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "OPENAI_MODEL",
  "PLANPORT_ALLOW_SCRIPTED",
  "PLANPORT_MAX_TURNS",
  "PLANPORT_RETENTION_DAYS",
  "PLANPORT_IDLE_DAYS",
  // "overlay": approved plans are carried out without commands (no Docker needed).
  "PLANPORT_EXECUTION",
] as const;

export interface EmbeddedPaths {
  root: string;
  persistDir: string;
  tokenFile: string;
  record: string;
  envFile: string;
  log: string;
  users: string;
  startLock: string;
  /** The port the worker last ran on, tried first so review links survive a restart. */
  lastPort: string;
  /** The runtime's temporary files (its TMPDIR). */
  tmp: string;
  /** The private folder the host writes the runtime's config to while it starts. */
  embedded: string;
}

/**
 * Where the embedded worker keeps its state, token, record, env file and log.
 *
 * @example
 * embeddedPaths().persistDir // → "~/.local/share/planport/persist"
 */
export function embeddedPaths(env: NodeJS.ProcessEnv = process.env): EmbeddedPaths {
  const root = dataDir(env);
  return {
    root,
    persistDir: join(root, "persist"),
    tokenFile: join(root, "token"),
    record: join(root, "embedded", "worker.json"),
    envFile: join(root, "embedded", "worker.env"),
    log: join(root, "embedded", "worker.log"),
    users: join(root, "embedded", "users"),
    startLock: join(root, "embedded", "start.lock"),
    lastPort: join(root, "embedded", "port"),
    tmp: join(root, "tmp"),
    embedded: join(root, "embedded"),
  };
}

/**
 * The dev token of this machine's local worker, generated once and stored with mode 0600.
 *
 * @example
 * const token = localToken(); // "pp_…", the same on every call
 */
export function localToken(env: NodeJS.ProcessEnv = process.env): string {
  const { tokenFile } = embeddedPaths(env);
  const existing = readToken(tokenFile);
  if (existing !== null) return existing;
  const token = generateToken();
  writePrivateFile(tokenFile, `${token}\n`);
  return token;
}

function readToken(tokenFile: string): string | null {
  try {
    const token = readFileSync(tokenFile, "utf8").trim();
    return token === "" ? null : token;
  } catch {
    return null;
  }
}

/**
 * The vars of a local worker as a dotenv file (0600), so the token and API keys stay off the
 * command line where `ps` would show them.
 */
export function writeWorkerEnvFile(
  path: string,
  vars: { token: string; planner: string },
  env: NodeJS.ProcessEnv = process.env,
): void {
  const lines = [`PLANPORT_TOKENS=${vars.token}`, `PLANPORT_PLANNER=${vars.planner}`];
  // Local sessions nobody waits for or reviews expire after a day unless the user says
  // otherwise (the deployed default, 30 days, would keep the worker running for a month).
  if (!env.PLANPORT_IDLE_DAYS) lines.push(`PLANPORT_IDLE_DAYS=${EMBEDDED_IDLE_DAYS}`);
  for (const name of PROVIDER_VARS) {
    const value = env[name];
    if (value !== undefined && value !== "" && !/[\r\n]/.test(value))
      lines.push(`${name}=${value}`);
  }
  writePrivateFile(path, `${lines.join("\n")}\n`);
}

/**
 * The running embedded worker, if its record is current: the recorded process is alive and
 * ours, and the worker on its port proves it holds this machine's token.
 *
 * @example
 * const running = await runningEmbeddedWorker(); // null when none runs
 */
export async function runningEmbeddedWorker(
  env: NodeJS.ProcessEnv = process.env,
): Promise<EmbeddedRecord | null> {
  const paths = embeddedPaths(env);
  const record = readRecord(paths.record);
  if (!record || !isOurWorker(record)) return null;
  const token = readToken(paths.tokenFile);
  if (token === null) return null;
  const proof = await createApi({ server: record.url, token }).proveServer(PROVE_TIMEOUT_MS);
  return proof.kind === "proved" ? record : null;
}

/** The embedded worker is not running and the command was asked not to start it. */
export class EmbeddedNotRunning extends Error {
  constructor(readonly persistDir: string) {
    super(
      `the local planport worker is not running; its sessions are kept in ${persistDir} — \`planport embedded --start\` starts it to see them`,
    );
  }
}

export interface EmbeddedLease {
  server: string;
  token: string;
  /** True when this call started the worker (it took a moment). */
  started: boolean;
  /**
   * The port the worker ran on before, when this start could not have it back (another
   * program holds it): review links given out before lead there, not to this worker.
   */
  movedFrom: number | null;
  pid: number;
  /**
   * Leaves the worker; stops it when this was its last user and no session in it is open.
   * Says what happened, so the CLI can tell the user a worker keeps running.
   */
  release(): Promise<{ stopped: boolean; openSessions: string[] }>;
  /** Leaves the worker without stopping it (`planport embedded --start`). */
  detach(): void;
}

/**
 * Uses the embedded worker, starting it (and waiting until it is ready) when none runs; with
 * `start: false` (read-only commands) an {@link EmbeddedNotRunning} instead.
 *
 * @example
 * const local = await useEmbeddedWorker({ onStart: () => console.error("starting…") });
 * try { … createApi({ server: local.server, token: local.token }) … }
 * finally { await local.release(); }
 */
export async function useEmbeddedWorker(
  opts: { env?: NodeJS.ProcessEnv; onStart?: () => void; start?: boolean } = {},
): Promise<EmbeddedLease> {
  const env = opts.env ?? process.env;
  const paths = embeddedPaths(env);
  if (opts.start === false && (await runningEmbeddedWorker(env)) === null) {
    throw new EmbeddedNotRunning(paths.persistDir);
  }
  mkdirSync(paths.users, { recursive: true, mode: 0o700 });
  const token = localToken(env);
  // Registered before looking for the worker, so a last user stopping it sees us (see release).
  const userFile = join(paths.users, String(process.pid));
  writeFileSync(userFile, "");

  let record: EmbeddedRecord | null;
  let started = false;
  let movedFrom: number | null = null;
  const unlock = await waitForPidLock(paths.startLock, START_LOCK_WAIT_MS);
  try {
    record = await runningEmbeddedWorker(env);
    if (!record && opts.start === false) throw new EmbeddedNotRunning(paths.persistDir);
    if (!record) {
      opts.onStart?.();
      record = await startEmbeddedWorker(paths, token, env);
      const last = lastPort(paths.lastPort);
      if (last !== null && last !== record.port) movedFrom = last;
      writePrivateFile(paths.lastPort, `${record.port}\n`);
      started = true;
    }
  } catch (err) {
    rmSync(userFile, { force: true });
    throw err;
  } finally {
    unlock();
  }
  const current = record;

  return {
    server: current.url,
    token,
    started,
    movedFrom,
    pid: current.pid,
    detach() {
      rmSync(userFile, { force: true });
    },
    async release() {
      rmSync(userFile, { force: true });
      if (liveUsers(paths.users, process.pid).length > 0)
        return { stopped: false, openSessions: [] };
      const open = await openSessions(current.url, token);
      if (open === null || open.length > 0) return { stopped: false, openSessions: open ?? [] };
      const release = await waitForPidLock(paths.startLock, START_LOCK_WAIT_MS);
      try {
        // Someone may have arrived while we were listing sessions.
        if (liveUsers(paths.users, process.pid).length > 0)
          return { stopped: false, openSessions: [] };
        await stopRecordedWorker(paths.record);
        return { stopped: true, openSessions: [] };
      } finally {
        release();
      }
    },
  };
}

/**
 * Starts the worker (under the start lock) and writes its record: whatever an earlier worker
 * left (a record, a runtime still holding the state folder) is checked and stopped first.
 */
async function startEmbeddedWorker(
  paths: EmbeddedPaths,
  token: string,
  env: NodeJS.ProcessEnv,
): Promise<EmbeddedRecord> {
  await stopRecordedWorker(paths.record);
  writeWorkerEnvFile(paths.envFile, { token, planner: env.PLANPORT_PLANNER || "offline" }, env);
  clearStaleTmp(paths.tmp);
  const launchedAt = new Date().toISOString();
  const worker = await startWorkerProcess({
    runtime: "built",
    // The last run's port when it is free again (review links carry it), else any.
    port: lastPort(paths.lastPort) ?? 0,
    anyPort: true,
    persistDir: paths.persistDir,
    configDir: paths.embedded,
    envFile: paths.envFile,
    logFile: paths.log,
    tmpDir: paths.tmp,
    idleExit: {
      afterSeconds: idleExitSeconds(env),
      usersDir: paths.users,
      startLock: paths.startLock,
      record: paths.record,
    },
    unref: true,
  }).catch((err: unknown) => {
    throw new Error(
      `the local planport worker did not start (${(err as Error).message}); ` +
        `the end of its log (${paths.log}):\n${logTail(paths.log)}`,
      { cause: err },
    );
  });
  const record: EmbeddedRecord = {
    pid: worker.pid,
    port: worker.port,
    url: worker.url,
    persist_dir: paths.persistDir,
    launched_at: launchedAt,
    started_at: new Date().toISOString(),
    runtime_pid: worker.runtimePid,
  };
  writePrivateFile(paths.record, `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/**
 * `PLANPORT_EMBEDDED_IDLE_SECONDS`: how long the worker runs on with nothing using it
 * (default {@link DEFAULT_IDLE_EXIT_S}).
 */
function idleExitSeconds(env: NodeJS.ProcessEnv): number {
  const value = Number(env.PLANPORT_EMBEDDED_IDLE_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_IDLE_EXIT_S;
}

/** Stops the embedded worker if one runs (`planport embedded --stop`). */
export async function stopEmbeddedWorker(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const paths = embeddedPaths(env);
  const release = await waitForPidLock(paths.startLock, START_LOCK_WAIT_MS);
  try {
    return await stopRecordedWorker(paths.record);
  } finally {
    release();
  }
}

/** The port the worker last ran on, or null. */
function lastPort(path: string): number | null {
  try {
    const port = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(port) && port > 0 && port < 65_536 ? port : null;
  } catch {
    return null;
  }
}

/**
 * Empties the runtime's temporary folder before a worker starts (under the start lock, so no
 * other worker is using it): a worker that was killed leaves its files there.
 */
function clearStaleTmp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** The last lines of a log, for an error that says why the worker did not start. */
export function logTail(path: string, lines = 20): string {
  try {
    const text = readFileSync(path, "utf8").trimEnd();
    return text.split("\n").slice(-lines).join("\n") || "(empty)";
  } catch {
    return "(no log was written)";
  }
}
