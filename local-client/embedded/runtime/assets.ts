import type { AssetsManifest } from "../workerd-config.ts";

/**
 * The static assets of the embedded worker (wrangler.toml `[assets]`), as a module workerd
 * runs (workerd-config.ts): requests for a file the build indexed are answered from the
 * read-only assets folder with its type, entity tag and `_headers`; everything else goes to the
 * planport worker (`WORKER`), as Cloudflare serves assets before the worker. Without `WORKER`
 * (the worker's own `ASSETS` binding) anything else is a 404.
 *
 * It also drops a `CF-Connecting-IP` the client sent: Cloudflare's edge sets it from the
 * connection, and on this machine every caller is 127.0.0.1 anyway, so one claimed by a caller
 * must not pick its own rate-limit counter.
 */

interface Fetcher {
  fetch(request: Request): Promise<Response>;
}

interface Env {
  MANIFEST: AssetsManifest;
  DISK?: Fetcher;
  WORKER?: Fetcher;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const asset =
      request.method === "GET" || request.method === "HEAD"
        ? env.MANIFEST.files[url.pathname]
        : undefined;
    if (asset !== undefined && env.DISK !== undefined) {
      const headers = new Headers(asset.headers);
      headers.set("Content-Type", asset.type);
      headers.set("ETag", asset.etag);
      headers.set("Cache-Control", "public, max-age=0, must-revalidate");
      if (request.headers.get("If-None-Match") === asset.etag) {
        return new Response(null, { status: 304, headers });
      }
      const file = await env.DISK.fetch(
        new Request(new URL(asset.file, "http://assets/"), { method: request.method }),
      );
      if (file.ok) {
        const length = file.headers.get("Content-Length");
        if (length !== null) headers.set("Content-Length", length);
        return new Response(request.method === "HEAD" ? null : file.body, { headers });
      }
    }
    if (env.WORKER === undefined) return new Response("Not Found", { status: 404 });
    const forwarded = new Request(request);
    forwarded.headers.delete("CF-Connecting-IP");
    return env.WORKER.fetch(forwarded);
  },
};
