import { readFileSync } from "node:fs";

/**
 * What a benchmark can see of the worker that `wrangler dev` runs: the workerd process that
 * hosts the planport isolate (found through wrangler's process group), its CPU time and memory
 * from /proc, and the isolate's own JS heap through the V8 inspector that wrangler exposes.
 * Linux only (/proc).
 */

export {
  cpuMs,
  resetPeakRss,
  rssMiB,
  type WorkerdProcess,
  workerdProcesses,
} from "../support/workerd-proc.ts";

const MIB = 1024 * 1024;

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
