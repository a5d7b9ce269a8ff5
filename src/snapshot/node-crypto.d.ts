// The part of `node:crypto` the snapshot ingest uses (git's SHA-1 blob ids), for the worker's
// type check (the worker project does not load @types/node; workerd provides the module under
// `nodejs_compat`). Web Crypto has no incremental digest, and a blob id hashes two parts.
declare module "node:crypto" {
  interface Hash {
    update(data: Uint8Array): Hash;
    digest(encoding: "hex"): string;
  }
  export function createHash(algorithm: "sha1"): Hash;
}
