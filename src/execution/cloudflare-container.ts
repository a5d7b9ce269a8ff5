import { Container } from "@cloudflare/containers";
import { cachedConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { type CommandContainerRpc, executorUnavailable } from "./container-transport.ts";

/** The port the image's command server listens on (container/Dockerfile `EXPOSE 8080`). */
export const COMMAND_SERVER_PORT = 8080;
/**
 * How long a container stays up with no request in flight. A running command is a request in
 * flight (the package counts them), so a 10-minute `Bash` call is never cut by this; the time
 * the model thinks between commands is. Past it the container stops; the next command starts a
 * fresh one, whose command server answers 409 `workspace_missing`, and the session sends the
 * workspace again.
 */
export const CONTAINER_SLEEP_AFTER = "5m";
/**
 * How long a start may take: finding an instance (a cold one pulls the image), then the command
 * server's port answering. The package's defaults (8 s and 20 s) suit small images, not a
 * Debian with Node and Python on its first start in a location.
 */
export const CONTAINER_START_TIMEOUTS_MS = { instance: 30_000, port: 60_000 } as const;

/**
 * One executing session's container on Cloudflare Containers (wrangler.toml `[[containers]]`,
 * binding `EXECUTOR_CONTAINERS`, one object per session id): the package's `Container` — which
 * starts the container, proxies HTTP to a port, renews the idle timer per request and stops the
 * container after {@link CONTAINER_SLEEP_AFTER} — with planport's settings:
 *
 * - requests go to the command server on {@link COMMAND_SERVER_PORT}, started with
 *   {@link CONTAINER_START_TIMEOUTS_MS}; a start that fails answers the API's 503
 *   `executor_unavailable`, not the package's plain text;
 * - no internet unless `PLANPORT_EXEC_NETWORK = "on"` (docs/EXECUTION.md): a bad value keeps it
 *   off (the API refuses to serve with a bad setting anyway);
 * - `DELETE /v1/sessions/:id` stops and removes the container without starting one.
 *
 * Where containers are off (`wrangler dev` with `[dev] enable_containers = false`, the embedded
 * worker) the class is an ordinary Durable Object whose construction fails; the local executor
 * is used there, and {@link containerTransport} turns a stray call into a 503.
 */
export class CommandContainer extends Container<Env> implements CommandContainerRpc {
  override defaultPort = COMMAND_SERVER_PORT;
  override sleepAfter = CONTAINER_SLEEP_AFTER;
  /** Any answer at all on this path means the command server listens. */
  override pingEndpoint = "container/v1/health";
  /** What the command server reports as `executor` in its health answer. */
  override envVars = { PLANPORT_EXECUTOR: "cloudflare" };

  constructor(ctx: ConstructorParameters<typeof Container>[0], env: Env) {
    super(ctx, env);
    this.enableInternet = executionNetwork(env);
  }

  async end(): Promise<void> {
    if (this.ctx.container?.running === true) await this.destroy();
  }

  override async fetch(request: Request): Promise<Response> {
    if (request.method === "DELETE" && isSessionPath(new URL(request.url).pathname)) {
      await this.end();
      return new Response(null, { status: 204 });
    }
    const started = await this.ensureStarted(request.signal);
    if (started !== null) return started;
    const response = await this.containerFetch(request, COMMAND_SERVER_PORT);
    return fromPackage(response);
  }

  /** Starts the container and waits for the port unless it is up; a failure as a 503 answer. */
  private async ensureStarted(signal: AbortSignal): Promise<Response | null> {
    const state = await this.getState();
    if (this.ctx.container?.running === true && state.status === "healthy") return null;
    try {
      await this.startAndWaitForPorts({
        ports: COMMAND_SERVER_PORT,
        cancellationOptions: {
          abort: signal,
          instanceGetTimeoutMS: CONTAINER_START_TIMEOUTS_MS.instance,
          portReadyTimeoutMS: CONTAINER_START_TIMEOUTS_MS.port,
        },
      });
      return null;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return executorUnavailable(
        `The session's container did not start (${reason}). If this deployment is new, its container image may still be provisioning; otherwise max_instances (wrangler.toml) may be reached.`,
      );
    }
  }
}

/** Whether commands may reach the internet: `PLANPORT_EXEC_NETWORK = "on"`; off otherwise. */
export function executionNetwork(env: Env): boolean {
  const config = cachedConfig(env);
  return config.ok && config.value.executionNetwork;
}

/** `/v1/sessions/:id` itself (not a route under it). */
function isSessionPath(pathname: string): boolean {
  return /^\/v1\/sessions\/[^/]+\/?$/.test(pathname);
}

/**
 * The command server's answers pass unchanged; the package's own failures on the way (plain
 * text 5xx: "Error proxying request to container", "Container suddenly disconnected") become
 * the API's 503 so the caller sees one error shape.
 */
async function fromPackage(response: Response): Promise<Response> {
  if (response.status < 500) return response;
  if ((response.headers.get("content-type") ?? "").includes("application/json")) return response;
  return executorUnavailable(`The session's container failed: ${await response.text()}`);
}
