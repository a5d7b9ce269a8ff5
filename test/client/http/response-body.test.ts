import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { readBodyAtMost } from "../../../local-client/http/response-body.ts";

/**
 * Reading an answer's body ends with its signal (docs/DESIGN.md "The client's requests"), with
 * Node's real fetch against a real server that answers the way `wrangler dev` does: gzipped and
 * chunked. Node 20's fetch stops listening for the abort once the last byte has arrived, while
 * the gunzip behind the body is still at work; a read pending then must still end with the
 * signal, not stay pending forever.
 */

const MIB = 1024 * 1024;
/** Inflates for far longer than the gap between the last chunk and the abort below. */
const INFLATED_BYTES = 24 * MIB;
const PAGE = JSON.stringify({ data: [], has_more: false, first_id: null, last_id: null });
const PADDED = PAGE + " ".repeat(INFLATED_BYTES - PAGE.length);
const GZIPPED = gzipSync(PADDED);

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/**
 * Serves one gzipped, chunked answer: the headers and the compressed body at once, the last
 * chunk `lastChunkDelayMs` later; `onEnd` runs once the last chunk is written.
 */
async function gzipServer(lastChunkDelayMs: number, onEnd: () => void = () => {}) {
  server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
    res.write(GZIPPED);
    setTimeout(() => res.end(onEnd), lastChunkDelayMs);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}/`;
}

/** The rejection, or what was read instead (its size: a failure must not print 24 MiB). */
function outcomeOf(read: Promise<Uint8Array | null>): Promise<unknown> {
  return read.then(
    (body) => `read ${body === null ? "past the limit" : `${body.byteLength} bytes`}`,
    (err: unknown) => err,
  );
}

describe("readBodyAtMost", () => {
  it("reads a gzipped, chunked answer whole when nothing aborts", async () => {
    const url = await gzipServer(5);
    const controller = new AbortController();
    const res = await fetch(url, { signal: controller.signal });
    const body = await readBodyAtMost(res, 32 * MIB, controller.signal);
    expect(body?.byteLength).toBe(INFLATED_BYTES);
    expect(new TextDecoder().decode(body?.subarray(0, PAGE.length))).toBe(PAGE);
  });

  it("rejects with the signal's reason when it aborts after the last byte arrived, while the body is still inflating", async () => {
    const controller = new AbortController();
    const reason = new Error("the group chose another session");
    // A moment after the last chunk went out: the client has it, the gunzip is still at work.
    const url = await gzipServer(10, () => setTimeout(() => controller.abort(reason), 10));
    const res = await fetch(url, { signal: controller.signal });
    expect(await outcomeOf(readBodyAtMost(res, 32 * MIB, controller.signal))).toBe(reason);
  });

  it("rejects at once when the signal has aborted already", async () => {
    const url = await gzipServer(5);
    const res = await fetch(url);
    const controller = new AbortController();
    const reason = new Error("stopped");
    controller.abort(reason);
    expect(await outcomeOf(readBodyAtMost(res, 32 * MIB, controller.signal))).toBe(reason);
  });

  it("still stops at the byte limit of an inflated body (null), before the signal aborts", async () => {
    const url = await gzipServer(5);
    const controller = new AbortController();
    const res = await fetch(url, { signal: controller.signal });
    expect(await readBodyAtMost(res, MIB, controller.signal)).toBeNull();
  });
});
