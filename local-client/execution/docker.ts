import { request as httpRequest, type IncomingMessage } from "node:http";
import { StreamDemuxer } from "./docker-stream.ts";

/**
 * A small client of Docker's Engine API over its unix socket (node:http, no dependency):
 * only the calls the local executor makes. API v1.41 is what Debian's docker.io 20.10 speaks,
 * and every later Docker still accepts it.
 */

export const DOCKER_API_VERSION = "v1.41";
export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

/** A failed Docker call: `status` is the HTTP status, `code` the socket error (ENOENT, EACCES). */
export class DockerError extends Error {
  override readonly name = "DockerError";
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * The socket DOCKER_HOST names (`unix:///path`), or Docker's default. A TCP or SSH DOCKER_HOST
 * is refused: the executor speaks to a local daemon only.
 *
 * @example
 * dockerSocket({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" }) // → "/run/user/1000/docker.sock"
 */
export function dockerSocket(env: NodeJS.ProcessEnv = process.env): string {
  const host = env.DOCKER_HOST;
  if (host === undefined || host === "") return DEFAULT_DOCKER_SOCKET;
  if (host.startsWith("unix://")) return host.slice("unix://".length);
  throw new DockerError(
    `DOCKER_HOST=${host} is not a unix socket: planport's local executor talks to Docker through unix:///path only`,
    undefined,
    "EUNSUPPORTED",
  );
}

export interface ContainerSummary {
  Id: string;
  Labels: Record<string, string>;
}

export interface ExecOutput {
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

interface CallOptions {
  body?: Buffer;
  json?: unknown;
  query?: Record<string, string>;
  timeoutMs?: number;
  /** The most response bytes read before the call fails. */
  maxBytes?: number;
}

const RESPONSE_MAX_BYTES = 16 * 1024 * 1024;
/** A call that names no deadline of its own: a daemon that hangs must not hang the executor. */
const CALL_TIMEOUT_MS = 60_000;

export class DockerClient {
  constructor(readonly socketPath: string = dockerSocket()) {}

  /** GET /_ping: resolves when a Docker daemon answers. */
  async ping(): Promise<void> {
    await this.call("GET", "/_ping", { timeoutMs: 10_000 });
  }

  /** The image's labels, or undefined when there is no such image. */
  async imageLabels(name: string): Promise<Record<string, string> | undefined> {
    const res = await this.call("GET", `/images/${encodeURIComponent(name)}/json`, {}, [404]);
    if (res.status === 404) return undefined;
    const info = JSON.parse(res.body.toString("utf8")) as { Config?: { Labels?: unknown } };
    return (info.Config?.Labels ?? {}) as Record<string, string>;
  }

  async createContainer(spec: unknown): Promise<string> {
    const res = await this.call("POST", "/containers/create", { json: spec });
    return (JSON.parse(res.body.toString("utf8")) as { Id: string }).Id;
  }

  async startContainer(id: string): Promise<void> {
    await this.call("POST", `/containers/${id}/start`);
  }

  /** The container's inspect document, or undefined when it is gone. */
  async inspectContainer(id: string): Promise<Record<string, unknown> | undefined> {
    const res = await this.call("GET", `/containers/${id}/json`, {}, [404]);
    return res.status === 404 ? undefined : JSON.parse(res.body.toString("utf8"));
  }

  /** Removes a container, running or not; one already gone (or being removed) is fine. */
  async removeContainer(id: string): Promise<void> {
    await this.call(
      "DELETE",
      `/containers/${id}`,
      { query: { force: "true", v: "true" } },
      [404, 409],
    );
  }

  /** Every container (running or not) carrying all these `key=value` labels. */
  async listContainers(labels: string[]): Promise<ContainerSummary[]> {
    const res = await this.call("GET", "/containers/json", {
      query: { all: "true", filters: JSON.stringify({ label: labels }) },
    });
    return JSON.parse(res.body.toString("utf8")) as ContainerSummary[];
  }

  /** Unpacks `tar` into the container's folder `dir` (which must exist). */
  async putArchive(id: string, dir: string, tar: Buffer): Promise<void> {
    await this.call("PUT", `/containers/${id}/archive`, {
      query: { path: dir },
      body: tar,
      timeoutMs: 300_000,
    });
  }

  /**
   * Runs `cmd` in the container (as its root, no stdin) and collects its two output streams.
   * Past `timeoutMs` the call fails with code ETIMEDOUT (the process may still run).
   */
  async exec(id: string, cmd: string[], timeoutMs: number, maxBytes: number): Promise<ExecOutput> {
    const created = await this.call("POST", `/containers/${id}/exec`, {
      json: { AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false, Cmd: cmd },
    });
    const execId = (JSON.parse(created.body.toString("utf8")) as { Id: string }).Id;
    const frames = new StreamDemuxer(maxBytes);
    await this.call("POST", `/exec/${execId}/start`, {
      json: { Detach: false, Tty: false },
      timeoutMs,
      onData: (chunk) => frames.push(chunk),
    });
    if (frames.incomplete) throw new DockerError("the Docker exec stream ended mid-frame");
    const state = await this.call("GET", `/exec/${execId}/json`);
    const exitCode = (JSON.parse(state.body.toString("utf8")) as { ExitCode: number | null })
      .ExitCode;
    return { exitCode, stdout: frames.stdout(), stderr: frames.stderr() };
  }

  /**
   * One API call. A status ≥ 400 not in `allowed` fails with Docker's own message.
   */
  call(
    method: string,
    path: string,
    opts: CallOptions & { onData?: (chunk: Buffer) => void } = {},
    allowed: number[] = [],
  ): Promise<{ status: number; body: Buffer }> {
    const query = opts.query === undefined ? "" : `?${new URLSearchParams(opts.query)}`;
    const body = opts.json === undefined ? opts.body : Buffer.from(JSON.stringify(opts.json));
    const headers: Record<string, string | number> = { host: "docker" };
    if (body !== undefined) {
      headers["content-type"] = opts.json === undefined ? "application/x-tar" : "application/json";
      headers["content-length"] = body.length;
    }
    const maxBytes = opts.maxBytes ?? RESPONSE_MAX_BYTES;
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          socketPath: this.socketPath,
          method,
          path: `/${DOCKER_API_VERSION}${path}${query}`,
          headers,
          timeout: undefined,
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            try {
              if (opts.onData !== undefined && (res.statusCode ?? 500) < 400) opts.onData(chunk);
              else {
                size += chunk.length;
                if (size > maxBytes)
                  throw new DockerError(`Docker answered more than ${maxBytes} bytes`);
                chunks.push(chunk);
              }
            } catch (err) {
              req.destroy(err as Error);
            }
          });
          res.on("error", reject);
          res.on("end", () => {
            clearTimeout(timer);
            const status = res.statusCode ?? 500;
            const text = Buffer.concat(chunks);
            if (status >= 400 && !allowed.includes(status)) {
              reject(new DockerError(dockerMessage(method, path, status, text), status));
            } else resolve({ status, body: text });
          });
        },
      );
      const timeoutMs = opts.timeoutMs ?? CALL_TIMEOUT_MS;
      const timer = setTimeout(() => {
        req.destroy(
          new DockerError(
            `Docker did not answer ${method} ${path} in ${timeoutMs} ms`,
            undefined,
            "ETIMEDOUT",
          ),
        );
      }, timeoutMs);
      req.on("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          err instanceof DockerError ? err : new DockerError(err.message, undefined, err.code),
        );
      });
      req.end(body);
    });
  }
}

function dockerMessage(method: string, path: string, status: number, body: Buffer): string {
  let text = body.toString("utf8").trim();
  try {
    text = (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    // Not JSON: Docker's plain text.
  }
  return `Docker refused ${method} ${path} (${status}): ${text}`;
}
