import { once } from "node:events";
import { join, resolve } from "node:path";
import {
  embeddedPaths,
  localToken,
  runningEmbeddedWorker,
  stopEmbeddedWorker,
  useEmbeddedWorker,
  writeWorkerEnvFile,
} from "../embedded/worker.ts";
import { startWorkerProcess, WorkerStartError } from "../embedded/worker-process.ts";
import { UsageError } from "../errors.ts";
import { writeUserConfig } from "../home.ts";
import { terminalText } from "../terminal/text.ts";
import { movedPortText } from "./connection.ts";
import { EXIT } from "./exit-codes.ts";
import { type CommandOutput, commandOutput } from "./output.ts";

/** `planport serve` (the worker in the foreground) and `planport embedded` (the background one). */

export const DEFAULT_SERVE_PORT = 8787;

/**
 * Parses `--port` (default 8787).
 *
 * @example
 * portFlag("9000") // → 9000; portFlag("99999") throws a UsageError
 */
export function portFlag(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SERVE_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new UsageError(`--port ${text} is not a TCP port (1–65535)`);
  }
  return port;
}

/**
 * Runs the worker in the foreground until Ctrl-C, and writes the user config (url + token) so
 * every other planport command on this machine uses it. It shares the embedded worker's state
 * and token by default, so sessions carry over between the two.
 */
export async function runServe(flags: {
  port?: string;
  persist?: string;
  json?: boolean;
}): Promise<number> {
  const out = commandOutput(flags.json === true);
  try {
    return await serve(flags, out);
  } catch (err) {
    return out.fail(err);
  }
}

async function serve(
  flags: { port?: string; persist?: string },
  out: CommandOutput,
): Promise<number> {
  const port = portFlag(flags.port);
  const paths = embeddedPaths();
  const persistDir = resolve(flags.persist ?? paths.persistDir);
  const background = await runningEmbeddedWorker();
  if (background && background.persist_dir === persistDir) {
    throw new UsageError(
      `the embedded local worker (pid ${background.pid}, ${background.url}) is using ${persistDir}; ` +
        "stop it with `planport embedded --stop`, or pass --persist DIR",
    );
  }
  const token = localToken();
  const envFile = join(paths.root, "serve.env");
  writeWorkerEnvFile(envFile, { token, planner: process.env.PLANPORT_PLANNER || "auto" });
  process.stderr.write(`starting the planport worker on port ${port} (state in ${persistDir})…\n`);
  const worker = await startWorkerProcess({
    runtime: "built",
    // Bound by the worker's host itself, exclusively: a port another program (perhaps another
    // user's) holds is refused, and the config below never points at it.
    port,
    persistDir,
    configDir: paths.embedded,
    envFile,
    tmpDir: paths.tmp,
    // The worker's log can quote sessions and model output.
    log: (line) => process.stderr.write(`[worker] ${terminalText(line)}\n`),
  }).catch((err: unknown) => {
    if (err instanceof WorkerStartError && err.code === "port_in_use") {
      throw new UsageError(err.message);
    }
    throw err;
  });
  const configPath = writeUserConfig({ url: worker.url, token });
  if (out.json) out.result({ event: "serving", url: worker.url, token, config: configPath });
  else process.stdout.write(`planport worker: ${worker.url}\ntoken: ${token}\n`);
  process.stderr.write(
    `Wrote ${configPath}: planport commands on this machine now use this worker.\n` +
      `Elsewhere: PLANPORT_URL=${worker.url} PLANPORT_TOKEN=<token above> planport plan <task…>\n` +
      "Ctrl-C stops it.\n",
  );

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    await Promise.race([worker.exited, once(stop.signal, "abort")]);
    if (!stop.signal.aborted) {
      return out.error(
        "local_failure",
        "the worker exited on its own; see the [worker] lines above",
      );
    }
    await worker.stop();
    return EXIT.ok;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/**
 * Shows (or with `--stop`, stops) the embedded local worker. `--json`: one line,
 * `{"event":"embedded","running",…}` (its url, pid, start and state folder when running), or
 * after `--stop` `{"event":"embedded_stopped","was_running"}`.
 */
export async function runEmbedded(flags: {
  start?: boolean;
  stop?: boolean;
  json?: boolean;
}): Promise<number> {
  const out = commandOutput(flags.json === true);
  try {
    if (flags.start && flags.stop) throw new UsageError("--start and --stop: choose one");
    if (flags.start) {
      const local = await useEmbeddedWorker({
        onStart: () => out.say("starting the local planport worker…"),
      });
      if (local.movedFrom !== null) out.say(movedPortText(local.movedFrom, local.server));
      // Not a user once this command ends, and not stopped by it: the worker runs on while a
      // session in it is open, and for PLANPORT_EMBEDDED_IDLE_SECONDS once nothing uses it.
      local.detach();
    }
    if (flags.stop) {
      const stopped = await stopEmbeddedWorker();
      out.say(
        stopped ? "stopped the embedded local worker" : "no embedded local worker is running",
      );
      out.result({ event: "embedded_stopped", was_running: stopped });
      return EXIT.ok;
    }
    const running = await runningEmbeddedWorker();
    if (out.json) {
      out.result(
        running
          ? {
              event: "embedded",
              running: true,
              url: running.url,
              pid: running.pid,
              started_at: running.started_at,
              persist_dir: running.persist_dir,
            }
          : { event: "embedded", running: false },
      );
      return EXIT.ok;
    }
    process.stdout.write(
      running
        ? `embedded local worker: ${running.url} (pid ${running.pid}, since ${running.started_at}, state in ${running.persist_dir})\n`
        : "no embedded local worker is running; planport commands start one when no server is configured\n",
    );
    return EXIT.ok;
  } catch (err) {
    return out.fail(err);
  }
}
