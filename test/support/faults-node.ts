/**
 * Node-side helpers of the fault tests (issue 6): an HTTP tap that sits between the real CLI
 * and `wrangler dev` and records what each request got, and a sampler of the worker's memory
 * read from `/proc`. Neither changes what passes through or what is measured; they watch.
 */

import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { rssMiB, workerdProcesses } from "./workerd-proc.ts";

const MIB = 1024 * 1024;

/** What one request through the tap got: a status, or `null` when the worker was unreachable. */
export interface TappedRequest {
  method: string;
  path: string;
  status: number | null;
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
}

export interface Tap {
  /** Point the client here instead of at the worker. */
  readonly url: string;
  readonly requests: readonly TappedRequest[];
  /**
   * Called with a request's upstream answer before it is relayed; returning false drops the
   * answer and cuts the client's connection (the answer is lost on the way back).
   */
  beforeRelay: ((request: TappedRequest) => Promise<boolean>) | null;
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy to `target` that records every request and its outcome. When the
 * worker cannot be reached the client's connection is cut, exactly as a refused connection
 * would fail it (a network error, not an HTTP answer).
 *
 * @example
 * const tap = await startTap(worker.url);
 * // run the CLI with --server tap.url, then:
 * longestFailureRun(tap.requests, (r) => r.path.includes("/events")) // ≤ 4
 */
export async function startTap(target: string): Promise<Tap> {
  const upstream = new URL(target);
  // A fresh connection per request: a dead worker shows at once, not on a stale socket.
  const agent = new Agent({ keepAlive: false });
  const requests: TappedRequest[] = [];
  const tap: Tap = {
    url: "",
    requests,
    beforeRelay: null,
    close: async () => {},
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const record: TappedRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      status: null,
      at: Date.now(),
    };
    requests.push(record);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      async (answer) => {
        record.status = answer.statusCode ?? null;
        const relay = tap.beforeRelay === null ? true : await tap.beforeRelay(record);
        if (!relay) {
          answer.destroy();
          res.socket?.destroy();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => {
      record.status = null;
      res.socket?.destroy();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the tap has no port");
  return Object.assign(tap, {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  });
}

/** True when a request failed the way a poller counts a failure: unreachable, 429 or 5xx. */
export function failedRequest(request: TappedRequest): boolean {
  return request.status === null || request.status === 429 || request.status >= 500;
}

/**
 * The longest run of consecutive failed requests among those `which` selects (a poll tick
 * stops at its first failed request, so this is the poller's consecutive-failure count).
 *
 * @example longestFailureRun(tap.requests, (r) => r.method === "GET") // 2
 */
export function longestFailureRun(
  requests: readonly TappedRequest[],
  which: (request: TappedRequest) => boolean,
): number {
  let longest = 0;
  let run = 0;
  for (const request of requests.filter(which)) {
    run = failedRequest(request) ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** Memory of one process, in bytes (`/proc/<pid>/status`). */
export interface ProcessMemory {
  pid: number;
  name: string;
  /** Resident set now. */
  rss: number;
  /** Peak resident set since the process started (the kernel's high-water mark). */
  hwm: number;
}

/**
 * The workerd processes `wrangler dev` runs in its process group (`groupId` is the pid
 * `startWorkerProcess` reports, the group leader): one serves the entry proxy, one the worker.
 *
 * @example const [proxy, worker] = workerdMemory(handle.pid);
 */
export function workerdMemory(groupId: number): ProcessMemory[] {
  const found: ProcessMemory[] = [];
  for (const { pid } of workerdProcesses(groupId)) {
    try {
      const { now, peak } = rssMiB(pid);
      found.push({ pid, name: "workerd", rss: now * MIB, hwm: peak * MIB });
    } catch {
      // The process ended while we looked.
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

export interface MemorySampler {
  /** Stops sampling; the highest RSS seen per pid. */
  stop(): Map<number, number>;
}

/**
 * Samples {@link workerdMemory} every `everyMs` and keeps each process's highest RSS (the
 * kernel's VmHWM catches peaks between samples; this shows when they happened).
 *
 * @example
 * const sampler = sampleWorkerdMemory(worker.pid, 20);
 * await upload(bomb);
 * const peaks = sampler.stop();
 */
export function sampleWorkerdMemory(groupId: number, everyMs: number): MemorySampler {
  const peaks = new Map<number, number>();
  const sample = () => {
    for (const p of workerdMemory(groupId))
      peaks.set(p.pid, Math.max(peaks.get(p.pid) ?? 0, p.rss));
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}
