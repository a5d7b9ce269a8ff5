import { createGunzip, type GunzipStream } from "node:zlib";
import { IngestFailure, notGzip, snapshotTooLarge } from "./errors.ts";

/**
 * Input is handed to the inflater in slices this small, and it inflates into chunks of
 * {@link GUNZIP_OUTPUT_CHUNK_BYTES}: with the inflater's own backpressure (it stops producing
 * while an output chunk is unread), a gzip bomb never holds more than a few hundred KiB of
 * inflated bytes before the count cuts it off. 64 KiB rather than zlib's 16 KiB default: each
 * chunk costs a round of promises through the streams, and at 16 KiB that overhead made a
 * 63.5 MiB snapshot inflate in 2.8× the time of the same inflate at 64 KiB (372 vs 133 ms in
 * Node; the native inflate alone takes ~200 ms in one call).
 */
const GUNZIP_INPUT_SLICE_BYTES = 64 * 1024;
const GUNZIP_OUTPUT_CHUNK_BYTES = 64 * 1024;

/**
 * Gunzips `compressed` as a pull stream and errors it with an {@link IngestFailure} the moment
 * more than `maxBytes` come out (`tooLarge`, by default `snapshot_too_large`) or the input is not gzip
 * (`invalid_body`). Nothing is inflated beyond what the next reader asks for.
 *
 * Why `node:zlib` and not `DecompressionStream`: workerd's DecompressionStream inflates each
 * written chunk completely into an unbounded buffer and resolves the write at once (its
 * source says it implements no backpressure yet), so piping a 300 KB bomb into it would
 * inflate all 300 MiB into memory while the reader is still at the first 100 MiB. workerd's
 * `node:zlib` (enabled by `nodejs_compat`) is the same native zlib with Node's stream
 * backpressure.
 *
 * @example
 * const tar = gunzipWithLimit(request.body, 100 * 1024 * 1024);
 * for await (const chunk of tar) handle(chunk); // throws IngestFailure past 100 MiB
 */
export function gunzipWithLimit(
  compressed: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooLarge: () => IngestFailure = snapshotTooLarge,
): ReadableStream<Uint8Array> {
  const source = compressed.getReader();
  const inflated = inflate(source, maxBytes, tooLarge, (reason) =>
    source.cancel(reason).catch(() => {}),
  );
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await inflated.next();
        if (next.done === true) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel(reason) {
        // The source first: a read waiting on it would hold the generator's return.
        await source.cancel(reason).catch(() => {});
        await inflated.return(undefined).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The same inflation as {@link gunzipWithLimit} of a body already read whole (a blob pack),
 * as an async iterator: no web stream between the inflater and the reader, which in workerd
 * costs a round through the runtime per chunk.
 *
 * @example
 * for await (const chunk of gunzipChunks(await readCompressed(body), 100 * 1024 * 1024)) use(chunk);
 */
export function gunzipChunks(
  compressed: readonly Uint8Array[],
  maxBytes: number,
  tooLarge: () => IngestFailure = snapshotTooLarge,
): AsyncGenerator<Uint8Array> {
  let index = 0;
  const source = {
    read: async () =>
      index < compressed.length
        ? { done: false as const, value: compressed[index++] as Uint8Array }
        : { done: true as const, value: undefined },
  };
  return inflate(source, maxBytes, tooLarge, async () => {
    index = compressed.length;
  });
}

/**
 * Inflates what `source` yields, chunk by chunk as the reader asks, failing with an
 * {@link IngestFailure} past `maxBytes` (`tooLarge`) or on bytes that are not gzip
 * (`invalid_body`); `stopSource` runs when it stops early (a failure, or the reader quit).
 */
async function* inflate(
  source: Pick<ReadableStreamDefaultReader<Uint8Array>, "read">,
  maxBytes: number,
  tooLarge: () => IngestFailure,
  stopSource: (reason: Error) => Promise<void>,
): AsyncGenerator<Uint8Array> {
  const gunzip = createGunzip({ chunkSize: GUNZIP_OUTPUT_CHUNK_BYTES });
  const inflated = gunzip[Symbol.asyncIterator]();
  // Runs alongside the reads; it reports failures through the inflater, never rejects.
  void feed(source, gunzip);
  let total = 0;
  let finished = false;
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await inflated.next();
      } catch (cause) {
        throw cause instanceof IngestFailure ? cause : notGzip(cause);
      }
      if (next.done === true) {
        finished = true;
        return;
      }
      total += next.value.byteLength;
      if (total > maxBytes) throw tooLarge();
      const chunk = next.value;
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
  } finally {
    if (!finished) {
      // A failure, or the reader stopped early: nothing more is inflated or read.
      const reason = new Error("the inflated body was not read to its end");
      gunzip.destroy(reason);
      await stopSource(reason);
    }
  }
}

/** Writes the compressed bytes into the inflater, waiting whenever it asks to. */
async function feed(
  source: Pick<ReadableStreamDefaultReader<Uint8Array>, "read">,
  gunzip: GunzipStream,
): Promise<void> {
  try {
    for (;;) {
      const { done, value } = await source.read();
      if (done) break;
      for (let start = 0; start < value.byteLength; start += GUNZIP_INPUT_SLICE_BYTES) {
        if (gunzip.destroyed) return;
        const slice = value.subarray(start, start + GUNZIP_INPUT_SLICE_BYTES);
        if (!gunzip.write(slice)) await drained(gunzip);
      }
    }
    if (!gunzip.destroyed) gunzip.end();
  } catch (cause) {
    // The reader already stopped the inflater (limit, bad gzip) or the source failed:
    // either way the failure reaches the reader through the inflater.
    if (!gunzip.destroyed)
      gunzip.destroy(cause instanceof Error ? cause : new Error(String(cause)));
  }
}

function drained(gunzip: GunzipStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      gunzip.off("drain", done);
      gunzip.off("close", done);
      resolve();
    };
    gunzip.once("drain", done);
    gunzip.once("close", done);
  });
}
