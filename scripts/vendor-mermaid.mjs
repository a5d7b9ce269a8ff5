// @ts-check
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Copies mermaid's browser bundle (node_modules/mermaid/dist/mermaid.min.js) into the worker's
 * static assets, public/review/vendor/mermaid.min.js (git-ignored), where wrangler serves it
 * (`[assets]` in wrangler.toml) to the review page's diagram frames. Run by `postinstall`, so
 * every `npm ci` / `npm install` leaves the asset in place; it fails when the installed mermaid
 * is not the version package.json pins.
 *
 * @example
 * node scripts/vendor-mermaid.mjs                      # from this checkout's node_modules
 * node scripts/vendor-mermaid.mjs /elsewhere/node_modules/mermaid   # from another install
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the asset goes, and the URL path wrangler serves it at (/review/vendor/mermaid.min.js). */
export const MERMAID_ASSET = join(ROOT, "public", "review", "vendor", "mermaid.min.js");

/** Copies the bundle; answers the mermaid version copied. */
export function vendorMermaid(packageDir = defaultPackageDir()) {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const pinned = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).dependencies?.mermaid;
  if (pinned && manifest.version !== pinned) {
    throw new Error(`mermaid ${manifest.version} is installed, package.json pins ${pinned}`);
  }
  mkdirSync(dirname(MERMAID_ASSET), { recursive: true });
  copyFileSync(join(packageDir, "dist", "mermaid.min.js"), MERMAID_ASSET);
  // The source map is not shipped: drop the comment that would make devtools ask for it.
  const text = readFileSync(MERMAID_ASSET, "utf8").replace(
    /\n?\/\/# sourceMappingURL=\S+\s*$/,
    "\n",
  );
  writeFileSync(MERMAID_ASSET, text);
  return String(manifest.version);
}

function defaultPackageDir() {
  const require = createRequire(join(ROOT, "package.json"));
  return dirname(require.resolve("mermaid/package.json"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const version = vendorMermaid(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`mermaid ${version} -> ${MERMAID_ASSET.slice(ROOT.length + 1)}`);
}
