import type { MarkedExtension, Token, Tokens } from "marked";
import { HIDDEN_WHEN_RENDERED } from "../../src/protocol/index.ts";

/**
 * Markdown that a terminal rendering would show nothing of, made visible in `planport review`,
 * as the review page does for its own renderer (src/review/unrendered.ts): the agent gets the
 * plan's source, where all of it is plain, so the reviewer must see it too.
 *
 * - a link reference definition (`[//]: # (a comment)`, titles over several lines included)
 *   is printed as its source, after "hidden when rendered:";
 * - a fenced code block's info string (```` ```sh anything ````: only used to pick colours) is
 *   printed above the block, as its fence line;
 * - a table row's cells beyond the header's columns (dropped by marked's table rule) are
 *   printed as extra columns.
 *
 * Link titles are printed by the review's link renderer (render.ts), images' by marked-terminal.
 * marked decides what is a definition or a cell, so what is shown follows what this renderer
 * would hide exactly — marked and the page's markdown-it do not always agree.
 */

/** A line of the plan's source the review prints as it is (one token type of ours). */
interface SourceLine {
  type: "planportSource";
  raw: string;
  text: string;
}

/**
 * The marked extension: pass it to `new Marked(…)` after the terminal renderer.
 *
 * @example
 * new Marked(markedTerminal({ width: 80 }), unrenderedExtension())
 */
export function unrenderedExtension(): MarkedExtension {
  return {
    extensions: [
      {
        name: "planportSource",
        renderer: (token) => `${String((token as unknown as SourceLine).text)}\n\n`,
      },
    ],
    renderer: {
      def(token: Tokens.Def) {
        return `${hiddenLine(token.raw)}\n\n`;
      },
    },
    hooks: {
      processAllTokens: (tokens) => withCodeInfo(tokens as Token[]),
    },
    walkTokens(token) {
      if (token.type === "table") addCellsOutsideColumns(token as Tokens.Table);
    },
  };
}

/** The source after the label, its further lines under the first. */
function hiddenLine(raw: string): string {
  const lines = raw.trimEnd().split("\n");
  const indent = " ".repeat(HIDDEN_WHEN_RENDERED.length + 1);
  return `${HIDDEN_WHEN_RENDERED} ${lines.map((l, i) => (i === 0 ? l : indent + l)).join("\n")}`;
}

/** Every fenced code block with an info string gets its fence line printed above it. */
function withCodeInfo<T extends Token[]>(tokens: T): T {
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.type === "blockquote") withCodeInfo((token as Tokens.Blockquote).tokens);
    if (token.type === "list") {
      for (const item of (token as Tokens.List).items) withCodeInfo(item.tokens);
    }
    if (token.type !== "code" || !(token as Tokens.Code).lang) continue;
    const fenceLine = token.raw.trimStart().split("\n")[0]?.trim() ?? "";
    const caption: SourceLine = { type: "planportSource", raw: "", text: fenceLine };
    tokens.splice(i, 0, caption as unknown as Token);
    i += 1;
  }
  return tokens;
}

/** marked's own cell split (its `splitCells`): at every `|` not escaped by a backslash. */
function splitCells(row: string): string[] {
  const spaced = row.replace(/\|/g, (pipe: string, at: number, whole: string) => {
    let escaped = false;
    for (let c = at - 1; c >= 0 && whole[c] === "\\"; c -= 1) escaped = !escaped;
    return escaped ? pipe : " |";
  });
  const cells = spaced.split(/ \|/);
  if (!cells[0]?.trim()) cells.shift();
  if (cells.length > 0 && !cells.at(-1)?.trim()) cells.pop();
  return cells.map((c) => c.trim().replace(/\\\|/g, "|"));
}

const emptyCell = (header: boolean): Tokens.TableCell => ({
  text: "",
  tokens: [],
  header,
  align: null,
});

/** Rows with more cells than the header get them back; the header and other rows are padded. */
function addCellsOutsideColumns(table: Tokens.Table): void {
  const rows = table.raw
    .split("\n")
    .slice(2)
    .filter((line) => line.trim() !== "");
  const extra = rows.map((row) => splitCells(row).slice(table.header.length));
  const width = Math.max(0, ...extra.map((cells) => cells.length));
  if (width === 0) return;
  for (let c = 0; c < width; c += 1) table.header.push(emptyCell(true));
  table.align.push(...Array.from({ length: width }, () => null));
  table.rows.forEach((row, r) => {
    for (let c = 0; c < width; c += 1) {
      const text = extra[r]?.[c] ?? "";
      row.push(
        text === ""
          ? emptyCell(false)
          : { text, tokens: [{ type: "text", raw: text, text }], header: false, align: null },
      );
    }
  });
}
