import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { EXECUTOR_ERRORS, RunRequest } from "../../src/protocol/execution.ts";
import { STATE_DIR, WORKSPACE_MAX_BYTES } from "./layout.ts";
import { readBody, sendError, sendJson } from "./replies.ts";
import { runInWorkspace, WorkspaceMissingError } from "./run.ts";
import { clearWorkspace, fillWorkspace, RefusedError } from "./workspace.ts";

/**
 * The command server inside the image (`runner serve`): the executor API of
 * src/protocol/execution.ts for the one container it runs in. The `:id` in paths is taken as
 * it comes — the platform routes a session to its own container. One request changes the
 * workspace at a time.
 */

const RUN_BODY_MAX_BYTES = 256 * 1024 * 1024;
const INCOMING_TAR = `${STATE_DIR}/incoming.tar`;

type Route =
  | { kind: "health" }
  | { kind: "workspace" }
  | { kind: "run" }
  | { kind: "delete" }
  | undefined;

/** Which route a method and path name (pure). */
export function routeOf(method: string, path: string): Route {
  if (method === "GET" && path === "/v1/health") return { kind: "health" };
  const match = /^\/v1\/sessions\/[^/]+(\/workspace|\/run)?$/.exec(path);
  if (match === null) return undefined;
  if (method === "PUT" && match[1] === "/workspace") return { kind: "workspace" };
  if (method === "POST" && match[1] === "/run") return { kind: "run" };
  if (method === "DELETE" && match[1] === undefined) return { kind: "delete" };
  return undefined;
}

/** Starts the server; resolves once it listens. */
export async function serve(port: number, host = "0.0.0.0"): Promise<void> {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const server = createServer((req, res) => {
    answer(req, res, serial).catch((err: unknown) => sendError(res, 500, "internal", message(err)));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  process.stderr.write(`planport runner: serving on ${host}:${port}\n`);
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  serial: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<void> {
  const path = new URL(req.url ?? "/", "http://runner").pathname;
  const route = routeOf(req.method ?? "GET", path);
  if (route === undefined)
    return sendError(res, 404, "not_found", `no route ${req.method} ${path}`);
  if (route.kind === "health") {
    return sendJson(res, 200, {
      ok: true,
      executor: process.env.PLANPORT_EXECUTOR_KIND ?? "cloudflare",
    });
  }
  if (route.kind === "delete") {
    await serial(() => clearWorkspace());
    res.writeHead(204).end();
    return;
  }
  if (route.kind === "workspace") {
    const length = Number(req.headers["content-length"] ?? "0");
    if (length > WORKSPACE_MAX_BYTES) {
      return sendError(
        res,
        413,
        "too_large",
        `the workspace tar is over ${WORKSPACE_MAX_BYTES} bytes`,
      );
    }
    await serial(async () => {
      await pipeline(req, limitBytes(WORKSPACE_MAX_BYTES), createWriteStream(INCOMING_TAR));
      try {
        await fillWorkspace(INCOMING_TAR);
      } finally {
        await rm(INCOMING_TAR, { force: true });
      }
    }).then(
      () => res.writeHead(204).end(),
      (err: unknown) =>
        err instanceof RefusedError
          ? sendError(res, 400, "bad_request", err.message)
          : Promise.reject(err),
    );
    return;
  }
  const body = await readBody(req, RUN_BODY_MAX_BYTES);
  if (body === undefined) return sendError(res, 413, "too_large", "the run request is too large");
  let parsed: ReturnType<typeof RunRequest.safeParse>;
  try {
    parsed = RunRequest.safeParse(JSON.parse(body.toString("utf8")));
  } catch {
    return sendError(res, 400, "bad_request", "the body is not JSON");
  }
  if (!parsed.success) return sendError(res, 400, "bad_request", parsed.error.message);
  const request = parsed.data;
  try {
    sendJson(res, 200, await serial(() => runInWorkspace(request)));
  } catch (err) {
    if (err instanceof WorkspaceMissingError) {
      return sendError(res, 409, EXECUTOR_ERRORS.workspaceMissing, err.message);
    }
    if (err instanceof RefusedError) return sendError(res, 400, "bad_request", err.message);
    throw err;
  }
}

/** A transform that fails once more than `max` bytes went through. */
function limitBytes(max: number) {
  let seen = 0;
  return async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      seen += chunk.length;
      if (seen > max) throw new RefusedError(`the workspace tar is over ${max} bytes`);
      yield chunk;
    }
  };
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
