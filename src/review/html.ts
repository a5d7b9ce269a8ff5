import { html as honoHtml } from "hono/html";
import { escapeToBuffer, type HtmlEscaped, type StringBuffer } from "hono/utils/html";

/**
 * The review page's HTML, rendered by Hono's `html` tagged template (`hono/html`): every
 * interpolated value is escaped unless it is already escaped HTML. The review page shows model
 * output and repository content, both untrusted, so "escaped unless proven safe" is the only
 * default that survives a careless edit. This module only narrows Hono's helper to what the
 * page needs: synchronous (no value is a promise), and typed values, so an object cannot slip
 * into a template by mistake.
 */

/**
 * HTML that Hono escaped (or our markdown renderer produced). It carries Hono's `isEscaped`
 * mark, so Hono's `html` and `hono/jsx` take it as it is; `value` is the text.
 */
export class SafeHtml implements HtmlEscaped {
  readonly isEscaped = true;
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What an interpolation may be: text (escaped), safe HTML (kept), lists, or nothing. */
export type HtmlValue =
  | SafeHtml
  | string
  | number
  | null
  | undefined
  | false
  | readonly HtmlValue[];

/**
 * Escapes text for use in element content and in quoted attribute values (Hono's escaping).
 *
 * @example
 * escapeHtml('<img src=x onerror="alert(1)">') // '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
 */
export function escapeHtml(text: string): string {
  const buffer: StringBuffer = [""];
  escapeToBuffer(text, buffer);
  return buffer[0] as string;
}

/**
 * Hono's `html` tagged template: interpolated strings are escaped, {@link SafeHtml} is kept,
 * arrays are joined, `null`/`undefined`/`false` render nothing. Always quote attributes with
 * double quotes in the template (`class="${x}"`), so an escaped value cannot end the attribute.
 *
 * @example
 * html`<p title="${userText}">${userText}</p>` // both occurrences escaped
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  const out = honoHtml(strings, ...values);
  // Only a promise among the values makes Hono's result a promise, and HtmlValue has none.
  if (out instanceof Promise) throw new Error("review HTML must render synchronously");
  return new SafeHtml(out.toString());
}

/**
 * Marks our own script or stylesheet text as safe to put inside `<script>` / `<style>`, where
 * the parser reads raw text and entities are not decoded. Refuses text that could end the
 * element early or open a comment, so a future edit cannot break out either.
 *
 * @example
 * html`<script nonce="${nonce}">${rawElementText(REVIEW_SCRIPT)}</script>`
 */
export function rawElementText(text: string): SafeHtml {
  if (/<\/(script|style)|<!--/i.test(text)) {
    throw new Error("script or style text must not contain a closing tag or a comment opener");
  }
  return new SafeHtml(text);
}

/** The first lines of every planport page's `<head>`: no referrer (the key is in the URL), no indexing. */
export const PAGE_HEAD_META = new SafeHtml(`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">`);
