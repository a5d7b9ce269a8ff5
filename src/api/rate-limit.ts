import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { configOf } from "../config.ts";
import type { Env } from "../env.ts";
import type { AppEnv } from "./app-env.ts";
import { sendFailure } from "./errors.ts";

/**
 * Rate limits (docs/PROTOCOL.md "Rate limits") with Cloudflare's Workers rate-limiting
 * bindings, declared in wrangler.toml (they also run under `wrangler dev`). Every authenticated
 * route counts per owner (a review key: per session and key), session creation and snapshot
 * uploads count again, more tightly, and refused credentials count per client address and
 * against one ceiling for the whole deployment. Over a limit: 429 `rate_limited` with
 * `Retry-After`. A deployment without the bindings, or with `PLANPORT_RATE_LIMITS=off`, is not
 * limited.
 */

/** The limiters: their binding names, and the period wrangler.toml gives each (seconds). */
export const RATE_LIMITS = {
  /** Every authenticated request, per owner (or per session and review key for a link). */
  requests: { binding: "RATE_LIMIT_REQUESTS", periodS: 10, what: "requests" },
  /** `POST /v1/sessions`, per owner: each session can start model calls. */
  creates: { binding: "RATE_LIMIT_CREATES", periodS: 60, what: "new sessions" },
  /** Snapshot uploads, per owner: each one is megabytes to inflate and store. */
  uploads: { binding: "RATE_LIMIT_UPLOADS", periodS: 60, what: "snapshot uploads" },
  /** Requests whose credentials were refused, per client address. */
  authFailures: {
    binding: "RATE_LIMIT_AUTH_FAILURES",
    periodS: 60,
    what: "failed authentications from your address",
  },
  /**
   * Requests whose credentials were refused, from every address together: the ceiling that
   * still holds where a caller can claim any address (`wrangler dev`; see {@link clientAddress}).
   */
  authFailuresAll: {
    binding: "RATE_LIMIT_AUTH_FAILURES_ALL",
    periodS: 60,
    what: "failed authentications on this server",
  },
} as const satisfies Record<string, { binding: keyof Env; periodS: 10 | 60; what: string }>;
export type RateLimitName = keyof typeof RATE_LIMITS;

/** Why a limiter turned a request away: its period (the Retry-After) and the sentence to show. */
export interface LimitRefusal {
  periodS: number;
  message: string;
}

/**
 * Counts one request against a limiter; the refusal when over the limit, else null. A limiter
 * that is off, missing, or failing lets the request through: limits protect capacity, they are
 * not an access check.
 *
 * @example
 * const refused = await countRequest(env, "creates", owner); // null: go on
 */
export async function countRequest(
  env: Env,
  name: RateLimitName,
  key: string,
): Promise<LimitRefusal | null> {
  const limit = RATE_LIMITS[name];
  const binding = configOf(env).rateLimits ? env[limit.binding] : undefined;
  if (binding === undefined) return null;
  let success: boolean;
  try {
    ({ success } = await binding.limit({ key: `${name}:${key}` }));
  } catch (error) {
    console.error(`planport: the ${limit.binding} rate limiter failed; not limiting`, error);
    return null;
  }
  if (success) return null;
  return {
    periodS: limit.periodS,
    message: `Too many ${limit.what}: the limit is counted over ${limit.periodS} s. Wait ${limit.periodS} s (Retry-After) and try again.`,
  };
}

/**
 * A refusal as the API answers it: 429 `rate_limited` with `Retry-After`.
 *
 * @example return rateLimited(c, refused);
 */
export function rateLimited(c: Context, refusal: LimitRefusal): Response {
  c.header("Retry-After", String(refusal.periodS));
  return sendFailure(c, 429, "rate_limited", refusal.message);
}

/**
 * {@link countRequest} answered as the API does: the 429 when over the limit, else null.
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
  const refused = await countRequest(c.env, name, key);
  return refused === null ? null : rateLimited(c, refused);
}

/**
 * Counts a refused credential against its caller's address and, while that address is under
 * its own limit, against the deployment's ceiling (so one address alone never spends the
 * ceiling of everyone else, and addresses made up by the caller still meet it). Only refused
 * credentials come here: a valid token or key never consults or spends a failure count.
 *
 * @example
 * const refused = await countFailedAuth(c);
 * return refused ? rateLimited(c, refused) : sendFailure(c, 401, "unauthorized", "…");
 */
export async function countFailedAuth(c: Context<AppEnv>): Promise<LimitRefusal | null> {
  return (
    (await countRequest(c.env, "authFailures", clientAddress(c))) ??
    (await countRequest(c.env, "authFailuresAll", "all"))
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
 * The client's address as Cloudflare's edge reports it. In production the edge sets
 * `CF-Connecting-IP` on every request from the connection itself, replacing any the client
 * sent, so a caller cannot pick its own counter. Under `wrangler dev` (and `planport serve`)
 * miniflare fills it from the socket only when the client sent none: there a caller can claim
 * any address, and the deployment's ceiling (`authFailuresAll`) is what stops it. Where the
 * header is absent every caller shares one counter.
 */
export function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "unknown";
}
