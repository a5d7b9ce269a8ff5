import { unlessAborted } from "./abort-after.ts";

/**
 * Reading an HTTP answer's body with a byte limit, ending when its signal aborts.
 *
 * - `res.json()` and `res.text()` buffer whatever the server sends: a 100 MB events page held
 *   513 MB of memory (issue 10, finding 8). Here the body is streamed and counted, and reading
 *   stops at the limit.
 * - Every read is raced against the request's signal (docs/DESIGN.md "The client's requests"):
 *   Node 20's fetch stops listening for the abort once the last byte has arrived, and a gzipped
 *   answer (wrangler dev gzips every JSON one) is still being inflated then; an abort in that
 *   window left `reader.read()` pending forever, with nothing keeping Node alive (the group
 *   wait's exit 13). On abort the reader is cancelled and the read rejects with the reason.
 */

/**
 * The whole body, or `null` when it is longer than `maxBytes` (a declared Content-Length over
 * the limit is refused before reading; otherwise reading stops at the first byte past it and
 * the rest is never fetched). Rejects with `signal`'s reason as soon as it aborts.
 *
 * @example
 * const bytes = await readBodyAtMost(res, 32 * 1024 * 1024, limit.signal);
 * if (bytes === null) throw new Error("answer too large");
 */
export async function readBodyAtMost(
  res: Response,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array | null> {
  if (res.body === null) return new Uint8Array();
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await unlessAborted(res.body.cancel(), signal).catch(() => {});
    return null;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await unlessAborted(reader.read(), signal);
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await unlessAborted(reader.cancel(), signal).catch(() => {});
        return null;
      }
      chunks.push(value);
    }
  } catch (err) {
    // Not awaited: a stream that ignored the abort may ignore the cancel too.
    if (signal.aborted) reader.cancel(signal.reason).catch(() => {});
    throw err;
  }
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
