import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The planport package's root folder (where package.json, wrangler.toml, dist/ and public/
 * are), found by walking up from this module: the same answer from the TypeScript sources in
 * a clone and from the bundled files of an installed package, wherever the bundler put this
 * code (dist/cli/ or one of its chunks).
 *
 * @example
 * join(packageRoot(), "dist", "worker") // the built worker
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && isPlanport(manifest)) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no planport package.json above ${from}`);
    dir = parent;
  }
}

function isPlanport(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "planport";
  } catch {
    return false;
  }
}

/** Resolved once: the package does not move while a command runs. */
export const PACKAGE_ROOT = resolve(packageRoot());
