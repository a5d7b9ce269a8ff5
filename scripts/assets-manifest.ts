import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import type { AssetsManifest } from "../local-client/embedded/workerd-config.ts";

/**
 * The index of the static assets (wrangler.toml `[assets]`) the embedded worker's router
 * serves (local-client/embedded/runtime/assets.ts): for each file, its URL path, type, entity
 * tag and the headers its `_headers` rules give it. Made once, by the build, so a start reads a
 * small JSON file instead of hashing the folder.
 */

/** One `_headers` rule: a URL pattern (`*` matches any run of characters) and its headers. */
export interface HeaderRule {
  pattern: string;
  headers: [string, string][];
}

/**
 * Reads a `_headers` file in Cloudflare's format: a URL pattern on a line of its own, then its
 * headers as indented `Name: value` lines; `#` starts a comment. Syntax this reader does not
 * implement (placeholders, `!` detaching, absolute URLs) is refused, so a rule is never
 * silently dropped.
 *
 * @example
 * parseHeadersFile("/a/*\n  X-Frame-Options: DENY\n")
 * // → [{ pattern: "/a/*", headers: [["X-Frame-Options", "DENY"]] }]
 */
export function parseHeadersFile(text: string): HeaderRule[] {
  const rules: HeaderRule[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.replace(/\s+$/, "");
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const where = `_headers line ${index + 1}`;
    if (!/^\s/.test(line)) {
      if (!line.startsWith("/") || line.includes(":") || /\s/.test(line)) {
        throw new Error(`${where}: only paths with * are supported as patterns: ${line}`);
      }
      rules.push({ pattern: line, headers: [] });
      continue;
    }
    const header = /^\s+([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    const rule = rules.at(-1);
    if (header === null || rule === undefined) {
      throw new Error(`${where}: expected "Name: value" under a path: ${line.trim()}`);
    }
    rule.headers.push([header[1] as string, header[2] as string]);
  }
  return rules;
}

/**
 * The headers every matching rule gives a URL path, in the file's order.
 *
 * @example
 * headersFor("/review/vendor/m.js", [{ pattern: "/review/vendor/*", headers: [["A", "1"]] }])
 * // → [["A", "1"]]
 */
export function headersFor(path: string, rules: HeaderRule[]): [string, string][] {
  return rules.filter((rule) => patternMatches(rule.pattern, path)).flatMap((rule) => rule.headers);
}

function patternMatches(pattern: string, path: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === path;
  const first = parts[0] as string;
  const last = parts.at(-1) as string;
  if (!path.startsWith(first) || !path.endsWith(last)) return false;
  let at = first.length;
  for (const middle of parts.slice(1, -1)) {
    const found = path.indexOf(middle, at);
    if (found === -1) return false;
    at = found + middle.length;
  }
  return at <= path.length - last.length;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
  ".woff2": "font/woff2",
};

/**
 * The index of an assets folder (`_headers` itself is not served, as on Cloudflare).
 *
 * @example
 * assetsManifest("public").files["/review/vendor/mermaid.min.js"].type // → "text/javascript; charset=utf-8"
 */
export function assetsManifest(directory: string): AssetsManifest {
  const headersFile = join(directory, "_headers");
  const rules = statSync(headersFile, { throwIfNoEntry: false })
    ? parseHeadersFile(readFileSync(headersFile, "utf8"))
    : [];
  const files: AssetsManifest["files"] = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && path !== headersFile) {
        const file = relative(directory, path).split(sep).join("/");
        const url = `/${file}`;
        const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
        files[url] = {
          file,
          type: TYPES[extname(path).toLowerCase()] ?? "application/octet-stream",
          etag: `"${digest.slice(0, 32)}"`,
          headers: headersFor(url, rules),
        };
      }
    }
  };
  walk(directory);
  return { files };
}
