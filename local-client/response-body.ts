/**
 * Reading an HTTP answer's body with a byte limit. `res.json()` and `res.text()` buffer whatever
 * the server sends: a 100 MB events page held 513 MB of memory (issue 10, finding 8). Here the
 * body is streamed and counted, and reading stops at the limit.
 */

/**
 * The whole body, or `null` when it is longer than `maxBytes` (a declared Content-Length over
 * the limit is refused before reading; otherwise reading stops at the first byte past it and
 * the rest is never fetched).
 *
 * @example
 * const bytes = await readBodyAtMost(res, 32 * 1024 * 1024);
 * if (bytes === null) throw new Error("answer too large");
 */
export async function readBodyAtMost(res: Response, maxBytes: number): Promise<Uint8Array | null> {
  if (res.body === null) return new Uint8Array();
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body.cancel().catch(() => {});
    return null;
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
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
