import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { PACKAGE_ROOT } from "../../local-client/embedded/worker-process.ts";
import { type RateLimitBinding, withTestLimits } from "./rate-limits.ts";

/**
 * Worker configs for tests, derived from the package's wrangler.toml as wrangler reads it: the
 * same worker, bindings and periods, with the rate limits of test/support/rate-limits.ts. The
 * production values live in wrangler.toml alone; nothing here repeats them.
 */

const WRANGLER_TOML = join(PACKAGE_ROOT, "wrangler.toml");

/** wrangler.toml as wrangler reads it (no defaults filled in). */
export function packageWranglerConfig(): Record<string, unknown> & {
  main: string;
  ratelimits: RateLimitBinding[];
  assets?: { directory?: string };
  containers?: { image: string }[];
} {
  const { rawConfig } = experimental_readRawConfig({ config: WRANGLER_TOML }) as {
    rawConfig: Record<string, unknown>;
  };
  if (typeof rawConfig.main !== "string" || !Array.isArray(rawConfig.ratelimits)) {
    throw new Error(`${WRANGLER_TOML} has no main or no [[ratelimits]]`);
  }
  return rawConfig as ReturnType<typeof packageWranglerConfig>;
}

/**
 * The rate limiters of wrangler.toml with the test limits, as Miniflare's `ratelimits` option
 * (vitest.config.ts gives them to the worker tests).
 *
 * @example cloudflareTest({ wrangler: { configPath }, miniflare: { ratelimits: testRateLimitOptions() } })
 */
export function testRateLimitOptions(): Record<string, { simple: { limit: number; period: 10 } }> {
  return Object.fromEntries(
    withTestLimits(packageWranglerConfig().ratelimits).map((b) => [
      b.name,
      // Miniflare's option type names the periods as an enum of 10 and 60.
      { simple: { limit: b.simple.limit, period: b.simple.period as 10 } },
    ]),
  );
}

/**
 * Writes a wrangler config for `wrangler dev` into `dir`: wrangler.toml with the test limits,
 * its paths made absolute (a config resolves them from its own folder). Pass the path as
 * `startWorkerProcess({ configPath })`.
 *
 * @example const configPath = writeTestWranglerConfig(mkdtempSync(join(tmpdir(), "pp-")));
 */
export function writeTestWranglerConfig(dir: string): string {
  const config = packageWranglerConfig();
  const derived = {
    ...config,
    main: resolve(PACKAGE_ROOT, config.main),
    ...(config.assets?.directory === undefined
      ? {}
      : {
          assets: { ...config.assets, directory: resolve(PACKAGE_ROOT, config.assets.directory) },
        }),
    // A Dockerfile path too: wrangler checks that it names a file, even with containers off.
    ...(config.containers === undefined
      ? {}
      : {
          containers: config.containers.map((c) => ({
            ...c,
            image: c.image.startsWith(".") ? resolve(PACKAGE_ROOT, c.image) : c.image,
          })),
        }),
    ratelimits: withTestLimits(config.ratelimits),
  };
  const path = join(dir, "wrangler.json");
  writeFileSync(path, `${JSON.stringify(derived, null, 2)}\n`);
  return path;
}
