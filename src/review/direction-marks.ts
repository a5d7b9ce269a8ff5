import { directionControlPattern, directionMark, directionWarning } from "../protocol/index.ts";
import { html, type SafeHtml } from "./html.ts";

/**
 * The review page's one neutraliser of hidden text-direction characters (protocol
 * text-direction.ts), run on every HTML document the review route sends, after everything else
 * is rendered: whatever produced a control — a plan's raw U+202E, markdown-it decoding
 * `&#x202E;` in a table cell or a link, a title, a question, the transcript — the browser gets
 * none. In element content each control becomes a styled mark; where markup
 * cannot go (attribute values, `<title>`, the plan editor's `<textarea>`, comments) the mark
 * is plain text. Our own `<script>` and `<style>` text is left alone (the bundle is ASCII).
 *
 * The documents are ours: every interpolated value is escaped (Hono, markdown-it), so in text
 * and attribute values `<` and `>` only ever appear as entities, and cutting the document at
 * tags is exact.
 */

// A raw control, or a numeric character reference the browser would decode to one (hex or
// decimal, any leading zeros, with or without the semicolon).
const CONTROL =
  "[\\u202a-\\u202e\\u2066-\\u2069]|&#[xX]0*(?:202[a-eA-E]|206[6-9])(?![0-9a-fA-F]);?|&#0*(?:823[4-8]|829[4-7])(?![0-9]);?";
const ANY_CONTROL = new RegExp(CONTROL);
const CONTROLS = new RegExp(CONTROL, "g");

// What changes how a control is shown: raw-text elements (script, style; skipped whole),
// comments, the text-only elements' tags, and the controls themselves.
const SCAN = new RegExp(
  `<(script|style)\\b[^>]*>[\\s\\S]*?(?:<\\/\\1\\s*>|$)|<!--[\\s\\S]*?(?:-->|$)|<(\\/?)(?:textarea|title)\\b[^>]*>?|${CONTROL}`,
  "gi",
);

function controlOf(match: string): string {
  if (!match.startsWith("&#")) return match;
  const digits = match.replace(/^&#|;$/g, "");
  const code = /^[xX]/.test(digits) ? Number.parseInt(digits.slice(1), 16) : Number(digits);
  return String.fromCodePoint(code);
}

function plainMark(match: string): string {
  return directionMark(controlOf(match));
}

// No tooltip per mark: a plan of nothing but controls would make a page 100 times its size.
// The warning above the plan names each kind once.
function styledMark(match: string): string {
  return `<span class="direction-mark">${directionMark(controlOf(match))}</span>`;
}

/**
 * The document with every hidden text-direction character shown as a visible mark. Linear in
 * the document: one scan, each character looked at once more to tell a tag from text.
 *
 * @example
 * showDirectionControlsInHtml('<p title="a\u202eb">rm build/\u202egol.*</p>')
 * // → '<p title="a⟨U+202E⟩b">rm build/<span class="direction-mark">⟨U+202E⟩</span>gol.*</p>'
 */
export function showDirectionControlsInHtml(document: string): string {
  if (!ANY_CONTROL.test(document)) return document;
  let out = "";
  let from = 0;
  let inTag = false;
  let textOnly = false;
  for (const match of document.matchAll(SCAN)) {
    const at = match.index ?? 0;
    const piece = match[0];
    // Whether the text since the last match leaves us inside a tag (an attribute value).
    const between = document.slice(from, at);
    const lt = between.lastIndexOf("<");
    const gt = between.lastIndexOf(">");
    if (lt !== -1 || gt !== -1) inTag = lt > gt;
    out += between;
    from = at + piece.length;
    if (match[1] !== undefined) {
      out += piece; // our own script or style
      inTag = false;
    } else if (piece.startsWith("<")) {
      out += piece.replace(CONTROLS, plainMark);
      inTag = !piece.endsWith(">");
      if (!piece.startsWith("<!--")) textOnly = match[2] === "";
    } else {
      out += inTag || textOnly ? plainMark(piece) : styledMark(piece);
    }
  }
  return out + document.slice(from);
}

/**
 * The warning above a plan that holds hidden text-direction characters; nothing for one that
 * holds none. `controls` are those its rendering holds (markdown.ts `directionControls`).
 *
 * @example
 * html`${directionNote(rendered.directionControls)}<article>${rendered.html}</article>`
 */
export function directionNote(controls: readonly string[]): SafeHtml | "" {
  const warning = directionWarning(controls);
  return warning === null
    ? ""
    : html`<p class="warning direction-warning" role="note" data-direction-warning="${String(controls.length)}">${warning}</p>`;
}

/**
 * Text the page script must send back exactly, as an attribute value: a question's text (the
 * key of its answer) or an option's label (the answer). JSON, with direction controls written
 * as `\u202e` escapes, so the attribute holds none and the script's `JSON.parse` gives back the
 * very text the planner wrote.
 *
 * @example
 * exactTextAttribute("a\u202eb") // → '"a\\u202eb"'
 */
export function exactTextAttribute(text: string): string {
  return JSON.stringify(text).replace(
    directionControlPattern(),
    (c) => `\\u${c.charCodeAt(0).toString(16)}`,
  );
}
