// The part of `node:crypto` src/protocol/blob-id.ts uses (git's SHA-1 blob ids), for the worker's
// type check (the worker project does not load @types/node; workerd provides the module under
// `nodejs_compat`). Web Crypto has no incremental digest, and a blob id hashes two parts.
// It lives here, not beside blob-id.ts: the Node project type-checks src/protocol with @types/node.
declare module "node:crypto" {
  interface Hash {
    update(data: Uint8Array): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: "sha1"): Hash;
}
