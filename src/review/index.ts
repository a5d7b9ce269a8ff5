/**
 * The browser review page: safe markdown rendering of the plan, the page itself, its security
 * headers, its small browser script, and the route that serves it.
 */
export { unavailablePage } from "./error-page.ts";
export { newNonce, reviewCsp, reviewHeaders } from "./headers.ts";
export { isAllowedLink, type OutlineEntry, renderPlanMarkdown } from "./markdown.ts";
export { type ReviewPageInput, renderReviewPage } from "./page.ts";
export { type ReviewLoader, type ReviewLoadResult, reviewRoutes } from "./route.ts";
export { transcriptEntries } from "./transcript.ts";
export { type ReviewData, reviewView } from "./view.ts";
