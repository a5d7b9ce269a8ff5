/**
 * What workerd gives a container-enabled Durable Object as `ctx.container`, for the one thing
 * workerd cannot do here: run a container (Cloudflare's container runtime exists only on
 * Cloudflare; wrangler's local one needs Docker with buildx and a registry). This stand-in
 * records how it was started and stopped, and its `getTcpPort(port).fetch` sends each request
 * over real HTTP to a server the test names — the command server's echo — so everything from
 * the object's `fetch` to the bytes on the wire runs as in production, `@cloudflare/containers`
 * included. Only the runtime's start/stop bookkeeping is ours.
 */
export class ContainerRuntimeStandIn {
  running = false;
  readonly starts: ContainerStartupOptions[] = [];
  readonly destroys: number[] = [];
  readonly signals: number[] = [];
  /** Requests the object sent to a port: `port path`. */
  readonly sent: string[] = [];
  private stopped: (() => void) | null = null;

  constructor(
    private readonly serverUrl: string,
    private readonly startProblem: string | null = null,
  ) {}

  start(options?: ContainerStartupOptions): void {
    if (this.startProblem !== null) throw new Error(this.startProblem);
    if (this.running)
      throw new Error("start() cannot be called on a container that is already running.");
    this.starts.push(options ?? { enableInternet: false });
    this.running = true;
  }

  monitor(): Promise<void> {
    return new Promise((resolve) => {
      this.stopped = resolve;
    });
  }

  async destroy(): Promise<void> {
    this.destroys.push(Date.now());
    this.stop();
  }

  signal(signo: number): void {
    this.signals.push(signo);
    this.stop();
  }

  getTcpPort(port: number): Fetcher {
    const send = async (input: RequestInfo | URL, init?: RequestInit | Request) => {
      if (!this.running) throw new Error("the container is not listening");
      const url = new URL(input instanceof Request ? input.url : String(input));
      this.sent.push(`${port} ${url.pathname}`);
      const request = new Request(input instanceof Request ? input : url, init);
      return fetch(new Request(`${this.serverUrl}${url.pathname}${url.search}`, request));
    };
    return { fetch: send } as unknown as Fetcher;
  }

  async setInactivityTimeout(): Promise<void> {}

  private stop(): void {
    this.running = false;
    this.stopped?.();
    this.stopped = null;
  }
}

/**
 * Gives a real Durable Object state (its SQLite storage and all) a `container`, and records its
 * alarm calls instead of setting them: the state belongs to a throwaway object of another class,
 * whose alarm handler must not be woken by the container class's alarm loop. In place: workerd's
 * Durable Object base class accepts only the real state object, not a wrapper.
 */
export function giveContainer(
  state: DurableObjectState,
  container: ContainerRuntimeStandIn,
): { alarms: number[] } {
  const alarms: number[] = [];
  Object.defineProperty(state, "container", { value: container, configurable: true });
  const storage = state.storage;
  Object.defineProperties(storage, {
    setAlarm: {
      value: async (at: number | Date) => void alarms.push(Number(at)),
      configurable: true,
    },
    getAlarm: { value: async () => alarms.at(-1) ?? null, configurable: true },
    deleteAlarm: { value: async () => undefined, configurable: true },
  });
  return { alarms };
}
