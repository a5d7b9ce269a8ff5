import { describe, expect, it } from "vitest";
import {
  terminalJson,
  terminalLine,
  terminalText,
  truncateLine,
} from "../../../local-client/terminal/text.ts";

/**
 * The one function every human-readable sink uses for text from the server or the model
 * (issue 10, finding 5). Safe output means: no ESC, no BEL, no other C0/C1 control but newline,
 * no bidi controls and no invisible format characters — whatever the input.
 */

const ESC = "\x1b";
const BEL = "\x07";
const ST = `${ESC}\\`;

/** Everything a terminal could act on, or that hides or reorders text. */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
const unsafeExceptNewline = (s: string) => UNSAFE.test(s.replace(/\n/g, ""));

describe("terminalText removes escape sequences whole", () => {
  it.each([
    ["OSC 0 window title (BEL)", `fix ${ESC}]0;pwned${BEL}login`, "fix login"],
    ["OSC 2 window title (ST)", `fix ${ESC}]2;pwned${ST}login`, "fix login"],
    [
      "OSC 8 hyperlink",
      `${ESC}]8;;https://evil.example${ST}click${ESC}]8;;${ST} here`,
      "click here",
    ],
    ["OSC 52 clipboard write", `a${ESC}]52;c;cm0gLXJmIH4=${BEL}b`, "ab"],
    ["CSI clear screen", `a${ESC}[2Jb${ESC}[H`, "ab"],
    ["SGR colour", `${ESC}[31;1mred${ESC}[0m`, "red"],
    ["CSI with private parameters", `a${ESC}[?1049hb${ESC}[?25l`, "ab"],
    ["cursor save/restore (two-byte ESC)", `a${ESC}7b${ESC}8c`, "abc"],
    ["charset switch", `a${ESC}(0b`, "ab"],
    ["DCS string", `a${ESC}Pq#0;2;0;0;0${ST}b`, "ab"],
    ["8-bit CSI (U+009B)", "a\u009b2Jb", "ab"],
    ["8-bit OSC (U+009D) with 8-bit ST", "a\u009d0;title\u009cb", "ab"],
  ])("%s", (_name, input, expected) => {
    expect(terminalText(input)).toBe(expected);
  });

  it("leaves no ESC behind from broken or nested sequences (the rest is harmless text)", () => {
    for (const input of [
      `${ESC}]0;unterminated title`,
      `${ESC}${ESC}[31m[2J`,
      `${ESC}[`,
      `${ESC}`,
      `a${ESC}]8;;http://x`,
      `\u009b`,
    ]) {
      expect(unsafeExceptNewline(terminalText(input)), JSON.stringify(input)).toBe(false);
    }
    expect(terminalText(`${ESC}]0;unterminated title`)).toBe("0;unterminated title");
    expect(terminalText("a\u009d0;unterminated")).toBe("a0;unterminated");
  });
});

describe("terminalText removes control characters and shows invisible ones", () => {
  it("keeps newlines, turns tabs into spaces and CR / CRLF into newlines", () => {
    expect(terminalText("a\tb\r\nc\rd\ne")).toBe("a b\nc\nd\ne");
  });

  it("removes every other C0 control, DEL and C1 control", () => {
    let all = "";
    for (let c = 0; c <= 0x9f; c += 1) if (c < 0x20 || c >= 0x7f) all += String.fromCharCode(c);
    // Tab (0x09) becomes a space, LF (0x0a) stays, CR (0x0d) becomes a newline.
    expect(terminalText(`x${all}y`)).toBe("x \n\ny");
  });

  it.each([
    [
      "LRE/RLE/PDF/LRO/RLO",
      "\u202a\u202b\u202c\u202d\u202e",
      "⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩",
    ],
    ["LRI/RLI/FSI/PDI", "\u2066\u2067\u2068\u2069", "⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩"],
  ])("shows each hidden text-direction character (%s) as its mark", (_name, chars, marks) => {
    expect(terminalText(`ad${chars}min`)).toBe(`ad${marks}min`);
  });

  it.each([
    ["LRM/RLM/ALM", "\u200e\u200f\u061c", "⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"],
    [
      "zero-width space, word joiner, invisible operators",
      "\u200b\u2060\u2061\u2062\u2063\u2064",
      "⟨U+200B⟩⟨U+2060⟩⟨U+2061⟩⟨U+2062⟩⟨U+2063⟩⟨U+2064⟩",
    ],
    ["BOM / zero-width no-break space", "\ufeff", "⟨U+FEFF⟩"],
    ["soft hyphen", "\u00ad", "⟨U+00AD⟩"],
    ["interlinear annotation", "\ufff9\ufffa\ufffb", "⟨U+FFF9⟩⟨U+FFFA⟩⟨U+FFFB⟩"],
    ["tag characters (hidden ASCII)", "\u{e0001}\u{e0041}\u{e007f}", "⟨U+E0001⟩⟨U+E0041⟩⟨U+E007F⟩"],
  ])(
    "shows %s as marks, as the review page does (the one rule, protocol readable-text.ts)",
    (_name, chars, marks) => {
      expect(terminalText(`ad${chars}min`)).toBe(`ad${marks}min`);
    },
  );

  it("turns Unicode line and paragraph separators into newlines", () => {
    expect(terminalText("a\u2028b\u2029c")).toBe("a\nb\nc");
  });

  it("keeps ordinary text of every script, emoji with ZWJ, and ZWNJ", () => {
    const text = "Ünïcødé 日本語 مرحبا עברית हिन्दी می‌خواهم 👩‍💻 — “quotes”";
    expect(terminalText(text)).toBe(text);
  });

  it("is idempotent and leaves nothing unsafe for any mix of the above", () => {
    const pieces = [ESC, BEL, "[2J", "]0;", "\u202e", "\u009b", "\r", "\t", "x", "\n", "\u200b"];
    for (let seed = 1; seed < 500; seed += 1) {
      let s = "";
      let r = seed;
      for (let i = 0; i < 12; i += 1) {
        r = (r * 1103515245 + 12345) % 2 ** 31;
        s += pieces[r % pieces.length];
      }
      const once = terminalText(s);
      expect(unsafeExceptNewline(once), JSON.stringify(s)).toBe(false);
      expect(terminalText(once)).toBe(once);
    }
  });
});

describe("terminalLine", () => {
  it("is one line: breaks and runs of white space become one space, trimmed", () => {
    expect(terminalLine("  Add\nOAuth \r\n\tlogin\u2028now  ")).toBe("Add OAuth login now");
  });

  it("is sanitised too", () => {
    expect(terminalLine(`${ESC}]0;x${BEL}Add${ESC}[2J login\u202e`)).toBe("Add login⟨U+202E⟩");
  });
});

describe("truncateLine cuts after sanitising", () => {
  it("cuts to max code points with an ellipsis, and leaves short text alone", () => {
    expect(truncateLine("Add GitHub OAuth login", 10)).toBe("Add GitHu…");
    expect(truncateLine("short", 10)).toBe("short");
  });

  it("never splits a surrogate pair", () => {
    expect(truncateLine("😀😀😀😀", 3)).toBe("😀😀…");
  });

  it("a hyperlink cut in half by truncation cannot survive sanitising first", () => {
    const title = `${ESC}]8;;https://evil.example${ESC}\\Fix login${ESC}]8;;${ESC}\\ and the rest`;
    const cell = truncateLine(terminalLine(title), 12);
    expect(cell).toBe("Fix login a…");
    expect(UNSAFE.test(cell)).toBe(false);
  });
});

describe("terminalJson", () => {
  it("is exact JSON: parsing gives the original value back", () => {
    const value = {
      title: `${ESC}]0;t${BEL}a\u202eb\u2028c\u009b\u{e0041}\u200d\u007f`,
      n: 1,
      list: ["\u2066x\u2069", null],
    };
    expect(JSON.parse(terminalJson(value))).toEqual(value);
  });

  it("writes no raw control, bidi or format character", () => {
    const out = terminalJson({ t: `${ESC}[2J${BEL}\u202e\u2066\u200e\u061c\u009b\u2028\u{e0041}` });
    expect(UNSAFE.test(out)).toBe(false);
    expect(out).toContain("\\u202e");
  });

  it("is plain JSON.stringify for ordinary values", () => {
    const value = { event: "session", id: "ses_1", review_url: "http://h/review/x?key=k", n: [1] };
    expect(terminalJson(value)).toBe(JSON.stringify(value));
  });
});
