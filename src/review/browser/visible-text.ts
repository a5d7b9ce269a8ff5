import { directionControlPattern, directionMark } from "../../protocol/text-direction.ts";

/**
 * The script's one way to write text into the page: text nodes, with every hidden
 * text-direction character drawn as the same visible mark the server renders
 * (direction-marks.ts). The page arrives with none; what the script writes from data (the diff,
 * the API's error sentences, comments) must not bring one back.
 */

/**
 * Replaces `el`'s content with `text`, each direction control shown as a mark.
 *
 * @example
 * setVisibleText(errorEl, err.message);
 */
export function setVisibleText(el: Element, text: string): void {
  const nodes: Node[] = [];
  let from = 0;
  for (const match of text.matchAll(directionControlPattern())) {
    const at = match.index ?? 0;
    if (at > from) nodes.push(document.createTextNode(text.slice(from, at)));
    const mark = document.createElement("span");
    mark.className = "direction-mark";
    mark.textContent = directionMark(match[0]);
    nodes.push(mark);
    from = at + match[0].length;
  }
  if (from < text.length || nodes.length === 0)
    nodes.push(document.createTextNode(text.slice(from)));
  el.replaceChildren(...nodes);
}
