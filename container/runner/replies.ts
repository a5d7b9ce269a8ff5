import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The executor API's bodies and answers over node:http, shared by its two servers: the command
 * server in the image (server.ts) and the local executor (local-client/execution/server.ts).
 * Errors are `{"error": {"code", "message"}}` (src/protocol/execution.ts).
 */

/**
 * The request's body, or undefined once it is over `max` bytes (by its content-length, or as
 * it arrives): the caller answers 413.
 */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers["content-length"] ?? "0") > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** An error answer; a response already under way is cut instead (its status is sent). */
export function sendError(res: ServerResponse, status: number, code: string, text: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { error: { code, message: text } });
}
