import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, createApi } from "../../../local-client/http/api.ts";
import { runNodeScript } from "../../support/node-script.ts";

/**
 * Requests on connections the server has closed (issue 30). workerd closes a keep-alive
 * connection after 5 s without a request and says nothing beforehand; Node's fetch drops its
 * idle connections after 4 s by a timer, which cannot fire while the process is busy. The
 * server here does what workerd does, faster (it closes a connection 300 ms after its last
 * answer, with no Keep-Alive hint), and the client runs in its own process so that it can be
 * busy while the server keeps time (stale-connection-child.ts).
 */

const IDLE_CLOSE_MS = 300;
const CHILD = resolve(import.meta.dirname, "stale-connection-child.ts");
const CHILD_KILL_MS = 60_000;

interface SeenRequest {
  method: string;
  path: string;
  bytes: number;
}

interface IdleClosingServer {
  url: string;
  seen: SeenRequest[];
  /** Paths whose first request is read and then dropped with its connection, unanswered. */
  dropFirst: Set<string>;
  close(): Promise<void>;
}

/** An HTTP server that closes each connection {@link IDLE_CLOSE_MS} after its last answer. */
async function startIdleClosingServer(): Promise<IdleClosingServer> {
  const seen: SeenRequest[] = [];
  const dropFirst = new Set<string>();
  const idle = new Map<Socket, NodeJS.Timeout>();
  const server = createServer(async (req, res) => {
    clearTimeout(idle.get(req.socket));
    let bytes = 0;
    for await (const chunk of req) bytes += (chunk as Buffer).byteLength;
    const path = new URL(req.url ?? "/", "http://x").pathname;
    seen.push({ method: req.method ?? "GET", path, bytes });
    if (dropFirst.delete(path)) {
      req.socket.destroy();
      return;
    }
    answer(req, res, path, bytes);
    res.on("finish", () => {
      idle.set(
        req.socket,
        setTimeout(() => req.socket.destroy(), IDLE_CLOSE_MS),
      );
    });
  });
  // No Keep-Alive hint and no timer of Node's own: the closes above are the only ones.
  server.keepAliveTimeout = 0;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    dropFirst,
    close: async () => {
      for (const timer of idle.values()) clearTimeout(timer);
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** planport's answers, canned: the health check, a snapshot receipt, a refused creation. */
function answer(req: IncomingMessage, res: ServerResponse, path: string, bytes: number): void {
  const [status, body] =
    path === "/v1/healthz"
      ? [200, { ok: true }]
      : path === "/v1/snapshots"
        ? [201, { id: "a".repeat(64), files: 0, bytes, skipped: [] }]
        : path === "/v1/sessions" && req.method === "POST"
          ? [400, { error: { code: "invalid_json", message: REFUSAL } }]
          : [404, { error: { code: "not_found", message: `No route ${path}.` } }];
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const REFUSAL = "The body nests arrays more than 64 levels deep.";

/** Runs stale-connection-child.ts against `server`; its one JSON line. */
async function runChild(server: string, busyMs: number): Promise<Record<string, string>> {
  const { code, stdout, stderr } = await runNodeScript(
    CHILD,
    [server, String(busyMs)],
    CHILD_KILL_MS,
  );
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Record<string, string>;
}

let server: IdleClosingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a request made after the client was busy past the server's idle close", () => {
  it("reaches the server and gets its answer: the upload is stored, the refused creation says why", async () => {
    server = await startIdleClosingServer();
    // Busy for 3× the server's idle close: its close arrives while no socket event can run.
    const lines = await runChild(server.url, 3 * IDLE_CLOSE_MS);
    // Before: "0 network_error: cannot reach …: write EPIPE" and "…: other side closed".
    expect(lines).toEqual({
      upload: "answered",
      create: `400 invalid_json: ${REFUSAL}`,
    });
    const posts = server.seen.filter((r) => r.method === "POST");
    // Each went out once, whole, on a live connection.
    expect(posts.map((r) => [r.path, r.bytes])).toEqual([
      ["/v1/snapshots", 5 * 1024 * 1024],
      ["/v1/sessions", JSON.stringify({ prompt: "plan it" }).length],
    ]);
  });
});

describe("a connection that closes before any answer", () => {
  it("is tried once more for a call that may be repeated (an upload, the health check), never for a session creation", async () => {
    server = await startIdleClosingServer();
    const api = createApi({ server: server.url, token: "t" });
    server.dropFirst.add("/v1/snapshots");
    await expect(api.uploadSnapshot(new Uint8Array(1024))).resolves.toMatchObject({ bytes: 1024 });
    server.dropFirst.add("/v1/healthz");
    await expect(api.healthz()).resolves.toBe(true);

    server.dropFirst.add("/v1/sessions");
    const refused = await api.createSession({ prompt: "plan it" }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 0, code: "network_error" });
    // A creation that may have reached the server is never repeated: it would make two sessions.
    expect(server.seen.filter((r) => r.path === "/v1/sessions")).toHaveLength(1);
    expect(server.seen.filter((r) => r.path === "/v1/snapshots")).toHaveLength(2);
  });
});
