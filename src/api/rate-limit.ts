import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { configOf } from "../config.ts";
import type { Env } from "../env.ts";
import type { AppEnv } from "./auth.ts";
import { sendFailure } from "./errors.ts";

/**
 * Rate limits (docs/PROTOCOL.md "Rate limits") with Cloudflare's Workers rate-limiting
 * bindings, declared in wrangler.toml (they also run under `wrangler dev`). Every authenticated
 * route counts per owner, session creation and snapshot uploads count again, more tightly, and
 * failed authentication counts per client address. Over a limit: 429 `rate_limited` with
 * `Retry-After`. A deployment without the bindings, or with `PLANPORT_RATE_LIMITS=off`, is not
 * limited.
 */

/** The limiters: their binding names, and the period wrangler.toml gives each (seconds). */
export const RATE_LIMITS = {
  /** Every authenticated request, per owner (or per session for a review link). */
  requests: { binding: "RATE_LIMIT_REQUESTS", periodS: 10, what: "requests" },
  /** `POST /v1/sessions`, per owner: each session can start model calls. */
  creates: { binding: "RATE_LIMIT_CREATES", periodS: 60, what: "new sessions" },
  /** Snapshot uploads, per owner: each one is megabytes to inflate and store. */
  uploads: { binding: "RATE_LIMIT_UPLOADS", periodS: 60, what: "snapshot uploads" },
  /** Requests whose credentials were refused, per client address. */
  authFailures: {
    binding: "RATE_LIMIT_AUTH_FAILURES",
    periodS: 60,
    what: "failed authentications",
  },
} as const satisfies Record<string, { binding: keyof Env; periodS: 10 | 60; what: string }>;
export type RateLimitName = keyof typeof RATE_LIMITS;

/**
 * Counts one request against a limiter; a 429 answer when over the limit, else null. A limiter
 * that is off, missing, or failing lets the request through: limits protect capacity, they are
 * not an access check.
 *
 * @example
 * const refused = await overLimit(c, "creates", owner);
 * if (refused) return refused;
 */
export async function overLimit(
  c: Context<AppEnv>,
  name: RateLimitName,
  key: string,
): Promise<Response | null> {
  const limit = RATE_LIMITS[name];
  const binding = configOf(c.env).rateLimits ? c.env[limit.binding] : undefined;
  if (binding === undefined) return null;
  let success: boolean;
  try {
    ({ success } = await binding.limit({ key: `${name}:${key}` }));
  } catch (error) {
    console.error(`planport: the ${limit.binding} rate limiter failed; not limiting`, error);
    return null;
  }
  if (success) return null;
  c.header("Retry-After", String(limit.periodS));
  return sendFailure(
    c,
    429,
    "rate_limited",
    `Too many ${limit.what}: the limit is counted over ${limit.periodS} s. Wait ${limit.periodS} s (Retry-After) and try again.`,
  );
}

/**
 * Counts a route's own tighter limit for the owner set by `requireOwner`.
 *
 * @example sessionRoutes.post("/v1/sessions", requireOwner, limitPerOwner("creates"), handler);
 */
export function limitPerOwner(name: RateLimitName) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const refused = await overLimit(c, name, c.get("owner"));
    if (refused) return refused;
    await next();
  });
}

/**
 * The client's address as Cloudflare reports it. `CF-Connecting-IP` is set by Cloudflare's edge
 * (and by `wrangler dev`); where it is absent every caller shares one counter.
 */
export function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}
