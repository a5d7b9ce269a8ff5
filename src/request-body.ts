/**
 * Reading a request body within a limit: bytes are counted as they arrive and the body is
 * refused as soon as the count passes the limit, never buffered whole first. Used for the JSON
 * routes (api/validate.ts) and the snapshot uploads (snapshot/archive.ts).
 */

/**
 * How much more of an oversized body is read (and dropped, never kept) before the refusal.
 * Answering while the client is still sending can leave the connection unusable for the next
 * request in the local runtime (wrangler dev's proxy in front of workerd: the next POST gets
 * 503 "Your worker restarted mid-request", the next GET hangs; see cloudflare/workerd#1730 and
 * cloudflare/workers-sdk#15203), so a body a little over the limit — the usual mistake — is
 * read to its end; anything larger is cut off soon after the limit.
 */
export const OVERSIZED_BODY_DRAIN_BYTES = 2 * 1024 * 1024;

/**
 * The body's bytes, or null when it has more than `maxBytes` (then at most `drainBytes` more
 * are read and dropped, and the rest is cancelled). An absent body is empty.
 *
 * @example
 * const bytes = await readBodyWithin(request.body, 140_000);
 * if (bytes === null) return tooLarge();
 */
export async function readBodyWithin(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  drainBytes = OVERSIZED_BODY_DRAIN_BYTES,
): Promise<Uint8Array | null> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await drainThenCancel(reader, drainBytes);
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** Reads and drops up to `maxBytes` more of the body, then cancels whatever is left. */
export async function drainThenCancel(
  reader: Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel">,
  maxBytes: number,
): Promise<void> {
  let drained = 0;
  try {
    while (drained < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return;
      drained += value.byteLength;
    }
  } catch {
    // The client went away mid-body: nothing left to drain, and the refusal stands anyway.
    return;
  }
  await reader.cancel().catch(() => {});
}
