import { html, PAGE_HEAD_META } from "./html.ts";

/**
 * The review route's plain error pages: no script, no style, no detail about why. An unknown
 * session, another owner's session and a wrong key all look the same.
 */

/**
 * @example
 * new Response(notFoundPage(), { status: 404, headers: reviewHeaders() })
 */
export function notFoundPage(): string {
  return page(
    "Review link not found",
    "There is no session to review at this link. Check that you copied the whole link your terminal printed; the session may also have been deleted.",
  );
}

/**
 * @example
 * new Response(unavailablePage("The session is busy; try again."), { status: 429, headers: reviewHeaders() })
 */
export function unavailablePage(message: string): string {
  return page("The review page is not available right now", message);
}

function page(title: string, sentence: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD_META}
<title>${title} — planport</title>
</head>
<body>
<main>
<h1>${title}</h1>
<p>${sentence}</p>
</main>
</body>
</html>
`.value;
}
