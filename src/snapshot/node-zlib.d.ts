// The part of `node:zlib` the snapshot ingest uses, for the worker's type check (the worker
// project does not load @types/node; workerd provides the module under `nodejs_compat`).
declare module "node:zlib" {
  interface GunzipStream extends AsyncIterable<Uint8Array> {
    readonly destroyed: boolean;
    write(chunk: Uint8Array): boolean;
    end(): void;
    destroy(error?: Error): void;
    once(event: "drain" | "close", listener: () => void): void;
    off(event: "drain" | "close", listener: () => void): void;
  }
  export function createGunzip(options?: { chunkSize?: number }): GunzipStream;
}
