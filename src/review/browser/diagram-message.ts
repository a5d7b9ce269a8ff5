/**
 * What the review page and its diagram frames agree on (both sides import this; it has no DOM).
 *
 * The page makes one `<iframe sandbox="allow-scripts">` per ```` ```mermaid ```` block, at
 * {@link DIAGRAM_FRAME_PATH} with the block's text as the URL fragment (never sent to the
 * server). The frame draws it with mermaid and posts one {@link DiagramReport} to the page.
 */

/** The frame's route (src/review/route.ts). */
export const DIAGRAM_FRAME_PATH = "/review/diagram";

/** Mermaid's browser bundle, a static asset of the worker (wrangler.toml `[assets]`). */
export const MERMAID_SCRIPT_PATH = "/review/vendor/mermaid.min.js";

/** Longer diagram sources stay code blocks (mermaid's own default limit is 50,000). */
export const MAX_DIAGRAM_SOURCE = 20_000;

/** The tallest a diagram frame is made, in CSS pixels. */
export const MAX_DIAGRAM_HEIGHT = 4000;

/** The one message a frame sends: whether the diagram was drawn, and how tall it is. */
export interface DiagramReport {
  planport: "diagram";
  ok: boolean;
  height: number;
}

/** Whether a message's data is a {@link DiagramReport} (it comes from another origin). */
export function isDiagramReport(data: unknown): data is DiagramReport {
  if (typeof data !== "object" || data === null) return false;
  const d = data as Record<string, unknown>;
  return (
    d.planport === "diagram" &&
    typeof d.ok === "boolean" &&
    typeof d.height === "number" &&
    Number.isFinite(d.height)
  );
}
