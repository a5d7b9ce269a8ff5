import { createHash } from "node:crypto";
import { gitBlobHeader } from "../src/protocol/index.ts";

/**
 * A file's blob id as git computes it (docs/PROTOCOL.md "Incremental snapshots"): the SHA-1 of
 * `blob <size>\0` and the content. The worker computes the same (src/snapshot/archive.ts).
 *
 * @example
 * gitBlobId(new Uint8Array()) // "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", git's empty blob
 */
export function gitBlobId(content: Uint8Array): string {
  return createHash("sha1").update(gitBlobHeader(content.byteLength)).update(content).digest("hex");
}
