import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Log as LogClass, MiniflareOptions } from "miniflare";
import { PACKAGE_ROOT } from "../package-root.ts";
import { loadWithCodeCache } from "./compile-cache.ts";

/**
 * The embedded worker's host: a small Node process that runs the built worker
 * (`dist/worker/`, made by `npm run build`) in the Workers runtime through Miniflare's API.
 * `planport` starts it detached for the embedded local worker and in the foreground for
 * `planport serve` (worker-process.ts).
 *
 * Why Miniflare's API and not `wrangler dev`: measured on the same machine and bundle, it
 * reaches a healthy worker after ~0.5 s where `wrangler dev` takes ~1.3 s (one runtime instead
 * of wrangler's proxy and user runtimes, no config parsing at start; README "Performance"), and it writes only
 * where it is told — `wrangler dev` puts `.wrangler/tmp` in its working directory (inside the
 * installed package, which an ordinary user cannot write) and debug logs in
 * `~/.config/.wrangler/logs`. The bindings still come from wrangler.toml: the build stores the
 * Miniflare options wrangler derives from it (`dist/worker/options.json`). State stays where
 * `wrangler dev --persist-to DIR` keeps it (`DIR/v3`), so a state folder works with both.
 *
 * Everything it writes is under the folders it is given: the state folder, the log (rotated
 * at {@link LOG_ROTATE_BYTES}, {@link LOG_KEEP} old files kept) and Miniflare's temporary
 * files (`TMPDIR`, set by the caller).
 *
 * @example
 * node dist/cli/worker-host.js --port 8787 --persist ~/.local/share/planport/persist \
 *   --env-file ~/.local/share/planport/embedded/worker.env --log ~/.local/share/planport/embedded/worker.log
 */

/** Where a log is rotated, and how many old ones are kept (`worker.log.1`, `worker.log.2`). */
export const LOG_ROTATE_BYTES = 1024 * 1024;
export const LOG_KEEP = 2;

/** The built worker (`npm run build`). */
export const WORKER_DIR = join(PACKAGE_ROOT, "dist", "worker");

export interface HostArgs {
  port: number;
  persistDir: string;
  envFile?: string;
  logFile?: string;
  /** `--var NAME=value` pairs (tests; real secrets come in the env file, not on `ps`). */
  vars: Record<string, string>;
  /** Where the code cache of Miniflare's module is kept (none when absent). */
  cacheDir?: string;
}

/**
 * Reads the host's arguments.
 *
 * @example
 * hostArgs(["--port", "8787", "--persist", "/tmp/p"]) // → { port: 8787, persistDir: "/tmp/p", vars: {} }
 */
export function hostArgs(argv: string[]): HostArgs {
  const value = (flag: string): string | undefined => {
    const at = argv.indexOf(flag);
    return at === -1 ? undefined : argv[at + 1];
  };
  const port = Number(value("--port"));
  const persistDir = value("--persist");
  if (!Number.isInteger(port) || port < 1 || port > 65_535 || persistDir === undefined) {
    throw new Error(
      "usage: worker-host --port N --persist DIR [--env-file FILE] [--log FILE] [--cache DIR] [--var NAME=value]…",
    );
  }
  const vars: Record<string, string> = {};
  argv.forEach((arg, i) => {
    const pair = arg === "--var" ? argv[i + 1] : undefined;
    const at = pair?.indexOf("=") ?? -1;
    if (pair !== undefined && at > 0) vars[pair.slice(0, at)] = pair.slice(at + 1);
  });
  return {
    port,
    persistDir,
    envFile: value("--env-file"),
    logFile: value("--log"),
    vars,
    cacheDir: value("--cache"),
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

type MiniflareModule = typeof import("miniflare");

/** Miniflare's own messages (warnings and errors), into the log. */
function hostLog(miniflare: MiniflareModule, sink: (line: string) => void): LogClass {
  class HostLog extends miniflare.Log {
    protected override log(message: string): void {
      sink(message);
    }
  }
  return new HostLog(miniflare.LogLevel.WARN);
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

interface BuiltWorker {
  name: string;
  main: string;
  options: Record<string, unknown> & {
    bindings?: Record<string, unknown>;
    assets?: { directory: string } & Record<string, unknown>;
  };
}

/**
 * The Miniflare options of the built worker with this host's port, state and vars.
 *
 * @example
 * const mf = new Miniflare(miniflareOptions(built, args, vars, log, sink));
 */
export function miniflareOptions(
  built: BuiltWorker,
  args: HostArgs,
  vars: Record<string, string>,
  log: LogClass,
  sink: (line: string) => void,
): MiniflareOptions {
  const { options } = built;
  const mainPath = join(WORKER_DIR, built.main);
  return {
    ...options,
    name: built.name,
    // The module given whole: with a script path, Miniflare parses the 2 MB bundle to find
    // its imports, which took 3 of the 3.5 s a start took (wrangler's bundle has none left).
    modules: [{ type: "ESModule", path: mainPath, contents: readFileSync(mainPath, "utf8") }],
    modulesRoot: WORKER_DIR,
    bindings: { ...options.bindings, ...vars },
    ...(options.assets === undefined
      ? {}
      : {
          assets: { ...options.assets, directory: resolve(PACKAGE_ROOT, options.assets.directory) },
        }),
    // Where `wrangler dev --persist-to` keeps it, so one state folder serves both.
    defaultPersistRoot: join(args.persistDir, "v3"),
    host: "127.0.0.1",
    port: args.port,
    // The placeholder `request.cf`: fetching the real one would write into node_modules.
    cf: false,
    liveReload: false,
    logRequests: false,
    log,
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      pipeLines(stdout, sink);
      pipeLines(stderr, sink);
    },
  } as MiniflareOptions;
}

async function main(): Promise<void> {
  const args = hostArgs(process.argv.slice(2));
  const log = args.logFile === undefined ? null : new RotatingLog(args.logFile);
  const sink = (line: string) => {
    const text = `${new Date().toISOString()} ${line}\n`;
    if (log) log.write(text);
    else process.stderr.write(text);
  };
  const built = JSON.parse(readFileSync(join(WORKER_DIR, "options.json"), "utf8")) as BuiltWorker;
  const fromFile =
    args.envFile === undefined ? {} : envFileVars(readFileSync(args.envFile, "utf8"));
  const vars = { ...fromFile, ...args.vars };
  // Miniflare's entry module is large: with its code cache, the next start skips compiling it.
  const loaded =
    args.cacheDir === undefined
      ? { exports: (await import("miniflare")) as MiniflareModule, saveCache() {} }
      : loadWithCodeCache<MiniflareModule>("miniflare", args.cacheDir);
  const miniflare = loaded.exports;
  const mf = new miniflare.Miniflare(
    miniflareOptions(built, args, vars, hostLog(miniflare, sink), sink),
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    sink(`stopping (${signal})`);
    await mf.dispose().catch((err: unknown) => sink(`stopping failed: ${String(err)}`));
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.on(signal, () => void stop(signal));
  }
  try {
    const url = await mf.ready;
    sink(`ready at ${url.href} (state in ${args.persistDir})`);
    loaded.saveCache();
  } catch (err) {
    sink(`the Workers runtime did not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
