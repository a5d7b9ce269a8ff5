import { MERMAID_SCRIPT_PATH } from "./browser/diagram-message.ts";
import { html, PAGE_HEAD_META, rawElementText, type SafeHtml } from "./html.ts";
import { DIAGRAM_SCRIPT } from "./script/index.ts";

/**
 * The diagram frame (`GET /review/diagram`): a static page, the same for everyone, that the
 * review page embeds once per ```` ```mermaid ```` block in `<iframe sandbox="allow-scripts">`.
 * It loads mermaid's bundle from this worker's static assets and draws the diagram whose text
 * is in its URL fragment (src/review/browser/diagram-frame.ts). Sent with diagramHeaders.
 *
 * @example
 * new Response(diagramFramePage(nonce).toString(), { headers: diagramHeaders(nonce) })
 */
export function diagramFramePage(nonce: string): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD_META}
<title>Diagram</title>
<style>html, body { margin: 0; background: transparent; } #diagram svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }</style>
</head>
<body>
<div id="diagram"></div>
<script nonce="${nonce}" src="${MERMAID_SCRIPT_PATH}"></script>
<script nonce="${nonce}">${rawElementText(DIAGRAM_SCRIPT)}</script>
</body>
</html>
`;
}
