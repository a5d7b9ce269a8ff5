import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { dataDir, generateToken, writePrivateFile } from "../home.ts";
import { createApi } from "../http/api.ts";
import { isAlive, waitForPidLock } from "../poll/pid-lock.ts";
import { type EmbeddedRecord, isOurWorker, readRecord, stopRecordedWorker } from "./record.ts";
import { freePort, startWorkerProcess } from "./worker-process.ts";

/**
 * The embedded local worker: with no server configured, the CLI runs the planport worker on
 * this machine (the built worker in Miniflare, worker-host.ts; state, temporary files and its
 * log under `$XDG_DATA_HOME/planport`, nothing anywhere else).
 *
 * Decision: the worker runs detached and may outlive the CLI that started it. A planning
 * session is driven by Durable Object alarms inside that worker and its review link points at
 * it, so a worker tied to one CLI process would freeze the session the moment the CLI exits —
 * breaking "Ctrl-C leaves the session running" and "approved: the cloud is executing", and
 * making every `list`/`status` pay wrangler's start-up. So: CLIs register as users of the
 * worker; the last user to leave stops it cleanly when no session in it is still open (not
 * archived, not done), and otherwise leaves it running for those sessions. Any later CLI reuses
 * a running worker (its recorded pid is alive, it is ours, and `/v1/healthz` answers).
 */

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
  /** The host's code cache (compile-cache.ts). */
  cache: string;
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
    cache: join(root, "cache"),
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
  try {
    const token = readFileSync(tokenFile, "utf8").trim();
    if (token !== "") return token;
  } catch {
    // First run.
  }
  const token = generateToken();
  writePrivateFile(tokenFile, `${token}\n`);
  return token;
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
  for (const name of PROVIDER_VARS) {
    const value = env[name];
    if (value !== undefined && value !== "" && !/[\r\n]/.test(value))
      lines.push(`${name}=${value}`);
  }
  writePrivateFile(path, `${lines.join("\n")}\n`);
}

/**
 * The running embedded worker, if its record is current (alive, ours, answering).
 *
 * @example
 * const running = await runningEmbeddedWorker(); // null when none runs
 */
export async function runningEmbeddedWorker(
  env: NodeJS.ProcessEnv = process.env,
): Promise<EmbeddedRecord | null> {
  const paths = embeddedPaths(env);
  const record = readRecord(paths.record);
  if (!record || !isAlive(record.pid) || !isOurWorker(record)) return null;
  const healthy = await createApi({ server: record.url, token: "-" }).healthz();
  return healthy ? record : null;
}

export interface EmbeddedLease {
  server: string;
  token: string;
  /** True when this call started the worker (it took a few seconds). */
  started: boolean;
  pid: number;
  /**
   * Leaves the worker; stops it when this was its last user and no session in it is open.
   * Says what happened, so the CLI can tell the user a worker keeps running.
   */
  release(): Promise<{ stopped: boolean; openSessions: string[] }>;
}

/**
 * Uses the embedded worker, starting it (and waiting until it is ready) when none runs.
 *
 * @example
 * const local = await useEmbeddedWorker({ onStart: () => console.error("starting…") });
 * try { … createApi({ server: local.server, token: local.token }) … }
 * finally { await local.release(); }
 */
export async function useEmbeddedWorker(
  opts: { env?: NodeJS.ProcessEnv; onStart?: () => void } = {},
): Promise<EmbeddedLease> {
  const env = opts.env ?? process.env;
  const paths = embeddedPaths(env);
  mkdirSync(paths.users, { recursive: true, mode: 0o700 });
  const token = localToken(env);
  // Registered before looking for the worker, so a last user stopping it sees us (see release).
  const userFile = join(paths.users, String(process.pid));
  writeFileSync(userFile, "");

  let record: EmbeddedRecord | null;
  let started = false;
  const unlock = await waitForPidLock(paths.startLock, START_LOCK_WAIT_MS);
  try {
    record = await runningEmbeddedWorker(env);
    if (!record) {
      opts.onStart?.();
      await stopRecordedWorker(paths.record);
      writeWorkerEnvFile(paths.envFile, { token, planner: env.PLANPORT_PLANNER || "offline" }, env);
      clearStaleTmp(paths.tmp);
      const worker = await startWorkerProcess({
        runtime: "built",
        port: await preferredPort(paths.lastPort),
        persistDir: paths.persistDir,
        envFile: paths.envFile,
        logFile: paths.log,
        tmpDir: paths.tmp,
        cacheDir: paths.cache,
        unref: true,
      }).catch((err: unknown) => {
        throw new Error(
          `the local planport worker did not start (${(err as Error).message}); ` +
            `the end of its log (${paths.log}):\n${logTail(paths.log)}`,
          { cause: err },
        );
      });
      record = {
        pid: worker.pid,
        port: worker.port,
        url: worker.url,
        persist_dir: paths.persistDir,
        started_at: new Date().toISOString(),
      };
      writePrivateFile(paths.record, `${JSON.stringify(record, null, 2)}\n`);
      writePrivateFile(paths.lastPort, `${worker.port}\n`);
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
    pid: current.pid,
    async release() {
      rmSync(userFile, { force: true });
      if (otherUsers(paths.users).length > 0) return { stopped: false, openSessions: [] };
      const openSessions = await openSessionsOf(current.url, token);
      if (openSessions === null || openSessions.length > 0) {
        return { stopped: false, openSessions: openSessions ?? [] };
      }
      const release = await waitForPidLock(paths.startLock, START_LOCK_WAIT_MS);
      try {
        // Someone may have arrived while we were listing sessions.
        if (otherUsers(paths.users).length > 0) return { stopped: false, openSessions: [] };
        await stopRecordedWorker(paths.record);
        return { stopped: true, openSessions: [] };
      } finally {
        release();
      }
    },
  };
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

/** Ids of sessions still open in the worker; null when that cannot be known (keep it running). */
async function openSessionsOf(url: string, token: string): Promise<string[] | null> {
  try {
    const list = await createApi({ server: url, token }).listSessions({ limit: 100 });
    return list.data.filter((s) => s.status !== "archived" && s.phase !== "done").map((s) => s.id);
  } catch {
    return null;
  }
}

function otherUsers(dir: string): number[] {
  const pids: number[] = [];
  for (const name of safeReaddir(dir)) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (isAlive(pid)) pids.push(pid);
    else rmSync(join(dir, name), { force: true });
  }
  return pids;
}

/**
 * The port of the last run when it is free again, else a new free one: review links carry the
 * port, so keeping it keeps the links of open sessions working after a restart.
 */
async function preferredPort(lastPortFile: string): Promise<number> {
  let last = Number.NaN;
  try {
    last = Number.parseInt(readFileSync(lastPortFile, "utf8").trim(), 10);
  } catch {
    // First run.
  }
  if (Number.isInteger(last) && last > 0 && last < 65_536 && (await portIsFree(last))) return last;
  return freePort();
}

async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
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

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
