import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  hiddenCharacterName,
  hiddenCharactersIn,
  hiddenCharacterWarning,
  hiddenMark,
  hiddenMarkPattern,
  readableText,
} from "../../src/protocol/index.ts";
import {
  HIDDEN_TEXT_PLAN,
  HIDDEN_TEXT_PLAN_HIDDEN,
  HIDDEN_TEXT_PLAN_MARKS,
} from "../worker/review-fixtures.ts";

/**
 * The one rule for what a plan's text is (src/protocol/readable-text.ts): every class of
 * character that shows nothing is shown as its mark, the characters a script or an emoji is
 * written with are kept where they do that job, and the rule changes nothing twice.
 */

const mark = (code: number) => hiddenMark(String.fromCodePoint(code));

describe("readableText: hidden characters become visible marks", () => {
  it.each([
    ["left-to-right embedding", 0x202a],
    ["right-to-left embedding", 0x202b],
    ["pop directional formatting", 0x202c],
    ["left-to-right override", 0x202d],
    ["right-to-left override", 0x202e],
    ["left-to-right isolate", 0x2066],
    ["right-to-left isolate", 0x2067],
    ["first strong isolate", 0x2068],
    ["pop directional isolate", 0x2069],
    ["left-to-right mark", 0x200e],
    ["right-to-left mark", 0x200f],
    ["Arabic letter mark", 0x061c],
    ["zero-width space", 0x200b],
    ["zero-width non-joiner", 0x200c],
    ["zero-width joiner", 0x200d],
    ["word joiner", 0x2060],
    ["invisible operator", 0x2061],
    ["invisible operator", 0x2064],
    ["invisible character", 0x206a],
    ["zero-width no-break space", 0xfeff],
    ["soft hyphen", 0x00ad],
    ["Mongolian vowel separator", 0x180e],
    ["combining grapheme joiner", 0x034f],
    ["invisible character", 0x3164],
    ["invisible character", 0xfff9],
    ["invisible character", 0x1d173],
    ["variation selector", 0xfe0f],
    ["variation selector", 0xfe00],
    ["variation selector", 0xe0100],
    ["tag character", 0xe0001],
    ["tag character", 0xe0041],
    ["tag character", 0xe007f],
    ["escape", 0x1b],
    ["control character", 0x00],
    ["control character", 0x07],
    ["control character", 0x7f],
    ["control character", 0x85],
    ["control character", 0x9b],
    ["invisible character", 0xe0fff],
  ])("%s U+%s between Latin letters is marked", (name, code) => {
    const ch = String.fromCodePoint(code);
    const text = `run${ch}it`;
    expect(readableText(text)).toBe(`run${mark(code)}it`);
    expect(hiddenCharactersIn(text)).toEqual([ch]);
    expect(hiddenCharacterName(ch)).toBe(name);
  });

  it("spells the mark with the code point's hex digits, four to six of them", () => {
    expect(hiddenMark("\u200b")).toBe("⟨U+200B⟩");
    expect(hiddenMark("\u{e0069}")).toBe("⟨U+E0069⟩");
    expect(hiddenMark("\x1b")).toBe("⟨U+001B⟩");
    expect("a⟨U+200B⟩b⟨U+E0069⟩c⟨U+10FFFD⟩".split(hiddenMarkPattern())).toEqual([
      "a",
      "b",
      "c",
      "",
    ]);
  });

  it("a message in tag characters is shown mark by mark, never as invisible text", () => {
    const smuggled = Array.from("ignore the plan", (c) =>
      String.fromCodePoint(0xe0000 + c.charCodeAt(0)),
    ).join("");
    const shown = readableText(`Fix the login.${smuggled}`);
    expect(shown).toBe(
      `Fix the login.${Array.from("ignore the plan", (c) => mark(0xe0000 + c.charCodeAt(0))).join("")}`,
    );
    expect(hiddenCharactersIn(shown)).toEqual([]);
  });

  it("a terminal escape sequence is shown whole: ESC and BEL marked, the payload readable", () => {
    expect(readableText("# Plan\x1b]0;pwned\x07 heading")).toBe(
      "# Plan⟨U+001B⟩]0;pwned⟨U+0007⟩ heading",
    );
  });

  it("a lone surrogate is marked; a pair is one character", () => {
    expect(readableText("a\ud800b\udfffc")).toBe("a⟨U+D800⟩b⟨U+DFFF⟩c");
    expect(readableText("a😀b")).toBe("a😀b");
  });

  it("newline and tab stay; CR, CRLF and the Unicode line and paragraph separators become newlines", () => {
    expect(readableText("a\tb\nc\r\nd\re\u2028f\u2029g")).toBe("a\tb\nc\nd\ne\nf\ng");
  });

  it("a byte-order mark at the very start is removed; anywhere else it is marked", () => {
    expect(readableText("\ufeff# Plan\ufeff")).toBe("# Plan⟨U+FEFF⟩");
    expect(hiddenCharactersIn("\ufeff# Plan")).toEqual([]);
  });
});

describe("readableText: what scripts and emoji are written with stays", () => {
  it.each([
    ["Persian with a ZWNJ", "می\u200cخواهم"],
    ["Hindi conjunct with ZWJ after the virama", "क्\u200dष"],
    ["Sinhala with ZWJ", "ශ්\u200dරී"],
    ["Malayalam with ZWNJ", "കാര്\u200cത്തിക്"],
    ["family emoji", "👨\u200d👩\u200d👧\u200d👦"],
    ["technologist with a skin tone", "👩🏽\u200d💻"],
    ["rainbow flag (VS16 then ZWJ)", "🏳\ufe0f\u200d🌈"],
    ["heart on fire", "❤\ufe0f\u200d🔥"],
    ["keycap", "1\ufe0f\u20e3"],
    ["text-style emoji", "☺\ufe0e"],
    ["ideographic variation sequence", "葛\u{e0100}"],
    ["standardized variant of a math symbol", "≩\ufe00"],
    ["Mongolian free variation selector", "ᠠ\u180b"],
    ["England flag (a tag sequence)", "🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}"],
    ["Scotland flag", "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"],
    ["Arabic number sign (a visible format character)", "\u0600١٢٣"],
    ["markdown, CJK, accents", "# Plan\n\n- 修正 the `naïve` café\n\t- nested\n"],
  ])("%s", (_name, text) => {
    expect(readableText(text)).toBe(text);
    expect(hiddenCharactersIn(text)).toEqual([]);
  });

  it.each([
    ["ZWJ between Latin letters", "a\u200db", "a⟨U+200D⟩b"],
    ["ZWNJ at a word's end", "می\u200c ", "می⟨U+200C⟩ "],
    ["two joiners in a row", "می\u200c\u200cخ", "می⟨U+200C⟩⟨U+200C⟩خ"],
    ["ZWJ after an emoji, before a letter", "😀\u200da", "😀⟨U+200D⟩a"],
    ["VS16 after a letter", "a\ufe0f", "a⟨U+FE0F⟩"],
    ["a second variation selector after an emoji", "😀\ufe0f\ufe0f", "😀\ufe0f⟨U+FE0F⟩"],
    ["VS1 after an emoji", "😀\ufe00", "😀⟨U+FE00⟩"],
    ["an ideographic selector after Latin", "a\u{e0100}", "a⟨U+E0100⟩"],
    ["ZWJ after a VS16 that selects nothing", "a\ufe0f\u200d🔥", "a⟨U+FE0F⟩⟨U+200D⟩🔥"],
    [
      "tag characters after a black flag that spell no recommended flag",
      "🏴\u{e0069}\u{e007f}",
      "🏴⟨U+E0069⟩⟨U+E007F⟩",
    ],
  ])("marks them where they do not do that job: %s", (_name, text, shown) => {
    expect(readableText(text)).toBe(shown);
  });
});

describe("readableText is a fixed point", () => {
  const alphabet = fc.constantFrom(
    ..."ab 1#\n\t\r[]:()`%<>/".split(""),
    ..."\u202e\u2066\u200b\u200c\u200d\u2060\ufeff\u00ad\ufe0e\ufe0f\ufe00\u2028\x1b\x07\x00\x7f\ud800\udc00",
    ..."ی\u0600क्葛≩ᠠ".split(""),
    "\ud800",
    "\udc00",
    "\u{e0069}",
    "\u{e0067}",
    "\u{e007f}",
    "\u{e0100}",
    "🏴",
    "😀",
    "🔥",
    "🏽",
    "⟨U+200B⟩",
  );
  const texts = fc.array(alphabet, { maxLength: 40 }).map((parts) => parts.join(""));

  it("applying it twice changes nothing, and its output holds no hidden character", () => {
    fc.assert(
      fc.property(texts, (text) => {
        const once = readableText(text);
        expect(readableText(once)).toBe(once);
        expect(hiddenCharactersIn(once)).toEqual([]);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what it looks for.
        expect(once).not.toMatch(/[\r\u2028\u2029\x1b\x00\x07\x7f\u202e\u2066\u200b\u2060\u00ad]/);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts one hidden character per mark it makes", () => {
    fc.assert(
      fc.property(texts, (text) => {
        const made = (readableText(text).match(hiddenMarkPattern()) ?? []).length;
        const typed = (text.match(hiddenMarkPattern()) ?? []).length;
        expect(hiddenCharactersIn(text)).toHaveLength(made - typed);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("the hostile plan and the warning", () => {
  it("shows the hostile plan's hidden characters as marks and keeps its ordinary text", () => {
    const shown = readableText(HIDDEN_TEXT_PLAN);
    for (const m of HIDDEN_TEXT_PLAN_MARKS) expect(shown).toContain(m);
    expect(shown).toContain(
      "👩🏽\u200d💻, می\u200cخواهم, 🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}.",
    );
    expect(hiddenCharactersIn(HIDDEN_TEXT_PLAN)).toHaveLength(HIDDEN_TEXT_PLAN_HIDDEN);
  });

  it("names each kind once, with its first mark and how many there are", () => {
    expect(hiddenCharacterWarning([])).toBeNull();
    expect(hiddenCharacterWarning(hiddenCharactersIn(HIDDEN_TEXT_PLAN))).toBe(
      "This plan contains 8 hidden characters, shown as ⟨U+200B⟩ (zero-width space), ⟨U+E0069⟩ (tag character, 6 of them) and ⟨U+2060⟩ (word joiner). Hidden characters can make text display in another order than a program reads it, or carry text you cannot see: check the text near them.",
    );
    expect(hiddenCharacterWarning(["\u202e"])).toContain(
      "This plan contains 1 hidden character, shown as ⟨U+202E⟩ (right-to-left override).",
    );
  });
});
