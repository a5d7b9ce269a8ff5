import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Miniflare as MiniflareClass } from "miniflare";
import { loadWithCodeCache } from "../../local-client/embedded/compile-cache.ts";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";

/**
 * The floor of the embedded worker's cold start (P11): the same runtime, started the same way
 * as the worker host (a Node process that loads Miniflare with its code cache and starts the
 * Workers runtime), with an empty worker that answers every request. The bench bundles this
 * file and times it from spawn to its first answer.
 *
 * Usage: node empty-worker-host.mjs <port> <cache dir | -> (`-`: no code cache, Miniflare's
 * plain start)
 */

const port = Number(process.argv[2]);
const cacheDir = process.argv[3] ?? "-";
// The built worker's runtime settings (compatibility date and flags), without its code.
const { options } = JSON.parse(
  readFileSync(join(PACKAGE_ROOT, "dist", "worker", "options.json"), "utf8"),
) as { options: { compatibilityDate: string; compatibilityFlags: string[] } };
type MiniflareModule = { Miniflare: typeof MiniflareClass };
const loaded =
  cacheDir === "-"
    ? { exports: (await import("miniflare")) as MiniflareModule, saveCache() {} }
    : loadWithCodeCache<MiniflareModule>("miniflare", cacheDir);
const mf = new loaded.exports.Miniflare({
  modules: true,
  script: "export default { fetch() { return Response.json({ ok: true }); } }",
  compatibilityDate: options.compatibilityDate,
  compatibilityFlags: options.compatibilityFlags,
  host: "127.0.0.1",
  port,
  cf: false,
});
await mf.ready;
loaded.saveCache();
process.on("SIGTERM", () => {
  void mf.dispose().then(() => process.exit(0));
});
