import { once } from "node:events";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";

/**
 * A real HTTP server that stands in front of the fake feed (test/client/fake-feed.ts) and
 * misbehaves where a test says so: it trickles a body, never sends headers, sends far too much,
 * or answers 429 with a Retry-After. Every other request is forwarded untouched, so the feed's
 * normal answers stay available. The security review's slow- and spoofing-server cases
 * (issue 10) run the real CLI against it.
 */

export interface ProxiedRequest {
  method: string;
  path: string;
  /** performance.now() when it arrived. */
  at: number;
}

/** Return true when the request was answered (or deliberately left hanging) here. */
export type Misbehaviour = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

export interface HostileServer {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** Replaceable between requests. */
  misbehave: Misbehaviour;
  close(): Promise<void>;
}

export async function startHostileServer(
  target: string,
  misbehave: Misbehaviour = () => false,
): Promise<HostileServer> {
  const requests: ProxiedRequest[] = [];
  const host: HostileServer = {
    url: "",
    requests,
    misbehave,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ method: req.method ?? "GET", path, at: performance.now() });
    // The health check goes through as it is: the CLI first asks a local server to prove it
    // holds the token (src/protocol/server-proof.ts), and the misbehaviour under test is the
    // one after that.
    if (path !== "/v1/healthz" && host.misbehave(req, res, path)) return;
    const upstream = httpRequest(
      `${target}${req.url ?? "/"}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return Object.assign(host, { url: `http://127.0.0.1:${address.port}` });
}

const TRICKLE_EVERY_MS = 200;

/** 200, `{`, then a space every 200 ms for as long as the client listens. */
export function trickle(res: ServerResponse): true {
  res.writeHead(200, { "content-type": "application/json" });
  res.write("{");
  const timer = setInterval(() => res.write(" "), TRICKLE_EVERY_MS);
  res.on("close", () => clearInterval(timer));
  return true;
}

/** Reads the request and never answers: no status line, no headers. */
export function neverAnswer(req: IncomingMessage): true {
  req.resume();
  return true;
}

/**
 * 200 with `bytes` of JSON-looking body, streamed in 1 MiB chunks as fast as the client reads;
 * `declareLength` sends a Content-Length header (else chunked).
 */
export function hugeBody(res: ServerResponse, bytes: number, declareLength = false): true {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  res.writeHead(200, {
    "content-type": "application/json",
    ...(declareLength ? { "content-length": String(bytes) } : {}),
  });
  let sent = 0;
  const pump = () => {
    while (sent < bytes) {
      const n = Math.min(chunk.byteLength, bytes - sent);
      sent += n;
      if (!res.write(n === chunk.byteLength ? chunk : chunk.subarray(0, n))) {
        res.once("drain", pump);
        return;
      }
    }
    res.end();
  };
  res.on("error", () => {});
  pump();
  return true;
}

/** A planport error body with extra headers (a 429's Retry-After). */
export function errorAnswer(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: { code, message } }));
  return true;
}
