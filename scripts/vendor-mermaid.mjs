// @ts-check
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Updates the review page's diagram renderer: mermaid's browser bundle, committed at
 * public/review/vendor/mermaid.min.js, where the worker serves it as a static asset
 * (`[assets]` in wrangler.toml) to the review page's diagram frames.
 *
 * Why committed rather than installed: mermaid is 135 MB installed (and warns on Node 20) for
 * one 5.5 MB browser file. The bundle ships in the package (`files` has public/), so neither a
 * clone's `npm ci` nor a user's `npm install -g` fetches mermaid; this script is how a
 * maintainer moves to another version. It downloads the pinned version's tarball from the npm
 * registry (`npm pack`) into a temporary folder and copies the one file.
 *
 * @example
 * npm run vendor:mermaid            # the version pinned below
 * node scripts/vendor-mermaid.mjs 12.4.0
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The mermaid version the committed bundle comes from. */
export const MERMAID_VERSION = "12.3.0";

/** Where the asset goes; served at /review/vendor/mermaid.min.js. */
export const MERMAID_ASSET = join(ROOT, "public", "review", "vendor", "mermaid.min.js");

/** Downloads mermaid `version` and writes its browser bundle to the asset path. */
export function vendorMermaid(version = MERMAID_VERSION) {
  const work = mkdtempSync(join(tmpdir(), "planport-mermaid-"));
  try {
    const tarball = execFileSync("npm", ["pack", `mermaid@${version}`, "--silent"], {
      cwd: work,
      encoding: "utf8",
    }).trim();
    execFileSync("tar", ["-xzf", tarball, "package/dist/mermaid.min.js"], { cwd: work });
    // The source map is not shipped: drop the comment that would make devtools ask for it.
    const text = readFileSync(join(work, "package", "dist", "mermaid.min.js"), "utf8").replace(
      /\n?\/\/# sourceMappingURL=\S+\s*$/,
      "\n",
    );
    mkdirSync(dirname(MERMAID_ASSET), { recursive: true });
    writeFileSync(MERMAID_ASSET, text);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const version = process.argv[2] ?? MERMAID_VERSION;
  vendorMermaid(version);
  console.log(`mermaid ${version} -> ${MERMAID_ASSET.slice(ROOT.length + 1)}`);
}
