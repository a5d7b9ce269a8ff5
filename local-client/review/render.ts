import { Marked, type Tokens } from "marked";
import { markedTerminal } from "marked-terminal";
import {
  hiddenCharactersIn,
  hiddenCharacterWarning,
  readableText,
} from "../../src/protocol/index.ts";
import { withoutTerminalControls } from "../terminal/text.ts";
import { unrenderedExtension } from "./unrendered.ts";

/**
 * The plan as the terminal review shows it: markdown rendered by marked + marked-terminal
 * (headings, lists, code blocks, tables), reflowed to the terminal's width. The plan is the
 * model's text, so it is neutralised twice. What is rendered is the plan as a reader sees it
 * (protocol `readableText`): every hidden character — bidi controls, zero-width and tag
 * characters, ESC and the other controls — is a visible mark (`⟨U+202E⟩`) before parsing,
 * exactly as the page shows it and a teleport hands it on, so no escape sequence of the plan's
 * reaches the renderer. After rendering only the renderer's own colours (SGR) may remain — no
 * hyperlink, title or cursor sequence — and the rule runs again where text is printed: marked
 * decodes `&#x202E;` into a bidi override. A warning above the plan counts them. Markdown the
 * rendering would hide (link definitions, code info strings, extra table cells) is printed as
 * its source (unrendered.ts).
 */

/** Narrower than this, reflowing makes every word a line; wider, lines get hard to read. */
const MIN_WIDTH = 40;
const MAX_WIDTH = 120;
const TAB_SPACES = "    ";

// SGR (colour and style) is the only escape sequence the rendered plan may carry.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC and the controls are what it filters.
const SGR_OR_CONTROL = /\x1b\[[0-9;]*m|(?!\n)[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Keeps SGR sequences and newlines; drops every other control character (so any other
 * sequence's ESC goes, and what follows it is plain text).
 *
 * @example
 * onlyStyling("\x1b[1mbold\x1b[22m \x1b]8;;http://x\x07link") // → "\x1b[1mbold\x1b[22m ]8;;http://xlink"
 */
export function onlyStyling(rendered: string): string {
  return rendered.replace(SGR_OR_CONTROL, (m) => (m.length > 1 ? m : ""));
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is what it measures around.
const SGR = /\x1b\[[0-9;]*m/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same, kept by a split.
const SGR_SPLIT = /(\x1b\[[0-9;]*m)/;

/** The rule applied to the printed text between the renderer's colour sequences. */
function readableOutput(rendered: string): { text: string; hidden: string[] } {
  const hidden: string[] = [];
  const text = rendered
    .split(SGR_SPLIT)
    .map((piece, i) => {
      if (i % 2 === 1) return piece;
      hidden.push(...hiddenCharactersIn(piece));
      return readableText(piece);
    })
    .join("");
  return { text, hidden };
}
// The indent of a line and its list marker: where a wrapped line's continuation starts.
const HANGING_INDENT = /^(\s*(?:[*•-]|\d+\.)?\s*)/;

function visibleLength(text: string): number {
  return Array.from(text.replace(SGR, "")).length;
}

/**
 * Wraps lines longer than `width` at spaces, continuing under the line's own indent and list
 * marker. marked-terminal reflows paragraphs but not list items, and a line the terminal wraps
 * itself starts again at column 0. Colours (SGR) do not count toward the width; a word longer
 * than the width stays whole.
 *
 * @example
 * wrapToWidth("  * one two three", 12) // → "  * one two\n    three"
 */
export function wrapToWidth(text: string, width: number): string {
  return text
    .split("\n")
    .flatMap((line) => wrapLine(line, width))
    .join("\n");
}

function wrapLine(line: string, width: number): string[] {
  if (visibleLength(line) <= width) return [line];
  const lead = /^ */.exec(line)?.[0] ?? "";
  const hangText = HANGING_INDENT.exec(line.replace(SGR, ""))?.[1] ?? "";
  const hang = hangText.length <= width / 2 ? " ".repeat(hangText.length) : "";
  const words = line.slice(lead.length).split(/ +/);
  const lines: string[] = [];
  let current = lead;
  let length = lead.length;
  let empty = true;
  for (const word of words) {
    const wordLength = visibleLength(word);
    if (!empty && length + 1 + wordLength > width) {
      lines.push(current);
      current = hang + word;
      length = hang.length + wordLength;
      continue;
    }
    current += empty ? word : ` ${word}`;
    length += (empty ? 0 : 1) + wordLength;
    empty = false;
  }
  lines.push(current);
  return lines;
}

/** marked-terminal's indent per level (`tab`): of a blockquote, a list, a code block. */
const QUOTE_INDENT = 2;

/** How deeply blockquotes nest in `tokens` (0: no quote). */
function deepestQuote(tokens: readonly Tokens.Generic[] | undefined, depth = 0): number {
  let deepest = depth;
  for (const token of tokens ?? []) {
    const inner = token.type === "blockquote" ? depth + 1 : depth;
    deepest = Math.max(deepest, inner, deepestQuote(token.tokens, inner));
    for (const item of (token as Tokens.List).items ?? []) {
      deepest = Math.max(deepest, deepestQuote(item.tokens, inner));
    }
  }
  return deepest;
}

/**
 * The width to render for: the terminal's columns, within readable bounds.
 *
 * @example
 * renderWidth(100) // → 98; renderWidth(undefined) // → 80
 */
export function renderWidth(columns: number | undefined): number {
  const usable = (columns && columns > 0 ? columns : 82) - 2;
  return Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, usable));
}

/**
 * Renders plan markdown for a terminal `width` columns wide, below a warning when it holds
 * hidden characters.
 *
 * @example
 * renderPlan("# Add OAuth\n\n1. Add the route", 80) // → "\x1b[…m# Add OAuth\x1b[…m\n\n  1. Add the route\n" (colours when the terminal has them)
 */
export function renderPlan(markdown: string, width: number): string {
  const source = withoutTerminalControls(readableText(markdown).replace(/\t/g, TAB_SPACES));
  // marked-terminal reflows a quoted paragraph to the full width, then indents it by two per
  // level, and the wrap below had to cut each of those lines again: a word alone on a line.
  // Reflowing to the width less the deepest quote's indent keeps every quoted line whole.
  const quoteIndent = QUOTE_INDENT * deepestQuote(new Marked().lexer(source));
  const marked = new Marked(
    markedTerminal({
      width: Math.max(MIN_WIDTH / 2, width - quoteIndent),
      reflowText: true,
      emoji: false,
      tab: QUOTE_INDENT,
    }),
    unrenderedExtension(),
    {
      renderer: {
        // marked-terminal writes links as OSC 8 hyperlinks where the terminal supports them,
        // which show text while hiding the target; the review shows both, as plain text, and
        // the title a tooltip would have held.
        link(
          this: { parser: { parseInline(tokens: Tokens.Generic[]): string } },
          token: Tokens.Link,
        ) {
          const text = this.parser.parseInline(token.tokens);
          const link = text === "" || text === token.href ? token.href : `${text} (${token.href})`;
          return token.title ? `${link} (title: ${token.title})` : link;
        },
      },
    },
  );
  const rendered = readableOutput(onlyStyling(marked.parse(source, { async: false })));
  const plan = wrapToWidth(rendered.text.replace(/\n{3,}/g, "\n\n").trimEnd(), width);
  const warning = hiddenCharacterWarning([...hiddenCharactersIn(markdown), ...rendered.hidden]);
  return warning === null ? plan : `${wrapToWidth(`warning: ${warning}`, width)}\n\n${plan}`;
}
