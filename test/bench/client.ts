import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PollError, pollForApprovedExitPlanMode } from "../../local-client/poller.ts";

/**
 * Benchmark: the local client's CPU while it polls an idle session — the real poll loop
 * (`pollForApprovedExitPlanMode`, 3 s interval, zod-validated pages) in its own process against
 * a local feed server that answers empty pages. Target: ≤ 0.5% of one core.
 *
 *   npx tsx test/bench/client.ts              # prints the table (60 s)
 *   import { benchClientPolling } from "./client.ts"; await benchClientPolling();
 */

export interface BenchRow {
  name: string;
  value: number;
  baseline: number;
  ratio: number;
  target: number;
}

const WINDOW_MS = 60_000;
const POLL_INTERVAL_MS = 3_000;
/** Of one core, in percent. */
const CPU_BUDGET_PERCENT = 0.5;
const SESSION_ID = "ses_01jxbench00000000000000000";

interface ChildReport {
  cpuMs: number;
  wallMs: number;
  ticks: number;
}

/**
 * Runs the poll loop in a child process for `windowMs` (after its first tick, so start-up and
 * module loading are not counted) and reports its CPU time as a share of one core. The
 * baseline column is the budget itself, so ratio ≤ 1 means the target is met.
 *
 * @example
 * const [row] = await benchClientPolling({ windowMs: 10_000 });
 */
export async function benchClientPolling(options: { windowMs?: number } = {}): Promise<BenchRow[]> {
  const windowMs = options.windowMs ?? WINDOW_MS;
  const feed = await startIdleFeed();
  try {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(import.meta.url), "--child", feed.url, String(windowMs)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    const [code] = await once(child, "exit");
    if (code !== 0) throw new Error(`the polling child exited with ${code}`);
    const report = JSON.parse(out) as ChildReport;
    const percent = (report.cpuMs / report.wallMs) * 100;
    return [
      {
        name: `client CPU while polling an idle session for ${Math.round(report.wallMs / 1000)} s at a ${POLL_INTERVAL_MS / 1000} s interval (% of one core, ${report.ticks} polls; baseline = the ${CPU_BUDGET_PERCENT}% budget)`,
        value: round(percent),
        baseline: CPU_BUDGET_PERCENT,
        ratio: round(percent / CPU_BUDGET_PERCENT),
        target: 1,
      },
    ];
  } finally {
    await feed.close();
  }
}

/** The child: polls until the window has passed, then reports its own CPU time. */
async function runChild(url: string, windowMs: number): Promise<void> {
  const controller = new AbortController();
  let ticks = 0;
  let start: { cpu: NodeJS.CpuUsage; wall: number } | null = null;
  const poll = pollForApprovedExitPlanMode({
    server: url,
    token: "bench",
    sessionId: SESSION_ID,
    intervalMs: POLL_INTERVAL_MS,
    timeoutMs: windowMs * 2 + 60_000,
    signal: controller.signal,
    onProgress: () => {
      ticks += 1;
      if (start === null) {
        start = { cpu: process.cpuUsage(), wall: performance.now() };
        setTimeout(() => controller.abort(), windowMs);
      }
    },
  });
  const err = await poll.then(
    () => new Error("the idle feed never approves anything"),
    (e: unknown) => e,
  );
  if (!(err instanceof PollError) || err.reason !== "stopped" || start === null) throw err;
  const began: { cpu: NodeJS.CpuUsage; wall: number } = start;
  const cpu = process.cpuUsage(began.cpu);
  const report: ChildReport = {
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: performance.now() - began.wall,
    ticks,
  };
  process.stdout.write(JSON.stringify(report));
}

async function startIdleFeed(): Promise<{ url: string; close: () => Promise<void> }> {
  const emptyPage = JSON.stringify({ data: [], has_more: false, first_id: null, last_id: null });
  const session = JSON.stringify({
    id: SESSION_ID,
    title: "bench",
    status: "running",
    phase: "running",
    permission_mode: "plan",
    planner: "offline",
    can_execute_remotely: false,
    reject_count: 0,
    outcome: null,
    review_url: "http://127.0.0.1/review",
    usage: { input_tokens: 0, output_tokens: 0 },
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
  });
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url?.includes("/events") ? emptyPage : session);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

const isMain =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv[2] === "--child") {
  await runChild(process.argv[3] ?? "", Number(process.argv[4]));
} else if (isMain) {
  console.table(await benchClientPolling());
}
