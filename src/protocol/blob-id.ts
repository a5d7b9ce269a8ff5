import { createHash } from "node:crypto";

/**
 * Git's blob id of a file's content: the hex SHA-1 of `blob <byte length>\0` followed by the
 * bytes, as `git hash-object` prints it. The one definition for both ends: incremental
 * snapshots name blobs by it (docs/PROTOCOL.md "Incremental snapshots"; the worker checks every
 * uploaded blob against it), and remote changes carry it in their diffs' `index` lines so
 * `git apply --3way` can merge. `node:crypto` is in Node and in workerd (`nodejs_compat`).
 *
 * @example
 * gitBlobId("hello\n") // "ce013625030ba8dba906f756967f9e9ca394464a"
 * gitBlobId(new Uint8Array()) // "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", git's empty blob
 */
export function gitBlobId(content: Uint8Array | string): string {
  const bytes = typeof content === "string" ? encoder.encode(content) : content;
  return createHash("sha1")
    .update(encoder.encode(`blob ${bytes.byteLength}\0`))
    .update(bytes)
    .digest("hex");
}

const encoder = new TextEncoder();
