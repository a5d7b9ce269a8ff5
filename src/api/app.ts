import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { ConfigError, cachedConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { reviewRoutes } from "../review/index.ts";
import type { AppEnv } from "./app-env.ts";
import { countReviewPage } from "./auth.ts";
import { sendFailure } from "./errors.ts";
import { healthz } from "./healthz.ts";
import { reviewPageData } from "./review-data.ts";
import { sessionRoutes } from "./sessions.ts";
import { snapshotRoutes } from "./snapshots.ts";

/**
 * The worker's HTTP application: health, snapshots and sessions, with error handling that
 * answers every bad input with a 4xx and the protocol's error body (docs/PROTOCOL.md) (a 500 only for our own bugs).
 *
 * @example
 * const app = createApp();
 * const res = await app.request("/v1/healthz"); // 200 {"ok": true}
 */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/v1/healthz", healthz);
  // Settings are checked before any request is served: a bad var is named, not guessed around.
  app.use("*", async (c, next) => {
    const config = cachedConfig(c.env);
    if (!config.ok) return sendFailure(c, 500, "server_misconfigured", config.error);
    await next();
  });
  app.route("/", snapshotRoutes);
  app.route("/", sessionRoutes);
  // The review page (no bearer token: the review key in the link is the credential, counted
  // like X-Review-Key), with the session's best-of-N group when it has one.
  app.use("/review/:id", countReviewPage);
  app.route(
    "/review",
    reviewRoutes<Env>((env) => ({
      loadReview: (id, key, want) => reviewPageData(env, id, key, want),
    })),
  );

  app.notFound((c) =>
    sendFailure(
      c,
      404,
      "not_found",
      `No route ${c.req.method} ${new URL(c.req.url).pathname}; see the API in the README.`,
    ),
  );
  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status < 500) {
      return sendFailure(
        c,
        err.status === 413 ? 413 : 400,
        err.status === 413 ? "payload_too_large" : "invalid_body",
        err.message || "The request could not be read.",
      );
    }
    if (err instanceof ConfigError) return sendFailure(c, 500, "server_misconfigured", err.message);
    console.error("planport: unhandled error", err);
    return sendFailure(
      c,
      500,
      "internal_error",
      "The server failed on this request (it was logged); try again, and report it if it persists.",
    );
  });
  return app;
}
