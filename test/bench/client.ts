import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PollError, pollForApprovedExitPlanMode } from "../../local-client/poller.ts";
import { type BenchRow, formatTable, limitRow } from "./rows.ts";

/**
 * P6: the local client's CPU while it polls an idle session — the real poll loop
 * (`pollForApprovedExitPlanMode`, 3 s interval, zod-validated pages) in its own process against
 * a local feed server that answers empty pages. Target: ≤ 0.5% of one core. The baseline is a
 * second child, run at the same time, that loads the same modules and only sleeps: the floor
 * any Node process pays.
 *
 *   npx tsx test/bench/client.ts              # prints the table (60 s)
 *   import { benchClientPolling } from "./client.ts"; await benchClientPolling();
 */

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
 * module loading are not counted) and reports its CPU time as a share of one core, next to an
 * idle child's over the same window.
 *
 * @example
 * const [row] = await benchClientPolling({ windowMs: 10_000 });
 */
export async function benchClientPolling(options: { windowMs?: number } = {}): Promise<BenchRow[]> {
  const windowMs = options.windowMs ?? WINDOW_MS;
  const feed = await startIdleFeed();
  try {
    const [polling, idle] = await Promise.all([
      runChildProcess("--child", feed.url, windowMs),
      runChildProcess("--idle", feed.url, windowMs),
    ]);
    const share = (r: ChildReport) => (r.cpuMs / r.wallMs) * 100;
    return [
      limitRow({
        id: "P6",
        name: `client CPU while polling an idle session for ${Math.round(polling.wallMs / 1000)} s at a ${POLL_INTERVAL_MS / 1000} s interval (${polling.ticks} polls)`,
        unit: "% of a core",
        value: share(polling),
        baseline: share(idle),
        baselineName: "an idle Node process with the same modules loaded",
        atMost: CPU_BUDGET_PERCENT,
      }),
    ];
  } finally {
    await feed.close();
  }
}

async function runChildProcess(mode: string, url: string, windowMs: number): Promise<ChildReport> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), mode, url, String(windowMs)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`the ${mode} child exited with ${code}`);
  return JSON.parse(out) as ChildReport;
}

/** The baseline child: same modules loaded, a timer at the poll interval that does nothing. */
async function runIdleChild(windowMs: number): Promise<void> {
  const began = { cpu: process.cpuUsage(), wall: performance.now() };
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
  }, POLL_INTERVAL_MS);
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  clearInterval(timer);
  const cpu = process.cpuUsage(began.cpu);
  const report: ChildReport = {
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: performance.now() - began.wall,
    ticks,
  };
  process.stdout.write(JSON.stringify(report));
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

const isMain =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv[2] === "--child") {
  await runChild(process.argv[3] ?? "", Number(process.argv[4]));
} else if (isMain && process.argv[2] === "--idle") {
  await runIdleChild(Number(process.argv[4]));
} else if (isMain) {
  console.log(formatTable(await benchClientPolling()));
}
