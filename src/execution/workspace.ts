import { createTarPacker } from "modern-tar";
import type { SnapshotFiles } from "../snapshot/files.ts";

/**
 * The snapshot as the tar a container's workspace is filled from, streamed: packs are read one
 * at a time (the snapshot reader's bound), so a large repository never sits in the Durable
 * Object's memory whole. The overlay's edits are not in it: every run sends them
 * (`RunRequest.files`), so a workspace made at any point of the execution holds the same tree.
 *
 * The snapshot keeps no file modes; a file that starts with `#!` is packed executable, as git
 * would most likely have it (`./scripts/test.sh` then runs as it did at home).
 *
 * @example
 * await client.putWorkspace(sessionId, snapshotTar(port.snapshot));
 */
export function snapshotTar(snapshot: SnapshotFiles): ReadableStream<Uint8Array> {
  const { readable, controller } = createTarPacker();
  void (async () => {
    try {
      for await (const { path, bytes } of snapshot.scanBytes()) {
        const entry = controller.add({
          name: path,
          size: bytes.byteLength,
          mode: isScript(bytes) ? 0o755 : 0o644,
          mtime: EPOCH,
          type: "file",
        });
        const writer = entry.getWriter();
        await writer.write(bytes);
        await writer.close();
      }
      controller.finalize();
    } catch (err) {
      controller.error(err);
    }
  })();
  return readable;
}

/** One time for every file: the tar of a snapshot is the same bytes whenever it is made. */
const EPOCH = new Date(0);

/** Whether a file starts with `#!`. */
export function isScript(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x23 && bytes[1] === 0x21;
}
