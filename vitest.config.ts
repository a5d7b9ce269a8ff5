import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { ownerTokens } from "./test/support/worker/owners.ts";
import { packageWranglerConfig, testRateLimitOptions } from "./test/support/wrangler-config.ts";

/**
 * Two kinds of tests: `worker` runs inside workerd (the real Workers runtime, real Durable
 * Object SQLite and R2 through Miniflare); `node` runs the local client, the CLI end to end
 * against `wrangler dev`, and the browser tests in Debian's Chromium.
 *
 * A test's verdict must not depend on how busy the machine is (CI's 2 cores can sit at a load
 * of 5–8): these limits only stop a test that hangs. Nothing asserts speed inside them;
 * benchmarks live in test/bench/.
 */
const patient = { testTimeout: 180_000, hookTimeout: 300_000 };

export default defineConfig({
  test: {
    // The last lines name any file whose test process died before it finished.
    reporters: ["default", "./test/support/unfinished-files-reporter.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // wrangler.toml's rate limiters with limits a test reaches in a few requests
              // (test/support/rate-limits.ts); only the tests that turn them on meet them.
              ratelimits: testRateLimitOptions(),
              bindings: {
                // Owners with nothing stored yet, named after the file that counts their blobs.
                PLANPORT_TOKENS: ["token-alice", "token-bob", ...ownerTokens()].join(","),
                PLANPORT_ALLOW_SCRIPTED: "true",
                PLANPORT_PLANNER: "offline",
                // Most suites make thousands of requests with one token; the rate-limit tests
                // turn the limits back on for their own requests (test/worker/api-rate-limits.test.ts).
                PLANPORT_RATE_LIMITS: "off",
                // Approvals carry the plan out on the overlay alone (no container): the suites
                // here test sessions; commands in containers are tested end to end
                // (test/e2e/cloud-execution.test.ts) against a real executor.
                PLANPORT_EXECUTION: "overlay",
              },
            },
          }),
        ],
        test: {
          name: "worker",
          ...patient,
          include: ["test/worker/**/*.test.ts"],
          // What wrangler.toml declares, for the test that holds the API's limiters to it.
          provide: { wranglerRateLimits: packageWranglerConfig().ratelimits },
          // An Anthropic Messages API test double over real HTTP; tests get its URL by inject().
          globalSetup: ["./test/client/anthropic-double-setup.ts"],
        },
      },
      {
        test: {
          name: "node",
          ...patient,
          // The CLI tests run the built command and worker (dist/): rebuilt here when stale.
          globalSetup: ["./test/support/build-setup.ts"],
          include: [
            "test/client/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/browser/**/*.test.ts",
          ],
          environment: "node",
        },
      },
    ],
  },
});
