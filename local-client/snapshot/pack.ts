import { createHash } from "node:crypto";
import { createTarPacker, type TarPackController } from "modern-tar";
import {
  SNAPSHOT_MAX_COMPRESSED_BYTES,
  SNAPSHOT_MAX_FILES,
  SNAPSHOT_MAX_UNCOMPRESSED_BYTES,
} from "../../src/protocol/index.ts";
import { SnapshotError } from "./error.ts";
import { openParallelGzip } from "./gzip.ts";

/**
 * The deterministic tar.gz writer: the same files in the same order give the same bytes, on
 * any machine with the same zlib, so the sha256 (the snapshot id) only changes when the tree
 * does and an unchanged tree is never uploaded twice.
 *
 * Every entry is a regular file with mode 0644, mtime 0, uid/gid 0 and empty user/group
 * names (modern-tar writes a pax record only for a path too long for ustar, and stamps it
 * with the same zero mtime). gzip: level 6, compressed on several threads with a fixed
 * header (see `snapshot/gzip.ts`).
 */

const GZIP_LEVEL = 6;
const FIXED_MTIME = new Date(0);
const MIB = 1024 * 1024;

/** One file's entry: its path inside the archive and its full content. */
export interface PackedFile {
  path: string;
  content: Uint8Array;
}

export interface Packer {
  /** Appends a file (call in sorted order; the caller decides the order). */
  add(file: PackedFile): Promise<void>;
  /** Ends the archive and returns the gzip bytes and their sha256. */
  finish(): Promise<{ id: string; bytes: Uint8Array<ArrayBuffer> }>;
  /** Abandons the archive (after an error elsewhere). */
  abort(reason: unknown): void;
}

/**
 * Opens a streaming tar.gz writer that enforces the server's limits as it goes, so a tree
 * that would be refused fails here, before any upload. `level` is gzip's (6 unless given);
 * the same files at the same level give the same bytes.
 *
 * @example
 * const packer = openPacker();
 * await packer.add({ path: "src/app.ts", content: bytes });
 * const { id, bytes } = await packer.finish();
 */
export function openPacker(options: { level?: number } = {}): Packer {
  const { readable, controller } = createTarPacker();
  const gzip = openParallelGzip(options.level ?? GZIP_LEVEL, (compressedBytes) => {
    if (compressedBytes > SNAPSHOT_MAX_COMPRESSED_BYTES) {
      throw new SnapshotError(
        "payload_too_large",
        `The snapshot compresses to more than ${SNAPSHOT_MAX_COMPRESSED_BYTES / MIB} MiB, the largest upload the server accepts. Add large or generated files to .gitignore and try again.`,
      );
    }
  });
  let tarBytes = 0;
  let files = 0;

  const compress = async (): Promise<Uint8Array<ArrayBuffer>> => {
    const reader = readable.getReader();
    try {
      return await compressFrom(reader);
    } catch (error) {
      // Stop the tar side too, so an add() waiting for room in the tar stream fails now.
      await reader.cancel(error).catch(() => {});
      throw error;
    }
  };
  const compressFrom = async (
    reader: ReadableStreamDefaultReader<Uint8Array>,
  ): Promise<Uint8Array<ArrayBuffer>> => {
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      tarBytes += chunk.byteLength;
      if (tarBytes > SNAPSHOT_MAX_UNCOMPRESSED_BYTES) {
        throw new SnapshotError(
          "snapshot_too_large",
          `The repository's text files add up to more than ${SNAPSHOT_MAX_UNCOMPRESSED_BYTES / MIB} MiB, the most a snapshot may hold. Add large or generated files to .gitignore and try again.`,
        );
      }
      await gzip.write(chunk);
    }
    return gzip.end();
  };
  // Settles with the gzip bytes, or the first failure of the compressing side (a limit).
  const packing = compress().then(
    (bytes) => ({ ok: true as const, bytes }),
    (error: unknown) => ({ ok: false as const, error }),
  );

  const rethrowPackingFailure = async (cause: unknown): Promise<never> => {
    controller.error(cause);
    const outcome = await packing;
    throw !outcome.ok && outcome.error instanceof SnapshotError ? outcome.error : cause;
  };

  return {
    async add({ path, content }) {
      files += 1;
      if (files > SNAPSHOT_MAX_FILES) {
        const failure = new SnapshotError(
          "snapshot_too_many_files",
          `The repository has more than ${SNAPSHOT_MAX_FILES.toLocaleString("en-US")} text files, the most a snapshot may hold. Add generated or vendored folders to .gitignore and try again.`,
        );
        controller.error(failure);
        throw failure;
      }
      try {
        await writeEntry(controller, path, content);
      } catch (cause) {
        await rethrowPackingFailure(cause);
      }
    },
    async finish() {
      try {
        controller.finalize();
      } catch (cause) {
        await rethrowPackingFailure(cause);
      }
      const outcome = await packing;
      if (!outcome.ok) throw outcome.error;
      const id = createHash("sha256").update(outcome.bytes).digest("hex");
      return { id, bytes: outcome.bytes };
    },
    abort(reason) {
      controller.error(reason);
    },
  };
}

async function writeEntry(
  controller: TarPackController,
  path: string,
  content: Uint8Array,
): Promise<void> {
  const body = controller.add({
    name: path,
    size: content.byteLength,
    type: "file",
    mode: 0o644,
    mtime: FIXED_MTIME,
    uid: 0,
    gid: 0,
    uname: "",
    gname: "",
  });
  const writer = body.getWriter();
  if (content.byteLength > 0) await writer.write(content);
  await writer.close();
}
