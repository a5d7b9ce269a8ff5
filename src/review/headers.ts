/**
 * Response headers of the review page. The page shows untrusted text and carries the review key
 * in its URL, so it locks itself down: scripts and styles only with this response's nonce, no
 * remote loads of any kind, no framing, no referrer, no caching.
 */

/** The Trusted Types policy the page script creates to parse its own server-rendered HTML. */
export const TRUSTED_TYPES_POLICY = "planport-review";

const NONCE_BYTES = 18;

/**
 * A fresh nonce for one response (144 random bits, base64).
 *
 * @example
 * const nonce = newNonce(); // "3q2+7w…" — use it in the CSP and on the page's <script> and <style>
 */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The Content-Security-Policy for a page whose only script and style carry `nonce`.
 *
 * - `default-src 'none'`: nothing loads unless listed below.
 * - `connect-src 'self'`: the script talks to this worker's JSON API and nothing else.
 * - `img-src data:`: the page uses no remote images; plan images are rendered as links.
 * - `frame-src 'self'`: the only frames are the page's own diagram frames (`/review/diagram`).
 * - `require-trusted-types-for 'script'`: in browsers that enforce it, no string reaches an
 *   HTML sink except through the page's one policy.
 *
 * @example
 * reviewCsp("abc") // "default-src 'none'; script-src 'nonce-abc'; …"
 */
export function reviewCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src data:",
    "connect-src 'self'",
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    `trusted-types ${TRUSTED_TYPES_POLICY}`,
  ].join("; ");
}

/**
 * Every header the review page (and its error pages) is sent with. Without a nonce the CSP
 * allows no script or style at all (error pages need neither).
 *
 * @example
 * return new Response(page, { headers: reviewHeaders(nonce) });
 */
export function reviewHeaders(nonce?: string): Headers {
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": nonce
      ? reviewCsp(nonce)
      : "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    // The review key is in the page URL: never send it to a linked site.
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
  });
}

/**
 * The Content-Security-Policy of the diagram frame (`GET /review/diagram`), a page the review
 * page embeds in `<iframe sandbox="allow-scripts">` (an opaque origin) to draw one mermaid
 * diagram. Mermaid writes its SVG with innerHTML and styles it with `<style>` and style
 * attributes, which the review page's own CSP refuses, so it runs here instead:
 *
 * - `script-src 'nonce-…'`: only mermaid's bundle (served from this worker's static assets) and
 *   the frame's own script; no eval.
 * - `style-src 'unsafe-inline'`: mermaid's styles (here only; the frame holds no secret and
 *   reaches nothing).
 * - `img-src data:`, and nothing else may load: no connect, no frames, no forms, no fonts.
 * - `frame-ancestors 'self'`: only this worker's pages may embed it.
 *
 * @example
 * diagramCsp("abc") // "default-src 'none'; script-src 'nonce-abc'; style-src 'unsafe-inline'; …"
 */
export function diagramCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/**
 * Every header the diagram frame is sent with. It carries no session data (the diagram's text
 * arrives in the frame URL's fragment, which never reaches the server); it is not cached only
 * because its nonce is new in every response.
 *
 * @example
 * return new Response(diagramFramePage(nonce), { headers: diagramHeaders(nonce) });
 */
export function diagramHeaders(nonce: string): Headers {
  return new Headers({
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": diagramCsp(nonce),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
  });
}
