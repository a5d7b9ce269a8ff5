/**
 * The rate limits tests run with, and how they count. The bindings and their periods are
 * wrangler.toml's (the one source of the production values); tests replace only each limit, by
 * one a test reaches in a few requests, so no verdict depends on how many requests the machine
 * can make inside a window. The worker tests get them through vitest.config.ts, the end-to-end
 * tests through a config derived from wrangler.toml (test/support/wrangler-config.ts).
 *
 * The runtime counts in fixed windows of each limiter's period, and a window can end in the
 * middle of a burst: a test bounds what a limiter let through by the windows the burst touched
 * ({@link windowsTouched}), never by one window.
 */

/** The limit each wrangler.toml rate limiter has in tests, by binding name. */
export const TEST_RATE_LIMITS: Readonly<Record<string, number>> = {
  RATE_LIMIT_REQUESTS: 20,
  RATE_LIMIT_CREATES: 3,
  RATE_LIMIT_UPLOADS: 3,
  RATE_LIMIT_AUTH_FAILURES: 3,
  // Above what one file's per-address floods add up to, so the ceiling test is the one to reach it.
  RATE_LIMIT_AUTH_FAILURES_ALL: 20,
};

/** One `[[ratelimits]]` entry of a wrangler config. */
export interface RateLimitBinding {
  name: string;
  namespace_id: string;
  simple: { limit: number; period: number };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** wrangler.toml's `[[ratelimits]]` as declared (vitest.config.ts provides them). */
    wranglerRateLimits: RateLimitBinding[];
  }
}

/**
 * The same bindings and periods with the test limits; a binding without a test limit is an
 * error (a new limiter needs one chosen here).
 *
 * @example withTestLimits(raw.ratelimits)[0] // { name: "RATE_LIMIT_REQUESTS", …, simple: { limit: 20, period: 10 } }
 */
export function withTestLimits(bindings: readonly RateLimitBinding[]): RateLimitBinding[] {
  return bindings.map((binding) => {
    const limit = TEST_RATE_LIMITS[binding.name];
    if (limit === undefined) {
      throw new Error(
        `wrangler.toml declares the rate limiter ${binding.name}, which has no test limit; add one to TEST_RATE_LIMITS in test/support/rate-limits.ts`,
      );
    }
    return { ...binding, simple: { ...binding.simple, limit } };
  });
}

/** The test limit of a binding. */
export function testLimit(binding: string): number {
  const limit = TEST_RATE_LIMITS[binding];
  if (limit === undefined) throw new Error(`no test limit for ${binding}`);
  return limit;
}

/**
 * How many fixed windows of `periodS` an interval of `elapsedMs` can touch, wherever their
 * boundaries fall: a limit of L lets at most L × this through in that interval.
 *
 * @example windowsTouched(0, 60) // 1; windowsTouched(30_000, 60) // 2
 */
export function windowsTouched(elapsedMs: number, periodS: number): number {
  return Math.ceil(elapsedMs / (periodS * 1000)) + 1;
}

/** A burst's answers (statuses, and the first 429 if any) and how long it took. */
export interface Burst {
  statuses: number[];
  limited: Response | null;
  elapsedMs: number;
}

/**
 * Makes calls one after another until one answers 429 (or `max` were made), reading every
 * other body. Stopping at the first refusal, not after a fixed count, keeps the test short and
 * independent of where a window boundary falls.
 *
 * @example const burst = await untilLimited(30, () => api.call("GET", "/v1/sessions", { token: "x" }));
 */
export async function untilLimited(
  max: number,
  call: (i: number) => Promise<Response>,
): Promise<Burst> {
  const started = Date.now();
  const statuses: number[] = [];
  for (let i = 0; i < max; i++) {
    const res = await call(i);
    statuses.push(res.status);
    if (res.status === 429) return { statuses, limited: res, elapsedMs: Date.now() - started };
    await res.body?.cancel();
  }
  return { statuses, limited: null, elapsedMs: Date.now() - started };
}

/** How many of `statuses` are `status`. */
export function countOf(statuses: readonly number[], status: number): number {
  return statuses.filter((s) => s === status).length;
}
