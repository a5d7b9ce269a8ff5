import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PollError, pollForApprovedExitPlanMode } from "../../local-client/poll/poller.ts";
import { FAKE_SESSION_ID, FAKE_TOKEN, startFakeFeed } from "../client/fake-feed.ts";
import { type BenchRow, formatTable, infoRow, limitRow } from "./rows.ts";

/**
 * P6: the local client's CPU while it polls an idle session — the real poll loop
 * (`pollForApprovedExitPlanMode`, 3 s interval, zod-validated pages) in its own process against
 * a local feed server that answers empty pages. Target: ≤ 0.5% of one core. The baseline is a
 * second child, run at the same time, that loads the same modules and only sleeps: the floor
 * any Node process pays.
 *
 * The target row is the steady state a terminal spends most of a 30-minute poll in: its window
 * opens after {@link SETTLE_MS} of polling. Before that, V8's memory reducer runs a few full
 * collections of the start-up heap (about 40 ms of CPU, once, seen with `--trace-gc` about 8 s
 * after start, in both children); a second row reports the first minute with them included.
 *
 *   npx tsx test/bench/client.ts              # prints the table (75 s)
 *   import { benchClientPolling } from "./client.ts"; await benchClientPolling();
 */

const WINDOW_MS = 60_000;
/** Polling before the steady-state window opens: past V8's one-off post-start-up collections. */
const SETTLE_MS = 15_000;
const POLL_INTERVAL_MS = 3_000;
/** Of one core, in percent. */
const CPU_BUDGET_PERCENT = 0.5;

interface Span {
  cpuMs: number;
  wallMs: number;
  ticks: number;
}

interface ChildReport {
  /** From {@link SETTLE_MS} after the first poll to the end. */
  steady: Span;
  /** From the first poll for one window: start-up settling included. */
  firstWindow: Span;
}

/**
 * Runs the poll loop in a child process for `settleMs + windowMs` after its first tick (so
 * start-up and module loading are never counted) and reports its CPU time as a share of one
 * core, next to an idle child's over the same spans.
 *
 * @example
 * const [steady, firstMinute] = await benchClientPolling({ windowMs: 10_000, settleMs: 5_000 });
 */
export async function benchClientPolling(
  options: { windowMs?: number; settleMs?: number } = {},
): Promise<BenchRow[]> {
  const windowMs = options.windowMs ?? WINDOW_MS;
  const settleMs = options.settleMs ?? SETTLE_MS;
  // The feed double with an empty log: every events page is empty, the session is running.
  const feed = await startFakeFeed();
  try {
    const [polling, idle] = await Promise.all([
      runChildProcess("--child", feed.url, windowMs, settleMs),
      runChildProcess("--idle", feed.url, windowMs, settleMs),
    ]);
    const share = (r: Span) => (r.cpuMs / r.wallMs) * 100;
    const seconds = (r: Span) => Math.round(r.wallMs / 1000);
    return [
      limitRow({
        id: "P6",
        name: `client CPU while polling an idle session at a ${POLL_INTERVAL_MS / 1000} s interval, steady state: ${seconds(polling.steady)} s from ${settleMs / 1000} s after the first poll (${polling.steady.ticks} polls)`,
        unit: "% of a core",
        value: share(polling.steady),
        baseline: share(idle.steady),
        baselineName: "an idle Node process with the same modules loaded, same span",
        atMost: CPU_BUDGET_PERCENT,
      }),
      infoRow({
        id: "P6",
        name: `the same, first ${seconds(polling.firstWindow)} s from the first poll (${polling.firstWindow.ticks} polls; V8's one-off post-start-up collections included)`,
        unit: "% of a core",
        value: share(polling.firstWindow),
        baseline: share(idle.firstWindow),
        baselineName: "the idle process, same span",
      }),
    ];
  } finally {
    await feed.close();
  }
}

async function runChildProcess(
  mode: string,
  url: string,
  windowMs: number,
  settleMs: number,
): Promise<ChildReport> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      fileURLToPath(import.meta.url),
      mode,
      url,
      String(windowMs),
      String(settleMs),
    ],
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

/**
 * Measures two spans of one run that begins at `start()`: the first `windowMs`, and the last
 * `windowMs` after `settleMs`. `tick()` counts the polls (or timer ticks) in each.
 */
function spans(windowMs: number, settleMs: number, onDone: (report: ChildReport) => void) {
  const mark = () => ({ cpu: process.cpuUsage(), wall: performance.now() });
  const since = (from: ReturnType<typeof mark>, ticks: number): Span => {
    const cpu = process.cpuUsage(from.cpu);
    return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - from.wall, ticks };
  };
  let ticks = 0;
  let firstWindow: Span | null = null;
  let steadyFrom: { at: ReturnType<typeof mark>; ticks: number } | null = null;
  return {
    tick: () => {
      ticks += 1;
    },
    start: () => {
      const began = mark();
      setTimeout(() => {
        firstWindow = since(began, ticks);
      }, windowMs);
      setTimeout(() => {
        steadyFrom = { at: mark(), ticks };
      }, settleMs);
      setTimeout(() => {
        if (firstWindow === null || steadyFrom === null) throw new Error("spans out of order");
        onDone({ firstWindow, steady: since(steadyFrom.at, ticks - steadyFrom.ticks) });
      }, settleMs + windowMs);
    },
  };
}

/** The baseline child: same modules loaded, a timer at the poll interval that does nothing. */
async function runIdleChild(windowMs: number, settleMs: number): Promise<void> {
  const report = await new Promise<ChildReport>((resolve) => {
    const measure = spans(windowMs, settleMs, resolve);
    measure.start();
    const timer = setInterval(measure.tick, POLL_INTERVAL_MS);
    setTimeout(() => clearInterval(timer), settleMs + windowMs);
  });
  process.stdout.write(JSON.stringify(report));
}

/** The child: polls until both spans have passed, then reports its own CPU time. */
async function runChild(url: string, windowMs: number, settleMs: number): Promise<void> {
  const controller = new AbortController();
  let report: ChildReport | null = null;
  const measure = spans(windowMs, settleMs, (r) => {
    report = r;
    controller.abort();
  });
  let started = false;
  const poll = pollForApprovedExitPlanMode({
    server: url,
    token: FAKE_TOKEN,
    sessionId: FAKE_SESSION_ID,
    intervalMs: POLL_INTERVAL_MS,
    timeoutMs: (settleMs + windowMs) * 2 + 60_000,
    signal: controller.signal,
    onProgress: () => {
      measure.tick();
      if (!started) {
        started = true;
        measure.start();
      }
    },
  });
  const err = await poll.then(
    () => new Error("the idle feed never approves anything"),
    (e: unknown) => e,
  );
  if (!(err instanceof PollError) || err.reason !== "stopped" || report === null) throw err;
  process.stdout.write(JSON.stringify(report));
}

const isMain =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv[2] === "--child") {
  await runChild(process.argv[3] ?? "", Number(process.argv[4]), Number(process.argv[5]));
} else if (isMain && process.argv[2] === "--idle") {
  await runIdleChild(Number(process.argv[4]), Number(process.argv[5]));
} else if (isMain) {
  console.log(formatTable(await benchClientPolling()));
}
