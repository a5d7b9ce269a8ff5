import { Hono } from "hono";
import { type Failure, type Result, SESSION_ID_PATTERN } from "../protocol/index.ts";
import { renderComparePage } from "./compare.ts";
import { diagramFramePage } from "./diagram-frame.ts";
import { notFoundPage, unavailablePage } from "./error-page.ts";
import { diagramHeaders, newNonce, reviewHeaders } from "./headers.ts";
import { showHiddenCharactersInHtml } from "./hidden-marks.ts";
import { renderReviewPage, renderReviewRegions } from "./page.ts";
import { parseRevisionQuery, wantedRevisions } from "./revisions.ts";
import type { ReviewData } from "./view.ts";

/**
 * `GET /review/:id?key=<review_key>`: the review page, for holders of the review link (no
 * bearer token). With `&part=regions` it answers only the page's swappable regions (no script,
 * no style): the open page fetches that to refresh itself. With `&compare=1` it answers the
 * plans of the session's best-of-N group side by side (compare.ts). The route validates, asks the injected loader for the session as the key's
 * holder may see it, and renders. `GET /review/diagram` is the frame that draws one mermaid
 * diagram of the page (diagram-frame.ts). It knows nothing of the session Durable Object: the worker
 * entry wires the loader to it.
 */

/** What loading a session for review answers: the session object's own result. */
export type ReviewLoadResult = Result<ReviewData, Failure>;

/**
 * Loads one session for the holder of `key`; an unknown session or a wrong key is a 404.
 * `revisions` names the plan revisions whose text the page needs (at most two).
 */
export interface ReviewLoader {
  loadReview(
    sessionId: string,
    key: string,
    want?: { revisions: readonly number[] },
  ): Promise<ReviewLoadResult>;
}

/** Review keys are base64url; anything else cannot be one (the length bounds are generous). */
const REVIEW_KEY_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The review sub-app. Mount it under `/review`; `loaderFor` builds the loader from the
 * request's bindings.
 *
 * @example
 * app.route("/review", reviewRoutes<Env>((env) => ({
 *   loadReview: (id, key) => env.SESSIONS.get(env.SESSIONS.idFromName(id)).review({ kind: "review", key }),
 * })));
 */
export function reviewRoutes<Bindings extends object>(
  loaderFor: (env: Bindings) => ReviewLoader,
): Hono<{ Bindings: Bindings }> {
  const app = new Hono<{ Bindings: Bindings }>();
  // The diagram frame: static, no session, no key (diagram-frame.ts). "diagram" is no session id.
  app.get("/diagram", () => {
    const nonce = newNonce();
    return new Response(diagramFramePage(nonce).toString(), {
      status: 200,
      headers: diagramHeaders(nonce),
    });
  });
  app.get("/:id", async (c) => {
    const id = c.req.param("id");
    const key = c.req.query("key") ?? "";
    // A malformed id or key cannot name a session: answer exactly like an unknown one.
    if (!SESSION_ID_PATTERN.test(id) || !REVIEW_KEY_PATTERN.test(key)) return notFound();
    const asked = {
      rev: c.req.query("rev"),
      diff: c.req.query("diff"),
      from: c.req.query("from"),
      to: c.req.query("to"),
    };
    const loaded = await loaderFor(c.env).loadReview(id, key, {
      revisions: wantedRevisions(asked),
    });
    if (!loaded.ok) return loaded.error.status === 404 ? notFound() : unavailable(loaded.error);
    const revisionQuery = parseRevisionQuery(
      asked,
      (loaded.value.revisions ?? []).map((r) => r.revision),
    );
    if (c.req.query("compare") === "1") {
      const nonce = newNonce();
      return htmlPage(renderComparePage({ ...loaded.value, nonce }), 200, nonce);
    }
    if (c.req.query("part") === "regions") {
      const regions = renderReviewRegions({ ...loaded.value, now: Date.now(), revisionQuery });
      return htmlPage(regions, 200);
    }
    const nonce = newNonce();
    const page = renderReviewPage({ ...loaded.value, nonce, now: Date.now(), revisionQuery });
    return htmlPage(page, 200, nonce);
  });
  return app;
}

/**
 * Every review document leaves through here: the one place its hidden characters become
 * visible marks (hidden-marks.ts), whichever part of it produced them.
 */
function htmlPage(document: string, status: number, nonce?: string): Response {
  return new Response(showHiddenCharactersInHtml(document), {
    status,
    headers: reviewHeaders(nonce),
  });
}

function notFound(): Response {
  return htmlPage(notFoundPage(), 404);
}

function unavailable(error: { status: number; message: string }): Response {
  // Only statuses that describe the request or the server pass through; the page is never a 200.
  const status = error.status >= 400 && error.status <= 599 ? error.status : 500;
  return htmlPage(unavailablePage(error.message), status);
}
