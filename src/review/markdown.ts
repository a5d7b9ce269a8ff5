import markdownIt, { type MarkdownIt, type Token } from "markdown-it";
import { hiddenCharactersIn, readableText } from "../protocol/index.ts";
import { escapeHtml, SafeHtml } from "./html.ts";
import { showUnrendered } from "./unrendered.ts";

/**
 * The plan as HTML, safe to put in the review page. Plans are written by a model that has read
 * untrusted repository content, so the renderer assumes hostile input:
 *
 * - raw HTML is escaped, never parsed (`html: false`);
 * - links survive only with an allowlisted target (http, https, mailto, or a `#` anchor in the
 *   page); anything else stays visible as text;
 * - images are never loaded (the page's CSP forbids remote images anyway): an image becomes a
 *   link labelled with its alt text, so the reader still sees what the plan pointed at;
 * - external links open in a new tab without an opener or a referrer (the review key is in the
 *   page URL);
 * - the text rendered is the plan as a reader sees it (protocol `readableText`: every hidden
 *   character a visible mark), the very text a teleport hands on; a hidden character markdown-it
 *   decodes from an entity (`&#x200B;`) is marked by the route (hidden-marks.ts), and
 *   `hiddenCharacters` says how many the plan holds, for the warning above it;
 * - markdown that renders to nothing (link definitions, titles, a code block's info string,
 *   extra table cells, a diagram's comments) is shown where it stands (unrendered.ts).
 */

/** One heading of the plan, for the outline sidebar. */
export interface OutlineEntry {
  level: number;
  text: string;
  /** Element id of the heading in the rendered plan (always starts with {@link HEADING_ID_PREFIX}). */
  id: string;
}

export interface RenderedPlan {
  html: SafeHtml;
  outline: OutlineEntry[];
  /** The hidden characters the plan holds, entities decoded included (one per mark shown). */
  hiddenCharacters: string[];
}

/**
 * Heading ids get a prefix that no element of the page itself uses, so a heading can never
 * take over a page id the script looks up (DOM clobbering).
 */
export const HEADING_ID_PREFIX = "sec-";

const SLUG_MAX_CHARS = 60;
const ALLOWED_LINK = /^(https?:\/\/|mailto:|#)/i;

/**
 * Whether a link target (already normalised by markdown-it, as it will appear in `href`) may be
 * rendered as a link. An allowlist: obfuscated schemes (`JaVaScRiPt:`, entity-encoded, with
 * tabs or newlines) are percent-encoded or keep their scheme and so fail it.
 *
 * @example
 * isAllowedLink("https://example.com") // true
 * isAllowedLink("javascript:alert(1)") // false
 */
export function isAllowedLink(url: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  return ALLOWED_LINK.test(url) && !/[\s\u0000-\u001f\u007f]/.test(url);
}

function createRenderer(): MarkdownIt {
  const md = markdownIt({ html: false, linkify: true, typographer: false, breaks: false });
  md.validateLink = isAllowedLink;

  const rules = md.renderer.rules;
  rules.link_open = (tokens, idx, options, _env, self) => {
    const token = tokens[idx]!;
    const href = String(token.attrGet("href") ?? "");
    if (!href.startsWith("#")) {
      token.attrSet("rel", "noopener noreferrer");
      if (!/^mailto:/i.test(href)) token.attrSet("target", "_blank");
    }
    return self.renderToken(tokens, idx, options);
  };
  rules.image = (tokens, idx) => {
    const token = tokens[idx]!;
    const src = String(token.attrGet("src") ?? "");
    const alt = altText(token) || src;
    // validateLink already refused any other scheme; check again so a future rule change
    // cannot turn this into a live image or script URL.
    if (!isAllowedLink(src)) return escapeHtml(alt);
    return `<a class="plan-image" href="${escapeHtml(src)}" rel="noopener noreferrer" target="_blank">image: ${escapeHtml(alt)}</a>`;
  };
  showUnrendered(md);
  return md;
}

const renderer = createRenderer();

function altText(token: Token): string {
  return (token.children ?? []).map((child) => child.content).join("");
}

/** The visible text of a heading's inline token (code spans included, markup dropped). */
function headingText(inline: Token | undefined): string {
  if (!inline) return "";
  const parts: string[] = [];
  for (const child of inline.children ?? []) {
    if (child.type === "text" || child.type === "code_inline") parts.push(child.content);
    else if (child.type === "image") parts.push(altText(child));
    else if (child.type === "softbreak" || child.type === "hardbreak") parts.push(" ");
  }
  return parts.join("").replace(/\s+/g, " ").trim();
}

/**
 * The anchors given out on one page. Each slug remembers the next suffix to try, so a page of
 * n identical headings costs O(n), not O(n²) (a 200 KB plan can hold 50,000 of them).
 */
export class HeadingIds {
  readonly #taken = new Set<string>();
  readonly #nextSuffix = new Map<string, number>();

  /**
   * An anchor slug: lowercase letters and digits (any script) joined by `-`, prefixed, and made
   * unique within the page.
   *
   * @example
   * new HeadingIds().next("Files to change") // "sec-files-to-change"
   */
  next(text: string): string {
    const slug =
      text
        .toLowerCase()
        .normalize("NFKC")
        .replace(/[^\p{L}\p{N}]+/gu, "-")
        .replace(/^-+|-+$/g, "")
        .slice(0, SLUG_MAX_CHARS)
        .replace(/-+$/, "") || "section";
    let id = `${HEADING_ID_PREFIX}${slug}`;
    if (this.#taken.has(id)) {
      let n = this.#nextSuffix.get(slug) ?? 2;
      while (this.#taken.has(`${id}-${n}`)) n++;
      this.#nextSuffix.set(slug, n + 1);
      id = `${id}-${n}`;
    }
    this.#taken.add(id);
    return id;
  }
}

/**
 * Renders plan markdown to safe HTML and collects its headings for the outline.
 *
 * @example
 * const { html, outline } = renderPlanMarkdown("# Plan\n\n## Steps\n\n1. Read `src/app.ts`");
 * // outline: [{ level: 1, text: "Plan", id: "sec-plan" }, { level: 2, text: "Steps", id: "sec-steps" }]
 */
export function renderPlanMarkdown(markdown: string): RenderedPlan {
  const env = {};
  const tokens = renderer.parse(readableText(markdown), env);
  const outline: OutlineEntry[] = [];
  const ids = new HeadingIds();
  tokens.forEach((token, i) => {
    if (token.type !== "heading_open") return;
    const text = headingText(tokens[i + 1]);
    const id = ids.next(text);
    token.attrSet("id", id);
    outline.push({ level: Number(token.tag.slice(1)), text: text || "(untitled section)", id });
  });
  const rendered = renderer.renderer.render(tokens, renderer.options, env);
  return {
    html: new SafeHtml(rendered),
    outline,
    hiddenCharacters: [...hiddenCharactersIn(markdown), ...hiddenCharactersIn(rendered)],
  };
}
