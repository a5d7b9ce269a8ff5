import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/**
 * What a benchmark can see of the worker that `wrangler dev` runs: the workerd process that
 * hosts the planport isolate (found through wrangler's process group), its CPU time and memory
 * from /proc, and the isolate's own JS heap through the V8 inspector that wrangler exposes.
 * Linux only (/proc).
 */

const MIB = 1024 * 1024;
const CLOCK_TICKS_PER_S = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

/** One workerd process of a `wrangler dev` process group. */
export interface WorkerdProcess {
  pid: number;
  /** True for the runtime that hosts the planport worker and its Durable Objects. */
  hostsWorker: boolean;
}

/**
 * The workerd processes in wrangler's process group. wrangler 4 runs two: a proxy runtime that
 * owns the public port and forwards to the runtime hosting the user worker, which is the one
 * started with an inspector address.
 *
 * @example
 * const host = workerdProcesses(worker.pid).find((p) => p.hostsWorker);
 */
export function workerdProcesses(processGroup: number): WorkerdProcess[] {
  const found: WorkerdProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== processGroup || !stat.includes("(workerd)")) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      found.push({
        pid: Number(entry),
        hostsWorker: cmdline.some((arg) => arg.startsWith("--inspector-addr")),
      });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * CPU time (user + system) a process has used so far, in ms (clock-tick resolution, 10 ms).
 *
 * @example
 * const before = cpuMs(pid); … ; console.log(cpuMs(pid) - before);
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the name: state is field 3, utime field 14, stime field 15 (1-based, man 5 proc).
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/**
 * Resident memory of a process in MiB: now (VmRSS) and the peak since the last
 * {@link resetPeakRss} or the process start (VmHWM).
 */
export function rssMiB(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { now: (kb("VmRSS") * 1024) / MIB, peak: (kb("VmHWM") * 1024) / MIB };
}

/** Resets the process's peak resident set size to its current size (Linux ≥ 4.0). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** The isolate's V8 heap, in MiB. */
export interface HeapUsage {
  used: number;
  total: number;
}

/** A connection to the worker isolate's V8 inspector (through wrangler's inspector proxy). */
export interface IsolateInspector {
  heap(): Promise<HeapUsage>;
  close(): void;
}

/** An inspector call that takes longer than this is abandoned (the isolate may be busy). */
const INSPECTOR_CALL_TIMEOUT_MS = 10_000;

/**
 * Connects to the V8 inspector of the isolate wrangler runs, or returns null when this Node
 * has no WebSocket client (Node 20 needs `--experimental-websocket`). The inspector port is
 * read from wrangler's command line (worker-process.ts picks a free one).
 *
 * @example
 * const inspector = await connectInspector(worker.pid);
 * console.log((await inspector?.heap())?.used);
 */
export async function connectInspector(wranglerPid: number): Promise<IsolateInspector | null> {
  const Socket = (globalThis as unknown as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (Socket === undefined) return null;
  const args = readFileSync(`/proc/${wranglerPid}/cmdline`, "utf8").split("\0");
  const port = args[args.indexOf("--inspector-port") + 1];
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (url === undefined) return null;
  // wrangler's inspector proxy admits local tools by their Origin.
  const socket = new Socket(url, { headers: { origin: "http://localhost" } });
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`cannot open ${url}`)), {
      once: true,
    });
  });
  let nextId = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
    if (message.id !== undefined) waiting.delete(message.id);
  });
  const call = (method: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(
          new Error(
            `the inspector did not answer ${method} within ${INSPECTOR_CALL_TIMEOUT_MS} ms`,
          ),
        );
      }, INSPECTOR_CALL_TIMEOUT_MS);
      waiting.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      socket.send(JSON.stringify({ id, method, params: {} }));
    });
  return {
    // (HeapProfiler.collectGarbage gets no answer from workerd, so heaps are read as they are.)
    async heap() {
      const result = (await call("Runtime.getHeapUsage")) as {
        usedSize: number;
        totalSize: number;
      };
      return { used: result.usedSize / MIB, total: result.totalSize / MIB };
    },
    close: () => socket.close(),
  };
}

/** Node's WebSocket with undici's `headers` extension (not in the DOM typings). */
type WebSocketConstructor = new (
  url: string,
  init: { headers: Record<string, string> },
) => WebSocket;
