import { hiddenMarkPattern, readableText } from "../../protocol/readable-text.ts";

/**
 * The script's one way to write text into the page: text nodes, the text as a reader sees it
 * (protocol `readableText`), each hidden character drawn as the same visible mark the server
 * renders (hidden-marks.ts). The page arrives with none; what the script writes from data (the
 * diff, the API's error sentences, comments) must not bring one back.
 */

/**
 * Replaces `el`'s content with `text`, each hidden character shown as a mark.
 *
 * @example
 * setVisibleText(errorEl, err.message);
 */
export function setVisibleText(el: Element, text: string): void {
  const shown = readableText(text);
  const nodes: Node[] = [];
  let from = 0;
  for (const match of shown.matchAll(hiddenMarkPattern())) {
    const at = match.index ?? 0;
    if (at > from) nodes.push(document.createTextNode(shown.slice(from, at)));
    const mark = document.createElement("span");
    mark.className = "hidden-mark";
    mark.textContent = match[0];
    nodes.push(mark);
    from = at + match[0].length;
  }
  if (from < shown.length || nodes.length === 0)
    nodes.push(document.createTextNode(shown.slice(from)));
  el.replaceChildren(...nodes);
}
