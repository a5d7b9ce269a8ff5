import type { Context } from "hono";
import type { AppEnv } from "./auth.ts";
import { ConfigError } from "./errors.ts";

/**
 * Where the worker's links point (review links carry their key, so they must never point at a
 * host an attacker chose). `PLANPORT_PUBLIC_URL`, when set, wins: behind a proxy that passes
 * `Host` through unchecked, a forged Host would otherwise yield a review link to another host.
 * Without it, links use the origin this request reached the worker on, which is right for
 * `wrangler dev`, the embedded worker and a plain `*.workers.dev` deployment.
 */

/**
 * The base of absolute links: scheme, host and any path prefix, without a trailing slash.
 * Throws when PLANPORT_PUBLIC_URL is set but is not an http(s) URL (a deployment error: the
 * app answers 500 with the message rather than hand out links to nowhere).
 *
 * @example
 * linkBase(c) // "https://planport.example.com" (PLANPORT_PUBLIC_URL) or "http://127.0.0.1:8787"
 */
export function linkBase(c: Context<AppEnv>): string {
  const configured = c.env.PLANPORT_PUBLIC_URL?.trim();
  if (configured === undefined || configured === "") return new URL(c.req.url).origin;
  return parsePublicUrl(configured);
}

/**
 * Validates a configured public URL and returns its origin and path without trailing slash.
 *
 * @example
 * parsePublicUrl("https://example.com/planport/") // "https://example.com/planport"
 */
export function parsePublicUrl(configured: string): string {
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    throw new ConfigError(`PLANPORT_PUBLIC_URL is not a URL: ${JSON.stringify(configured)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(
      `PLANPORT_PUBLIC_URL must start with https:// or http://, got ${url.protocol}`,
    );
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new ConfigError(
      "PLANPORT_PUBLIC_URL must be a plain base URL (no query, fragment or credentials)",
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}
