import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import { readBody, sendError, sendJson } from "../../container/runner/replies.ts";
import { EXECUTOR_ERRORS, RunRequest } from "../../src/protocol/execution.ts";
import { DockerClient, DockerError, dockerSocket } from "./docker.ts";
import { DockerExecutor, ExecutorError, executorId } from "./executor.ts";
import { dockerUnavailable } from "./health.ts";
import { defaultImageName, imageDigest } from "./image.ts";
import { execSettings } from "./settings.ts";

/**
 * The local executor's HTTP server: the executor API of src/protocol/execution.ts on
 * 127.0.0.1, each request carrying `Authorization: Bearer <token>`, each answered by the Docker
 * executor. The embedded worker and `wrangler dev` both talk to it.
 */

export interface LocalExecutor {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The bearer token every request must carry. */
  token: string;
  /** The executor's id (the value of its containers' `dev.planport.executor` label). */
  id: string;
  /** Stops listening and removes every container it made. */
  stop(): Promise<void>;
}

const WORKSPACE_MAX_BYTES = 512 * 1024 * 1024;
const RUN_BODY_MAX_BYTES = 256 * 1024 * 1024;

/**
 * Starts the local executor. `stateDir` (the embedded worker's state folder) names it: a
 * later executor on the same folder removes the containers this one leaves if it dies.
 *
 * @example
 * const executor = await startLocalExecutor({ stateDir, log: console.error });
 * // PLANPORT_EXECUTOR_URL=executor.url, PLANPORT_EXECUTOR_TOKEN=executor.token
 * await executor.stop();
 */
export async function startLocalExecutor(opts: {
  stateDir: string;
  log?: (line: string) => void;
  port?: number;
  /** Where PLANPORT_EXEC_* and DOCKER_HOST are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}): Promise<LocalExecutor> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const settings = execSettings(env, availableParallelism(), defaultImageName());
  let socket: string;
  let socketProblem: DockerError | undefined;
  try {
    socket = dockerSocket(env);
  } catch (err) {
    socket = env.DOCKER_HOST ?? "";
    socketProblem = err as DockerError;
  }
  const id = executorId(opts.stateDir);
  const executor = new DockerExecutor(new DockerClient(socket), settings, id, imageDigest(), log);
  if (socketProblem === undefined) {
    await executor
      .reap()
      .catch((err: unknown) => log(`could not reap old containers: ${String(err)}`));
  }
  const token = randomBytes(32).toString("base64url");
  const tokenHash = sha256(`Bearer ${token}`);
  const server = createServer((req, res) => {
    if (!timingSafeEqual(sha256(req.headers.authorization ?? ""), tokenHash)) {
      return sendError(res, 401, "unauthorized", "missing or wrong Authorization: Bearer token");
    }
    route(req, res, executor, socketProblem).catch((err: unknown) => {
      log(`executor error: ${err instanceof Error ? err.message : String(err)}`);
      if (err instanceof ExecutorError) sendError(res, err.status, err.code, err.message);
      else if (err instanceof DockerError && err.status === undefined && err.code !== "ETIMEDOUT") {
        const sentence = dockerUnavailable(socket, err.code, err.message);
        sendError(res, 503, EXECUTOR_ERRORS.unavailable, sentence);
      } else sendError(res, 500, "internal", err instanceof Error ? err.message : String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    id,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (socketProblem === undefined) await executor.removeAll().catch(() => {});
    },
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  executor: DockerExecutor,
  socketProblem: DockerError | undefined,
): Promise<void> {
  const path = new URL(req.url ?? "/", "http://executor").pathname;
  const method = req.method ?? "GET";
  if (method === "GET" && path === "/v1/health") {
    const health = socketProblem
      ? { ok: false, executor: "docker", reason: socketProblem.message }
      : await executor.health();
    return sendJson(res, health.ok ? 200 : 503, health);
  }
  const match = /^\/v1\/sessions\/([A-Za-z0-9_-]{1,128})(\/workspace|\/run)?$/.exec(path);
  const session = match?.[1];
  if (match === null || session === undefined) {
    return sendError(res, 404, "not_found", `no route ${method} ${path}`);
  }
  if (socketProblem)
    throw new ExecutorError(503, EXECUTOR_ERRORS.unavailable, socketProblem.message);
  if (method === "PUT" && match[2] === "/workspace") {
    const body = await readBody(req, WORKSPACE_MAX_BYTES);
    if (body === undefined)
      return sendError(
        res,
        413,
        "too_large",
        `the workspace tar is over ${WORKSPACE_MAX_BYTES} bytes`,
      );
    await executor.putWorkspace(session, body);
    res.writeHead(204).end();
    return;
  }
  if (method === "POST" && match[2] === "/run") {
    const body = await readBody(req, RUN_BODY_MAX_BYTES);
    if (body === undefined) return sendError(res, 413, "too_large", "the run request is too large");
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      return sendError(res, 400, "bad_request", "the body is not JSON");
    }
    const parsed = RunRequest.safeParse(json);
    if (!parsed.success) return sendError(res, 400, "bad_request", parsed.error.message);
    return sendJson(res, 200, await executor.run(session, parsed.data));
  }
  if (method === "DELETE" && match[2] === undefined) {
    await executor.remove(session);
    res.writeHead(204).end();
    return;
  }
  return sendError(res, 405, "method_not_allowed", `${method} ${path} is not a route`);
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
