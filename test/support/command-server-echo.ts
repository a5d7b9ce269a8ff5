import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExecutorHealth, RunResult } from "../../src/protocol/execution.ts";

/**
 * TEST DOUBLE of the image's command server, over real HTTP (a Node `http` server on a loopback
 * port): not the runner — it runs no command — but an ECHO that answers each route of the
 * executor's API (src/protocol/execution.ts) in the API's own shapes with what reached it, so a
 * test on the far side of a transport can tell whether requests arrived intact and answers came
 * back intact:
 *
 * - `GET /v1/health` → 200 {@link ExecutorHealth} (`executor: "echo"`);
 * - `PUT /v1/sessions/:id/workspace` → 204, with `x-echo-body-sha256` and `x-echo-body-bytes`
 *   of the body that arrived, and `x-echo-authorization` of its Authorization header;
 * - `POST /v1/sessions/:id/run` → 200 {@link RunResult} whose stdout is the JSON of
 *   `{method, path, session, content_type, body}` as received (`body` parsed), and a stderr of
 *   {@link ECHO_STDERR_BYTES} bytes of every byte value as text, cut like the runner cuts; for
 *   session `missing`, 409 `workspace_missing` as the runner answers it;
 * - anything else → 404 `not_found`.
 *
 * Used by test/worker/execution-container.test.ts (tests get the URL by `inject`).
 */

export const ECHO_STDERR_BYTES = 40_000;

export interface CommandServerEcho {
  url: string;
  close(): Promise<void>;
}

/**
 * @example
 * const echo = await startCommandServerEcho();
 * await fetch(`${echo.url}/v1/health`);
 * await echo.close();
 */
export async function startCommandServerEcho(): Promise<CommandServerEcho> {
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const answer = echoAnswer(req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

function echoAnswer(req: IncomingMessage, body: Buffer): Answer {
  const path = new URL(req.url ?? "/", "http://echo").pathname;
  const json = (status: number, value: unknown): Answer => ({
    status,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(value),
  });
  if (req.method === "GET" && path === "/v1/health") {
    const health: ExecutorHealth = { ok: true, executor: "echo" };
    return json(200, health);
  }
  const route = /^\/v1\/sessions\/([^/]+)\/(workspace|run)$/.exec(path);
  if (route?.[2] === "workspace" && req.method === "PUT") {
    return {
      status: 204,
      headers: {
        "x-echo-body-sha256": createHash("sha256").update(body).digest("hex"),
        "x-echo-body-bytes": String(body.length),
        "x-echo-authorization": req.headers.authorization ?? "",
      },
    };
  }
  if (route?.[2] === "run" && req.method === "POST") {
    if (route[1] === "missing") {
      return json(409, {
        error: { code: "workspace_missing", message: "This session has no workspace." },
      });
    }
    const echoed = {
      method: req.method,
      path,
      session: decodeURIComponent(route[1] ?? ""),
      content_type: req.headers["content-type"] ?? null,
      body: JSON.parse(body.toString("utf8")) as unknown,
    };
    const stdout = JSON.stringify(echoed);
    const stderr = everyByteText(ECHO_STDERR_BYTES);
    const result: RunResult = {
      exit_code: 0,
      timed_out: false,
      duration_ms: 1,
      stdout: { text: stdout, bytes: Buffer.byteLength(stdout), cut: false },
      stderr: { text: stderr.slice(0, 30_000), bytes: ECHO_STDERR_BYTES, cut: true },
      changes: [{ path: "made-by-echo.txt", kind: "created", content: "é\u0000?\n" }],
    };
    return json(200, result);
  }
  return json(404, { error: { code: "not_found", message: `No route ${req.method} ${path}.` } });
}

/** Text of every printable code point below 0x800 over and over: multi-byte UTF-8 included. */
function everyByteText(bytes: number): string {
  let text = "";
  for (let c = 0x20; Buffer.byteLength(text) < bytes; c = c >= 0x7ff ? 0x20 : c + 1) {
    text += String.fromCodePoint(c);
  }
  return text;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
