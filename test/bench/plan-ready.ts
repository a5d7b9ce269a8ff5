import { execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApi } from "../../local-client/http/api.ts";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";
import type { Event } from "../../src/protocol/index.ts";
import { type BenchRow, infoRow, median } from "./rows.ts";

/**
 * P11, what planport adds to a plan (issue 32): `planport plan … --json` against a warm
 * embedded worker (started before, with the offline planner), from spawn to its
 * `{"event":"phase","phase":"plan_ready"}` line, next to the planner's own time (the session's
 * `created_at` to the event that carries its ExitPlanMode call, both the worker's clock) plus
 * one round trip (`/v1/healthz`, median). Target: at most 0.5 s more than that.
 *
 * @example
 * rows.push(...(await benchPlanReady({ runs: 7 })));
 */

const BIN = join(PACKAGE_ROOT, "local-client", "bin", "planport.js");
const OVERHEAD_MS_AT_MOST = 500;

interface Run {
  readyMs: number;
  plannerMs: number;
}

export async function benchPlanReady(opts: { runs?: number } = {}): Promise<BenchRow[]> {
  const runs = opts.runs ?? 7;
  const root = mkdtempSync(join(tmpdir(), "planport-bench-ready-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PLANPORT_HOME: join(root, "home"),
    XDG_DATA_HOME: join(root, "data"),
  };
  for (const name of ["PLANPORT_URL", "PLANPORT_TOKEN", "CI", "PLANPORT_PLANNER"]) delete env[name];
  const repo = smallRepo(join(root, "repo"));
  try {
    const started = spawnSync(process.execPath, [BIN, "embedded", "--start", "--json"], {
      env,
      encoding: "utf8",
    });
    const url = (JSON.parse(started.stdout.trim()) as { url?: string }).url;
    if (started.status !== 0 || url === undefined) {
      throw new Error(`planport embedded --start failed:\n${started.stdout}${started.stderr}`);
    }
    const token = readFileSync(join(root, "data", "planport", "token"), "utf8").trim();
    const api = createApi({ server: url, token });
    const one = () => planOnce(env, repo, api);
    await one();
    const measured: Run[] = [];
    const rtts: number[] = [];
    for (let i = 0; i < runs; i++) {
      measured.push(await one());
      for (let j = 0; j < 5; j++) {
        const t = performance.now();
        await api.healthz();
        rtts.push(performance.now() - t);
      }
    }
    const rtt = median(rtts);
    const ready = median(measured.map((r) => r.readyMs));
    const planner = median(measured.map((r) => r.plannerMs));
    const overhead = median(measured.map((r) => r.readyMs - r.plannerMs - rtt));
    return [
      {
        id: "P11",
        name: `\`planport plan\` → "plan ready" on a warm embedded worker, offline planner (median of ${runs}; planport's overhead ${Math.round(overhead)} ms)`,
        unit: "ms",
        value: ready,
        baseline: planner + rtt,
        baselineName: `the planner's own time (${Math.round(planner)} ms) + 1 round trip (${rtt.toFixed(1)} ms)`,
        ratio: ready / (planner + rtt),
        target: `≤ baseline + ${OVERHEAD_MS_AT_MOST} ms`,
        met: overhead <= OVERHEAD_MS_AT_MOST,
      },
      infoRow({
        id: "P11",
        name: "the same: planport's overhead (spawn to plan ready, less the planner and 1 round trip)",
        unit: "ms",
        value: overhead,
        baseline: OVERHEAD_MS_AT_MOST,
        baselineName: "the most allowed",
      }),
    ];
  } finally {
    spawnSync(process.execPath, [BIN, "embedded", "--stop"], { env, stdio: "ignore" });
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * A two-file repository the offline planner plans for without a question (the shop fixture
 * makes it ask which discount is meant, and the plan then waits for an answer).
 */
function smallRepo(repo: string): string {
  mkdirSync(join(repo, "src"), { recursive: true });
  writeFileSync(join(repo, "README.md"), "# Shop\n\nA small web shop.\n");
  writeFileSync(
    join(repo, "src", "cart.ts"),
    "export const total = (prices: number[]) => prices.reduce((a, b) => a + b, 0);\n",
  );
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  git("init", "-q");
  git("add", ".");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init");
  return repo;
}

/** One `planport plan --json` to its plan_ready line; the session is archived after. */
async function planOnce(
  env: NodeJS.ProcessEnv,
  repo: string,
  api: ReturnType<typeof createApi>,
): Promise<Run> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [BIN, "plan", "add a discount code", "--json"], {
    env,
    cwd: repo,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = once(child, "exit");
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const readyMs = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (/"event":"phase","phase":"plan_ready"/.test(out)) resolve(performance.now() - startedAt);
    });
    void exited.then(() => reject(new Error(`planport plan exited early:\n${out}\n${err}`)));
    setTimeout(
      () => reject(new Error(`no plan_ready within 60 s:\n${out}\n${err}`)),
      60_000,
    ).unref();
  });
  child.kill("SIGINT");
  await exited;
  const id = /"event":"session","id":"([^"]+)"/.exec(out)?.[1];
  if (id === undefined) throw new Error(`no session line:\n${out}`);
  const session = await api.getSession(id);
  const events: Event[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await api.events(id, { afterId: after, limit: 1000 });
    events.push(...page.data);
    if (page.data.length === 0 || !page.has_more) break;
    after = page.data.at(-1)?.id ?? null;
  }
  const plan = events.find(
    (e) =>
      e.type === "assistant" &&
      e.message.content.some((b) => b.type === "tool_use" && b.name === "ExitPlanMode"),
  );
  if (plan === undefined) throw new Error(`session ${id} has no ExitPlanMode call`);
  await api.archive(id).catch(() => {});
  return {
    readyMs,
    plannerMs: Date.parse(plan.created_at) - Date.parse(session.created_at),
  };
}
