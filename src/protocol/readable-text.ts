/**
 * What a plan's text is, as a reader sees it: the one rule every surface applies before it
 * shows the text or hands it on — the review page, `planport review`, the MCP `wait_for_plan`
 * answer, the plan file, the `--on-teleport` command's stdin, a preset agent's argv and the
 * `--json` outcome. A reviewer approves what they see and an agent acts on every code point it
 * gets, so a character that shows nothing but can change what the text means never travels
 * hidden: it becomes a visible mark, `⟨U+202E⟩`, the same mark on every surface. Hidden are:
 *
 * - the bidi controls (U+202A–E, U+2066–9, and the marks U+200E/F, U+061C): they make text
 *   display in another order than a program reads it (Trojan Source, CVE-2021-42574);
 * - the tag characters (U+E0000–E007F): invisible twins of ASCII that a model reads as text
 *   ("ASCII smuggling");
 * - every other format character (category Cf: zero-width space, word joiner, BOM, soft
 *   hyphen, invisible operators, interlinear annotations…) and default-ignorable code point
 *   (variation selectors, Hangul fillers, the combining grapheme joiner…);
 * - control characters but newline and tab (ESC opens a terminal's escape sequences);
 * - lone surrogates, which are not text at all.
 *
 * Some of them are how a script or an emoji is written, and there, only there, they stay:
 *
 * - ZWNJ and ZWJ (U+200C/D) alone between two letters of a script that joins them (Arabic,
 *   Persian, Syriac, Mongolian, the Indic scripts, Sinhala, Myanmar, Khmer, Tibetan…), and ZWJ
 *   alone between two emoji (👩‍💻). Between Latin letters, doubled, or at a word's edge they are
 *   marked: that is where hidden messages are spelled in them;
 * - a variation selector right after a character it selects a form of: U+FE0E/F after an
 *   emoji, U+FE00–FE0D after a CJK ideograph, a non-emoji symbol, `0` or the few scripts that
 *   use them,
 *   U+E0100–E01EF after a CJK ideograph, the Mongolian ones after Mongolian; a second one in a
 *   row is marked (a run of them is how data is hidden behind one emoji);
 * - tag characters inside the three flag sequences Unicode recommends (England, Scotland,
 *   Wales); any other run of them is marked;
 * - the prepended concatenation marks (the Arabic number sign U+0600…): format characters
 *   with a visible glyph.
 *
 * A byte-order mark at the very start is an encoding's signature, not text: it is removed.
 * Line endings become `\n` (CR, CRLF, U+2028, U+2029), as markdown readers count them.
 *
 * Idempotent: a mark is visible text and stays as it is, so a mark a writer typed reads the
 * same as one the rule made, on every surface. One vocabulary for the worker and the client,
 * so it lives in the protocol.
 */

// Line endings a reader sees as a new line.
const LINE_BREAK = /\r\n?|[\u2028\u2029]/g;

// The recommended tag sequences: 🏴 + "gbeng" / "gbsct" / "gbwls" in tag letters + cancel tag.
const FLAG_SEQUENCE =
  "\\u{1F3F4}\\u{E0067}\\u{E0062}(?:\\u{E0065}\\u{E006E}\\u{E0067}|\\u{E0073}\\u{E0063}\\u{E0074}|\\u{E0077}\\u{E006C}\\u{E0073})\\u{E007F}";
// What may be hidden: controls, format characters, default-ignorables, lone surrogates.
const CANDIDATE = "[\\p{Cc}\\p{Cf}\\p{DI}\\p{Cs}]";

/** A fresh global pattern each call (`lastIndex` is state): a flag sequence, or a candidate. */
function hiddenPattern(): RegExp {
  return new RegExp(`${FLAG_SEQUENCE}|${CANDIDATE}`, "gu");
}

// Format characters drawn with a glyph of their own (Prepended_Concatenation_Mark).
const VISIBLE_FORMAT = /^[\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u{110bd}\u{110cd}]$/u;
// (Regular expressions rather than string literals: the page's bundle must stay ASCII.)
const NEWLINE_OR_TAB = /^[\n\t]$/;
const LETTER_OR_MARK = /^[\p{L}\p{M}]$/u;
const JOINING_SCRIPT =
  /^[\p{scx=Arab}\p{scx=Syrc}\p{scx=Thaa}\p{scx=Nkoo}\p{scx=Mand}\p{scx=Mong}\p{scx=Phag}\p{scx=Adlm}\p{scx=Rohg}\p{scx=Deva}\p{scx=Beng}\p{scx=Guru}\p{scx=Gujr}\p{scx=Orya}\p{scx=Taml}\p{scx=Telu}\p{scx=Knda}\p{scx=Mlym}\p{scx=Sinh}\p{scx=Tibt}\p{scx=Mymr}\p{scx=Khmr}]$/u;
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const EMOJI_MODIFIER = /^\p{Emoji_Modifier}$/u;
const EMOJI = /^\p{Emoji}$/u;
const HAN = /^\p{scx=Hani}$/u;
const MONGOLIAN = /^\p{scx=Mong}$/u;
// Bases of the standardized variation sequences with VS1–VS14 (emoji have none: FE0E/F only).
const VARIANT_BASE =
  /^[\p{scx=Hani}\p{Sm}\p{So}\p{scx=Mymr}\p{scx=Phag}\p{scx=Mani}\p{scx=Egyp}0]$/u;

function isJoiningLetter(ch: string): boolean {
  return LETTER_OR_MARK.test(ch) && JOINING_SCRIPT.test(ch);
}

/** The code point that ends just before UTF-16 index `at` ("" at the start). */
function codePointBefore(text: string, at: number): string {
  if (at <= 0) return "";
  const low = text.charCodeAt(at - 1);
  const high = at >= 2 ? text.charCodeAt(at - 2) : 0;
  const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
  return pair ? text.slice(at - 2, at) : text.slice(at - 1, at);
}

/** The code point that starts at UTF-16 index `at` ("" at the end). */
function codePointAt(text: string, at: number): string {
  const code = text.codePointAt(at);
  return code === undefined ? "" : String.fromCodePoint(code);
}

/** Whether the emoji before a ZWJ ends an emoji: a pictograph, a skin tone, or one with VS16. */
function endsEmoji(text: string, at: number): boolean {
  const before = codePointBefore(text, at);
  if (PICTOGRAPH.test(before) || EMOJI_MODIFIER.test(before)) return true;
  return before === "\ufe0f" && EMOJI.test(codePointBefore(text, at - 1));
}

/** Whether the candidate `ch` at `at` is written as it is: it has a visible job there. */
function keeps(ch: string, text: string, at: number): boolean {
  if (NEWLINE_OR_TAB.test(ch) || ch.length > 2 || VISIBLE_FORMAT.test(ch)) return true;
  const code = ch.codePointAt(0) ?? 0;
  const before = codePointBefore(text, at);
  const after = codePointAt(text, at + ch.length);
  if (code === 0x200c || code === 0x200d) {
    if (isJoiningLetter(before) && isJoiningLetter(after)) return true;
    return code === 0x200d && endsEmoji(text, at) && PICTOGRAPH.test(after);
  }
  if (code === 0xfe0e || code === 0xfe0f) return EMOJI.test(before);
  if (code >= 0xfe00 && code <= 0xfe0d)
    return VARIANT_BASE.test(before) && !PICTOGRAPH.test(before);
  if (code >= 0xe0100 && code <= 0xe01ef) return HAN.test(before);
  if ((code >= 0x180b && code <= 0x180d) || code === 0x180f) return MONGOLIAN.test(before);
  return false;
}

/** Rewrites `text` by the rule, telling `onHidden` each character it marks. */
function rewrite(text: string, onHidden?: (ch: string) => void): string {
  const lines = text.replace(LINE_BREAK, "\n");
  return lines.replace(hiddenPattern(), (ch: string, at: number) => {
    if (at === 0 && ch === "\ufeff") return "";
    if (keeps(ch, lines, at)) return ch;
    onHidden?.(ch);
    return hiddenMark(ch);
  });
}

/**
 * The words both reviews (the page and `planport review`) put before markdown source that a
 * rendering would show nothing of, such as a link reference definition (`[//]: # (…)`).
 */
export const HIDDEN_WHEN_RENDERED = "hidden when rendered:";

/**
 * The visible mark that stands for one hidden character.
 *
 * @example
 * hiddenMark("\u202e") // → "⟨U+202E⟩"
 * hiddenMark("\u{e0041}") // → "⟨U+E0041⟩"
 */
export function hiddenMark(ch: string): string {
  const code = (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `⟨U+${code}⟩`;
}

/**
 * Every mark in a text (a fresh global regex each call: `lastIndex` is state), for surfaces
 * that style them (the review page draws each one as a badge).
 *
 * @example
 * "a⟨U+200B⟩b".split(hiddenMarkPattern()) // → ["a", "b"]
 */
export function hiddenMarkPattern(): RegExp {
  return /\u27e8U\+(?:[0-9A-F]{4,5}|10[0-9A-F]{4})\u27e9/g;
}

/**
 * The text as a reader sees it: each hidden character shown as its mark, line endings as `\n`,
 * a leading byte-order mark removed (the rule above).
 *
 * @example
 * readableText("rm -rf build/\u202egol.*") // → "rm -rf build/⟨U+202E⟩gol.*"
 * readableText("run\u200b it\u{e0069}") // → "run⟨U+200B⟩ it⟨U+E0069⟩"
 * readableText("می\u200cخواهم 👩\u200d💻") // → unchanged: the joiners join
 */
export function readableText(text: string): string {
  return rewrite(text);
}

/**
 * The hidden characters in `text`, in order, one per mark {@link readableText} shows.
 *
 * @example
 * hiddenCharactersIn("a\u202eb\u200b") // → ["\u202e", "\u200b"]
 */
export function hiddenCharactersIn(text: string): string[] {
  const found: string[] = [];
  rewrite(text, (ch) => found.push(ch));
  return found;
}

const NAMES: Readonly<Record<number, string>> = {
  8234: "left-to-right embedding",
  8235: "right-to-left embedding",
  8236: "pop directional formatting",
  8237: "left-to-right override",
  8238: "right-to-left override",
  8294: "left-to-right isolate",
  8295: "right-to-left isolate",
  8296: "first strong isolate",
  8297: "pop directional isolate",
  8206: "left-to-right mark",
  8207: "right-to-left mark",
  1564: "Arabic letter mark",
  8203: "zero-width space",
  8204: "zero-width non-joiner",
  8205: "zero-width joiner",
  8288: "word joiner",
  65279: "zero-width no-break space",
  173: "soft hyphen",
  6158: "Mongolian vowel separator",
  847: "combining grapheme joiner",
  27: "escape",
};

/**
 * What a hidden character is, in words: its own name for the ones met most, else its kind.
 *
 * @example
 * hiddenCharacterName("\u200b") // → "zero-width space"
 * hiddenCharacterName("\u{e0041}") // → "tag character"
 */
export function hiddenCharacterName(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const name = NAMES[code];
  if (name) return name;
  if (code >= 0xe0000 && code <= 0xe007f) return "tag character";
  if (/^\p{Variation_Selector}$/u.test(ch)) return "variation selector";
  if (code >= 0x2061 && code <= 0x2064) return "invisible operator";
  if (/^\p{Cc}$/u.test(ch)) return "control character";
  if (/^\p{Cs}$/u.test(ch)) return "lone surrogate";
  return "invisible character";
}

/**
 * The warning a text holding hidden characters gets, above it; null when it holds none.
 * `hidden` are the ones its rendering shows ({@link hiddenCharactersIn}); each kind is named
 * once, with its first mark.
 *
 * @example
 * hiddenCharacterWarning(["\u202e", "\u{e0069}", "\u{e0067}"])
 * // → "This plan contains 3 hidden characters, shown as ⟨U+202E⟩ (right-to-left override) and
 * //    ⟨U+E0069⟩ (tag character, 2 of them). …"
 */
export function hiddenCharacterWarning(hidden: readonly string[]): string | null {
  if (hidden.length === 0) return null;
  const kinds = new Map<string, { mark: string; count: number }>();
  for (const ch of hidden) {
    const name = hiddenCharacterName(ch);
    const kind = kinds.get(name);
    if (kind) kind.count += 1;
    else kinds.set(name, { mark: hiddenMark(ch), count: 1 });
  }
  const shown = [...kinds].map(
    ([name, { mark, count }]) => `${mark} (${name}${count > 1 ? `, ${count} of them` : ""})`,
  );
  const list =
    shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
  const count = hidden.length === 1 ? "1 hidden character" : `${hidden.length} hidden characters`;
  return `This plan contains ${count}, shown as ${list}. Hidden characters can make text display in another order than a program reads it, or carry text you cannot see: check the text near them.`;
}
