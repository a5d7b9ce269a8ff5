import { hiddenCharacterWarning, hiddenMarkPattern, readableText } from "../protocol/index.ts";
import { html, type SafeHtml } from "./html.ts";

/**
 * The review page's one neutraliser of hidden characters (protocol readable-text.ts), run on
 * every HTML document the review route sends, after everything else is rendered: whatever
 * produced one — a title, a question, the transcript, markdown-it decoding `&#x200B;` in the
 * plan — the browser gets none, only the mark the rule shows for it. In element content each
 * mark is a styled badge (the marks the plan's own text already carries too: the plan is
 * rendered from `readableText`); where markup cannot go (attribute values, `<title>`, the plan
 * editor's `<textarea>`, comments) the mark is plain text. Our own `<script>` and `<style>`
 * text is left alone (the bundle is ASCII).
 *
 * The documents are ours: every interpolated value is escaped (Hono, markdown-it), so in text
 * and attribute values `<` and `>` only ever appear as entities, and cutting the document at
 * tags is exact.
 */

// What a hidden character can be (protocol readable-text.ts decides which ones are).
const CANDIDATE = /[\p{Cc}\p{Cf}\p{DI}\p{Cs}]/u;
// Anything the pass may change: a candidate other than newline and tab, a numeric reference,
// a mark, a line or paragraph separator.
const ANYTHING_TO_DO = /(?![\n\t])[\p{Cc}\p{Cf}\p{DI}\p{Cs}]|&#|⟨U\+|[\u2028\u2029]/u;
// A numeric character reference (hex or decimal, any leading zeros, `;` optional).
const NUMERIC_REFERENCE = /&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));?/g;
// Our own script and style (skipped whole), comments, and every tag.
const SCAN = /<(script|style)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)|<!--[\s\S]*?(?:-->|$)|<[^>]*>?/gi;
const TEXT_ONLY_TAG = /^<(\/?)(?:textarea|title)\b/i;

/**
 * A numeric reference the browser would decode to a possibly hidden character, decoded, so
 * the rule sees the character the reader would get; every other reference stays as it is.
 */
function decodeHiddenReferences(text: string): string {
  return text.replace(NUMERIC_REFERENCE, (ref: string, hex?: string, decimal?: string) => {
    const code = hex !== undefined ? Number.parseInt(hex, 16) : Number(decimal);
    if (!(code <= 0x10ffff)) return ref;
    const ch = String.fromCodePoint(code);
    return CANDIDATE.test(ch) ? ch : ref;
  });
}

/** Plain text by the rule: marks as text. */
function plain(text: string): string {
  return readableText(decodeHiddenReferences(text));
}

// No tooltip per mark: a plan of nothing but hidden characters would make a page 100 times its
// size. The warning above the plan names each kind once.
function styled(text: string): string {
  return plain(text).replace(hiddenMarkPattern(), (m) => `<span class="hidden-mark">${m}</span>`);
}

/**
 * The document with every hidden character shown as its visible mark. Linear in the document:
 * one scan, each piece rewritten once.
 *
 * @example
 * showHiddenCharactersInHtml('<p title="a\u202eb">rm build/\u202egol.*</p>')
 * // → '<p title="a⟨U+202E⟩b">rm build/<span class="hidden-mark">⟨U+202E⟩</span>gol.*</p>'
 */
export function showHiddenCharactersInHtml(document: string): string {
  if (!ANYTHING_TO_DO.test(document)) return document;
  let out = "";
  let from = 0;
  let textOnly = false;
  for (const match of document.matchAll(SCAN)) {
    const at = match.index ?? 0;
    const piece = match[0];
    const between = document.slice(from, at);
    out += textOnly ? plain(between) : styled(between);
    from = at + piece.length;
    if (match[1] !== undefined) {
      out += piece; // our own script or style
      continue;
    }
    out += plain(piece);
    const textTag = TEXT_ONLY_TAG.exec(piece);
    if (textTag) textOnly = textTag[1] === "";
  }
  const rest = document.slice(from);
  return out + (textOnly ? plain(rest) : styled(rest));
}

/**
 * The warning above a plan that holds hidden characters; nothing for one that holds none.
 * `hidden` are those its rendering shows (markdown.ts `hiddenCharacters`).
 *
 * @example
 * html`${hiddenNote(rendered.hiddenCharacters)}<article>${rendered.html}</article>`
 */
export function hiddenNote(hidden: readonly string[]): SafeHtml | "" {
  const warning = hiddenCharacterWarning(hidden);
  return warning === null
    ? ""
    : html`<p class="warning hidden-warning" role="note" data-hidden-warning="${String(hidden.length)}">${warning}</p>`;
}

// What JSON.stringify leaves raw that the rule could mark (JSON escapes C0 itself).
const JSON_HIDDEN = /[\p{Cc}\p{Cf}\p{DI}\p{Cs}\u2028\u2029]/gu;

/**
 * Text the page script must send back exactly, as an attribute value: a question's text (the
 * key of its answer) or an option's label (the answer). JSON, with every possibly hidden
 * character written as `\uXXXX` escapes, so the attribute holds none and the script's
 * `JSON.parse` gives back the very text the planner wrote.
 *
 * @example
 * exactTextAttribute("a\u202eb") // → '"a\\u202eb"'
 */
export function exactTextAttribute(text: string): string {
  return JSON.stringify(text).replace(JSON_HIDDEN, (ch) =>
    Array.from(
      { length: ch.length },
      (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`,
    ).join(""),
  );
}
