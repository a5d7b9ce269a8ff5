import { describe, expect, it } from "vitest";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what it looks for.
const ANY_ESCAPE_BUT_SGR = /\x1b(?!\[[0-9;]*m)/;

/**
 * The renderer as a colour terminal with hyperlink support sees it: chalk and
 * supports-hyperlinks decide when they are first imported, so the environment is set first and
 * the module imported after (vitest gives each test file its own module graph).
 */
describe("renderPlan on a colour terminal that supports hyperlinks", () => {
  it("styles headings and code, still writes links as text with no OSC 8, and shows the plan's own sequences as marks", async () => {
    process.env.FORCE_COLOR = "3";
    process.env.FORCE_HYPERLINK = "1";
    const { renderPlan } = await import("../../../local-client/review/render.ts");
    const out = renderPlan(
      "# Title\x1b]0;pwned\x07\n\nSee [the docs](https://example.com/x) and `code`.\n\n```js\nconst a = 1;\n```",
      80,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is what it looks for.
    expect(out).toMatch(/\x1b\[[0-9;]*m# Title/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is what it looks for.
    expect(out).toMatch(/\x1b\[[0-9;]*mcode/);
    expect(out).not.toMatch(ANY_ESCAPE_BUT_SGR);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is what it removes.
    const plain = out.replace(/\x1b\[[0-9;]*m/g, "");
    // The plan's own sequence is shown, as the page shows it and a teleport hands it on.
    expect(plain).toContain("# Title⟨U+001B⟩]0;pwned⟨U+0007⟩");
    expect(plain).toContain("the docs (https://example.com/x)");
  });
});
