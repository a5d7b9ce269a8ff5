/**
 * HTML built from templates that escape every interpolated value unless it is already
 * {@link SafeHtml}. The review page shows model output and repository content, both untrusted,
 * so "escaped unless proven safe" is the only default that survives a careless edit.
 */

/** A string of HTML that was produced by this module (escaped) or by the markdown renderer. */
export class SafeHtml {
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

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Escapes text for use in element content and in quoted attribute values.
 *
 * @example
 * escapeHtml('<img src=x onerror="alert(1)">') // '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch] ?? ch);
}

/**
 * Tagged template for HTML: interpolated strings are escaped, {@link SafeHtml} is kept,
 * arrays are joined, `null`/`undefined`/`false` render nothing. Always quote attributes with
 * double quotes in the template (`class="${x}"`), so an escaped value cannot end the attribute.
 *
 * @example
 * html`<p title="${userText}">${userText}</p>` // both occurrences escaped
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
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
