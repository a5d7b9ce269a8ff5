import { execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { freePort } from "../../local-client/embedded/worker-process.ts";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";
import { fixtureRepo } from "../client/fixture-repo.ts";
import { packAndInstall } from "../support/installed-package.ts";
import { benchMcpStart } from "./mcp-start.ts";
import { benchPlanReady } from "./plan-ready.ts";
import { type BenchRow, infoRow, limitRow, median, ratioRow } from "./rows.ts";
import type { BenchWorker } from "./worker.ts";

/**
 * P11, the command as a user installs and starts it (issue 23): `planport --help` and
 * `planport status` next to `node -e 0` (CPU of the whole process), the embedded worker's cold
 * start (`planport plan` to its session line, no worker running) next to the same runtime
 * started with an empty worker, `planport plan` to "plan ready" on a warm worker next to the
 * planner's own time (plan-ready.ts), and the installed size. Every command is the built one
 * (local-client/bin/planport.js → dist/), as installed.
 *
 * @example
 * rows.push(...(await benchInstalled(worker, { runs: 7 })));
 */

const BIN = join(PACKAGE_ROOT, "local-client", "bin", "planport.js");

/** CPU seconds (user + sys) of one run of `argv`, its children included (bash's `time`). */
function cpuSeconds(argv: string[], env: NodeJS.ProcessEnv = process.env): number {
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const run = spawnSync(
    "bash",
    ["-c", `TIMEFORMAT='%3U %3S'; { time ${quoted} >/dev/null 2>&1 ; } 2>&1`],
    { encoding: "utf8", env },
  );
  const [user, sys] = run.stdout.trim().split(/\s+/).slice(-2).map(Number);
  if (user === undefined || sys === undefined || Number.isNaN(user + sys)) {
    throw new Error(`could not time ${argv.join(" ")}: ${run.stdout}${run.stderr}`);
  }
  return user + sys;
}

/** Medians of A's and B's CPU, run in turn (A B A B …) after one warm-up each. */
function pairedCpu(a: string[], b: string[], runs: number, env?: NodeJS.ProcessEnv) {
  cpuSeconds(a, env);
  cpuSeconds(b, env);
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(cpuSeconds(a, env));
    bs.push(cpuSeconds(b, env));
  }
  return { a: median(as) * 1000, b: median(bs) * 1000 };
}

/** Milliseconds from spawning `argv` until `ready(stdoutSoFar)` holds (or it fails). */
async function msUntil(
  argv: string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string; ready: (out: string) => boolean },
): Promise<{ ms: number; stop: () => Promise<void> }> {
  const started = performance.now();
  const child = spawn(argv[0] as string, argv.slice(1), {
    env: opts.env,
    cwd: opts.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const exited = once(child, "exit");
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (opts.ready(out)) resolve(performance.now() - started);
    });
    void exited.then(() => reject(new Error(`${argv.join(" ")} exited early:\n${out}\n${err}`)));
  });
  return {
    ms,
    stop: async () => {
      child.kill("SIGINT");
      await exited;
    },
  };
}

/** Milliseconds until a server on `port` answers, from spawning `argv`. */
async function msUntilServing(argv: string[], port: number, cwd: string) {
  const started = performance.now();
  const child = spawn(argv[0] as string, argv.slice(1), { cwd, stdio: "ignore" });
  const exited = once(child, "exit");
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${argv.join(" ")} exited early`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/healthz`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - started;
  child.kill("SIGTERM");
  await exited;
  return ms;
}

/** Bytes under `path`, without the test caches in node_modules/.cache (clients the tests install). */
function duBytes(path: string): number {
  const out = execFileSync("du", ["-sb", "--exclude=.cache", path], { encoding: "utf8" });
  return Number(out.split(/\s/)[0]) || 0;
}

export async function benchInstalled(
  worker: BenchWorker,
  opts: { runs?: number } = {},
): Promise<BenchRow[]> {
  const runs = opts.runs ?? 7;
  const rows: BenchRow[] = [];
  const node = process.execPath;

  const help = pairedCpu([node, BIN, "--help"], [node, "-e", "0"], runs);
  rows.push(
    ratioRow({
      id: "P11",
      name: `\`planport --help\`: CPU of the whole process (median of ${runs})`,
      unit: "ms",
      value: help.a,
      baseline: help.b,
      baselineName: "`node -e 0`",
      maxRatio: 2,
    }),
  );

  const session = await worker.createSession(worker.token, { prompt: "status bench" });
  const status = pairedCpu(
    [node, BIN, "status", session.id, "--server", worker.url, "--token", worker.token],
    [node, "-e", "0"],
    runs,
  );
  rows.push(
    ratioRow({
      id: "P11",
      name: `\`planport status <id>\` against a running worker: CPU (median of ${runs})`,
      unit: "ms",
      value: status.a,
      baseline: status.b,
      baselineName: "`node -e 0`",
      maxRatio: 3,
    }),
  );

  rows.push(await benchMcpStart({ server: worker.url, token: worker.token, runs }));

  rows.push(...(await coldStart(runs)));

  rows.push(...(await benchPlanReady({ runs })));

  const installed = await packAndInstall();
  try {
    rows.push(
      limitRow({
        id: "P11",
        name: "installed size: `npm install -g` of the packed tarball (the prefix, runtime included)",
        unit: "MB",
        value: duBytes(installed.prefix) / 1e6,
        baseline: null,
        baselineName: "—",
        atMost: 300,
      }),
    );
  } finally {
    rmSync(installed.root, { recursive: true, force: true });
  }
  rows.push(
    limitRow({
      id: "P11",
      name: "a clone's `node_modules` after `npm ci` (without the tests' client caches in `.cache/`)",
      unit: "MB",
      value: duBytes(join(PACKAGE_ROOT, "node_modules")) / 1e6,
      baseline: null,
      baselineName: "—",
      atMost: 600,
    }),
  );
  return rows;
}

/**
 * `planport plan` with no worker running, to its session line, in one state folder (as a user
 * meets it: the worker stopped since the last plan), next to the empty worker on the same
 * runtime; both with their code caches warm. The very first start (no cache, empty state) is
 * reported beside them.
 */
async function coldStart(runs: number): Promise<BenchRow[]> {
  const root = mkdtempSync(join(tmpdir(), "planport-bench-cold-"));
  try {
    const repo = fixtureRepo();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PLANPORT_HOME: join(root, "home"),
      XDG_DATA_HOME: join(root, "data"),
    };
    for (const name of ["PLANPORT_URL", "PLANPORT_TOKEN", "CI"]) delete env[name];
    const floorHost = await buildFloorHost();
    const plan = async () => {
      const run = await msUntil([process.execPath, BIN, "plan", "add a discount code", "--json"], {
        env,
        cwd: repo,
        ready: (out) => out.includes('"event":"session"'),
      });
      await run.stop();
      spawnSync(process.execPath, [BIN, "embedded", "--stop"], { env, stdio: "ignore" });
      return run.ms;
    };
    const floor = async () => {
      const port = await freePort();
      return msUntilServing([process.execPath, floorHost, String(port)], port, root);
    };
    const first = await plan();
    await floor();
    const plans: number[] = [];
    const floors: number[] = [];
    for (let i = 0; i < runs; i++) {
      plans.push(await plan());
      floors.push(await floor());
    }
    const value = median(plans);
    const baseline = median(floors);
    return [
      ratioRow({
        id: "P11",
        name: `embedded cold start: \`planport plan\` → its session line, no worker running (median of ${runs})`,
        unit: "ms",
        value,
        baseline,
        baselineName: "the same runtime with an empty worker",
        maxRatio: 1.5,
      }),
      limitRow({
        id: "P11",
        name: "the same, absolute",
        unit: "ms",
        value,
        baseline,
        baselineName: "the same runtime with an empty worker",
        atMost: 3_000,
      }),
      infoRow({
        id: "P11",
        name: "the first start after install (no code cache, empty state), once",
        unit: "ms",
        value: first,
        baseline,
        baselineName: "the same runtime with an empty worker",
      }),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The floor's host, bundled next to the package's node_modules (it runs their workerd). */
async function buildFloorHost(): Promise<string> {
  const dir = join(PACKAGE_ROOT, "node_modules", ".cache", "planport-bench");
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, "empty-worker-host.mjs");
  await build({
    entryPoints: [join(PACKAGE_ROOT, "test", "bench", "empty-worker-host.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["workerd"],
    banner: {
      js: 'import { createRequire as __r } from "node:module"; const require = __r(import.meta.url);',
    },
    logLevel: "warning",
  });
  return outfile;
}
