import stripAnsi from "strip-ansi";
import { readableText } from "../../src/protocol/readable-text.ts";

/**
 * Text from the server or the model, made safe to print to a terminal. A session title (it
 * defaults to the prompt, pasted from an issue), a review link, an error message or a session's
 * last words could otherwise retitle the window (OSC 0), clear the screen (`ESC[2J`), plant a
 * hyperlink that hides its target (OSC 8), or hide or reorder what the user reads (bidi
 * overrides, zero-width and tag characters: those are shown as visible marks, `⟨U+202E⟩`, by
 * the rule the review page applies, protocol readable-text.ts). Pure: every
 * sink that prints such text (the reporter, the tables, `status`, `list`, `pull`, `stop`,
 * error lines, the terminal review) passes it through here first.
 */

// C0 controls, DEL and C1 controls (category Cc); newline is kept, tab and CR are rewritten
// before this runs.
const CONTROLS = /(?!\n)\p{Cc}/gu;
// The 8-bit string introducers (DCS, SOS, OSC, PM, APC) and ST, each the C1 twin of ESC + a
// letter. strip-ansi looks for sequences only where it sees ESC or CSI (U+009B), so these are
// spelled out in 7 bits first: an 8-bit OSC then goes with its payload, as the 7-bit one does.
const C1_STRING_CONTROLS = /[\u0090\u0098\u009c-\u009f]/g;
const sevenBit = (c1: string) => `\x1b${String.fromCharCode(c1.charCodeAt(0) - 0x40)}`;
// An ESC strip-ansi did not read as a sequence (an unterminated title, ESC + an unknown final
// byte) still introduces one: it goes with its intermediate and final bytes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what it removes.
const LEFTOVER_ESCAPE = /\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
// CR, CRLF and the Unicode line and paragraph separators: each starts a new line.
const LINE_BREAKS = /\r\n?|[\u2028\u2029]/g;
// What JSON output escapes as `\uXXXX` on top of JSON.stringify's own (C0 only).
const JSON_UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/**
 * Removes terminal escape sequences (whole: the payload of a window title or a hyperlink goes
 * too), then every control character left but newline (tab becomes a space, CR/CRLF a newline),
 * then shows what is left as a reader sees it (protocol `readableText`: bidi overrides,
 * zero-width, tag and other invisible characters as marks). No escape sequence can survive:
 * each one needs ESC or a C1 introducer, and both are control characters.
 *
 * @example
 * terminalText("fix \x1b]0;pwned\x07login\x1b[2J") // → "fix login"
 * terminalText("a\tb\r\nc\u202Ed\u200b") // → "a b\nc⟨U+202E⟩d⟨U+200B⟩"
 */
export function terminalText(text: string): string {
  return readableText(withoutTerminalControls(text));
}

/**
 * {@link terminalText}'s first half: escape sequences and control characters removed, format
 * characters still in. For text that is parsed before it is printed (the plan's markdown, whose
 * entities can decode into format characters): apply `readableText` after parsing too, where
 * it is printed.
 *
 * @example
 * withoutTerminalControls("a\x1b[2J\u202eb") // → "a\u202eb"
 */
export function withoutTerminalControls(text: string): string {
  return stripAnsi(text.replace(C1_STRING_CONTROLS, sevenBit))
    .replace(LEFTOVER_ESCAPE, "")
    .replace(LINE_BREAKS, "\n")
    .replace(/\t/g, " ")
    .replace(CONTROLS, "");
}

/**
 * {@link terminalText} for a one-line field (a table cell, a title, a link): line breaks and
 * runs of white space become one space.
 *
 * @example
 * terminalLine("  Add\nOAuth \x1b[31mlogin  ") // → "Add OAuth login"
 */
export function terminalLine(text: string): string {
  return terminalText(text).replace(/\s+/g, " ").trim();
}

/**
 * `JSON.stringify` whose bytes are also safe on a terminal: DEL, C1 controls, line separators
 * and format characters (bidi overrides…) are written as `\uXXXX` escapes, which JSON.stringify
 * leaves raw. The value a JSON reader gets back is exactly the original.
 *
 * @example
 * terminalJson({ title: "a\u202Eb" }) // → '{"title":"a\\u202eb"}'
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(JSON_UNSAFE, (ch) =>
    Array.from(
      { length: ch.length },
      (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`,
    ).join(""),
  );
}

/**
 * Cuts one line to at most `max` code points, ending in "…". Run it after sanitising: cutting
 * first could leave half an escape sequence that swallows the rest of the line.
 *
 * @example
 * truncateLine("Add GitHub OAuth login", 10) // → "Add GitHu…"
 */
export function truncateLine(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}
