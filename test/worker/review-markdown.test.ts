import { describe, expect, it } from "vitest";
import { HeadingIds, isAllowedLink, renderPlanMarkdown } from "../../src/review/markdown.ts";
import { HOSTILE_LINKS, XSS_PAYLOADS } from "./review-fixtures.ts";
import { parseElements } from "./review-inspect.ts";

async function anchors(markdown: string): Promise<string[]> {
  const elements = await parseElements(renderPlanMarkdown(markdown).html.value);
  return elements.filter((e) => e.tag === "a").map((e) => e.attrs.get("href") ?? "");
}

describe("plan markdown rendering", () => {
  it("renders ordinary markdown: headings, lists, code, tables", async () => {
    const { html } = renderPlanMarkdown(
      "# Plan\n\n- one\n- two\n\n```ts\nconst a = 1 < 2;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    );
    const tags = (await parseElements(html.value)).map((e) => e.tag);
    expect(tags).toEqual(
      expect.arrayContaining(["h1", "ul", "li", "pre", "code", "table", "th", "td"]),
    );
    expect(html.value).toContain("const a = 1 &lt; 2;");
  });

  it.each(XSS_PAYLOADS)("escapes raw HTML, never parses it: %s", async (payload) => {
    const { html } = renderPlanMarkdown(`Intro\n\n${payload}\n\nOutro *${payload}*`);
    const tags = (await parseElements(html.value)).map((e) => e.tag);
    for (const tag of tags) expect(["p", "em", "a"]).toContain(tag);
    for (const el of await parseElements(html.value)) {
      for (const name of el.attrs.keys()) expect(name.startsWith("on")).toBe(false);
    }
  });

  it.each(HOSTILE_LINKS)(
    "never turns a hostile target into a live link or image: %s",
    async (md) => {
      const hrefs = await anchors(md);
      for (const href of hrefs) expect(href).toMatch(/^https:\/\//);
      const elements = await parseElements(renderPlanMarkdown(md).html.value);
      expect(elements.filter((e) => e.tag === "img")).toEqual([]);
    },
  );

  it("keeps http(s), mailto and in-page anchors as links", async () => {
    const hrefs = await anchors(
      "[a](https://example.com/x?y=1) [b](http://example.com) [c](mailto:dev@example.com) [d](#sec-steps) https://auto.example/path",
    );
    expect(hrefs).toEqual([
      "https://example.com/x?y=1",
      "http://example.com",
      "mailto:dev@example.com",
      "#sec-steps",
      "https://auto.example/path",
    ]);
  });

  it("opens external links without opener or referrer, and in-page anchors in place", async () => {
    const elements = await parseElements(
      renderPlanMarkdown("[ext](https://example.com) [mail](mailto:a@b.c) [here](#sec-x)").html
        .value,
    );
    const links = elements.filter((e) => e.tag === "a");
    expect(links[0]!.attrs.get("rel")).toBe("noopener noreferrer");
    expect(links[0]!.attrs.get("target")).toBe("_blank");
    expect(links[1]!.attrs.get("rel")).toBe("noopener noreferrer");
    expect(links[1]!.attrs.has("target")).toBe(false);
    expect(links[2]!.attrs.has("rel")).toBe(false);
  });

  it("relative links stay text: they would resolve against the review page", async () => {
    expect(
      await anchors("[app](src/app.ts) [root](/v1/sessions) [proto](//evil.example/x)"),
    ).toEqual([]);
  });

  it("renders an image as a link labelled with its alt text, never as an <img>", async () => {
    const { html } = renderPlanMarkdown("![architecture diagram](https://example.com/a.png)");
    const elements = await parseElements(html.value);
    expect(elements.map((e) => e.tag)).toEqual(["p", "a"]);
    expect(elements[1]!.attrs.get("href")).toBe("https://example.com/a.png");
    expect(html.value).toContain("image: architecture diagram");
  });

  it("isAllowedLink is an allowlist", () => {
    expect(isAllowedLink("https://example.com")).toBe(true);
    expect(isAllowedLink("HTTPS://EXAMPLE.COM")).toBe(true);
    expect(isAllowedLink("mailto:x@y.z")).toBe(true);
    expect(isAllowedLink("#top")).toBe(true);
    for (const bad of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      " javascript:alert(1)",
      "java\tscript:alert(1)",
      "https://ok.example/\nx",
      "data:text/html,x",
      "vbscript:x",
      "//evil.example",
      "/relative",
      "",
    ]) {
      expect(isAllowedLink(bad), bad).toBe(false);
    }
  });
});

describe("plan outline", () => {
  it("lists every heading with its level, text and a unique prefixed anchor", () => {
    const { outline, html } = renderPlanMarkdown(
      "# Plan\n\n## Steps\n\n### Step `one`\n\n## Steps\n\n## Ünïcode — naïve\n\n## *Emphasis* and [link](https://x.example)\n\nSetext\n------\n",
    );
    expect(outline).toEqual([
      { level: 1, text: "Plan", id: "sec-plan" },
      { level: 2, text: "Steps", id: "sec-steps" },
      { level: 3, text: "Step one", id: "sec-step-one" },
      { level: 2, text: "Steps", id: "sec-steps-2" },
      { level: 2, text: "Ünïcode — naïve", id: "sec-ünïcode-naïve" },
      { level: 2, text: "Emphasis and link", id: "sec-emphasis-and-link" },
      { level: 2, text: "Setext", id: "sec-setext" },
    ]);
    for (const entry of outline) expect(html.value).toContain(`id="${entry.id}"`);
  });

  it("an empty or symbol-only heading still gets an anchor", () => {
    const ids = new HeadingIds();
    expect(ids.next("")).toBe("sec-section");
    expect(ids.next("!!!")).toBe("sec-section-2");
  });

  it("a heading whose slug looks like a suffixed one never collides", () => {
    const ids = new HeadingIds();
    expect(["a", "a 2", "a", "a", "a 3 ", "a 2"].map((t) => ids.next(t))).toEqual([
      "sec-a",
      "sec-a-2",
      "sec-a-3",
      "sec-a-4",
      "sec-a-3-2",
      "sec-a-2-2",
    ]);
  });

  it("renders in time linear in the number of identical headings", () => {
    // Ratio of two sizes measured in the same run: linear is ~10x, the old quadratic ~100x.
    const timeOf = (n: number) => {
      const start = performance.now();
      const { outline } = renderPlanMarkdown("# h\n".repeat(n));
      expect(outline).toHaveLength(n);
      expect(outline.at(-1)?.id).toBe(`sec-h-${n}`);
      return performance.now() - start;
    };
    timeOf(2_000);
    const small = Math.min(timeOf(4_000), timeOf(4_000));
    const large = Math.min(timeOf(40_000), timeOf(40_000));
    expect(large / small).toBeLessThan(35);
  });

  it("a hostile heading becomes text in the outline and a harmless id", () => {
    const { outline } = renderPlanMarkdown('## <img src=x onerror=alert(1)> "quoted"');
    expect(outline[0]!.text).toBe('<img src=x onerror=alert(1)> "quoted"');
    expect(outline[0]!.id).toMatch(/^sec-[\p{L}\p{N}-]+$/u);
  });

  it("anchors stay short", () => {
    const { outline } = renderPlanMarkdown(`## ${"word ".repeat(50)}`);
    expect(outline[0]!.id.length).toBeLessThanOrEqual(64);
  });
});
