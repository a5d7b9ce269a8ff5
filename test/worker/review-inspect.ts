import { expect } from "vitest";
import { isAllowedLink } from "../../src/review/markdown.ts";

/**
 * Parses a page with workerd's HTMLRewriter (a browser-grade HTML tokenizer) and lists every
 * element with its attributes, so tests assert on the structure a browser would build, not on
 * substrings of the markup.
 */

export interface ParsedElement {
  tag: string;
  attrs: Map<string, string>;
}

export async function parseElements(html: string): Promise<ParsedElement[]> {
  const elements: ParsedElement[] = [];
  await new HTMLRewriter()
    .on("*", {
      element(el) {
        const attrs = new Map<string, string>();
        for (const [name, value] of el.attributes) attrs.set(name ?? "", value ?? "");
        elements.push({ tag: el.tagName.toLowerCase(), attrs });
      },
    })
    .transform(new Response(html))
    .text();
  return elements;
}

/** Collects the text inside the first element matching `selector`. */
export async function textOf(html: string, selector: string): Promise<string> {
  let text = "";
  let seen = false;
  await new HTMLRewriter()
    .on(selector, {
      element() {
        seen = true;
      },
      text(chunk) {
        text += chunk.text;
      },
    })
    .transform(new Response(html))
    .text();
  if (!seen) throw new Error(`no element matches ${selector}`);
  return text;
}

/** The page's own links to review pages of this worker (a group's siblings, the comparison). */
const OWN_REVIEW_LINK = /^\/review\/ses_[0-9a-z]{26}\?key=[A-Za-z0-9_%-]+(&(amp;)?compare=1)?$/;

const FORBIDDEN_TAGS = [
  "img",
  "svg",
  "iframe",
  "object",
  "embed",
  "base",
  "frame",
  "math",
  "video",
  "audio",
];

/**
 * The page is inert apart from its own script: one script (none on the comparison page) and
 * one style, both carrying the nonce; no event-handler or style attributes; no element that loads or embeds anything; every
 * link target allowlisted; no form that posts elsewhere; no refresh.
 */
export async function expectInert(
  html: string,
  nonce: string,
  { scripts: scriptCount = 1 } = {},
): Promise<ParsedElement[]> {
  const elements = await parseElements(html);
  const scripts = elements.filter((e) => e.tag === "script");
  expect(scripts).toHaveLength(scriptCount);
  for (const script of scripts) {
    expect(script.attrs.get("nonce")).toBe(nonce);
    expect(script.attrs.has("src")).toBe(false);
  }
  const styles = elements.filter((e) => e.tag === "style");
  expect(styles).toHaveLength(1);
  expect(styles[0]!.attrs.get("nonce")).toBe(nonce);
  for (const el of elements) {
    expect(FORBIDDEN_TAGS, `<${el.tag}> must not appear`).not.toContain(el.tag);
    for (const [name, value] of el.attrs) {
      expect(name.startsWith("on"), `<${el.tag} ${name}=…> is an event handler`).toBe(false);
      expect(name, `<${el.tag}> has a style attribute`).not.toBe("style");
      expect(name, `<${el.tag}> loads ${value}`).not.toBe("src");
      expect(name, `<${el.tag}> has a formaction`).not.toBe("formaction");
      if (name === "href") {
        const ok =
          el.tag === "link"
            ? value === "data:,"
            : isAllowedLink(value) || OWN_REVIEW_LINK.test(value);
        expect(ok, `<${el.tag} href="${value}"> is not an allowed link`).toBe(true);
      }
    }
    if (el.tag === "form") expect(el.attrs.has("action")).toBe(false);
    if (el.tag === "meta") expect(el.attrs.has("http-equiv")).toBe(false);
    if (el.tag === "a" && el.attrs.get("target") === "_blank") {
      expect(el.attrs.get("rel")).toBe("noopener noreferrer");
    }
  }
  return elements;
}
