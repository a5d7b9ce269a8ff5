import { readFileSync } from "node:fs";
import { resolve } from "node:path";

/**
 * The agent setups exactly as README.md gives them ("Use it from your agent"), for the tests
 * that run the real clients with them: a test that configures a client from here cannot pass
 * while the README says something else. Each block is found by what it holds (the
 * `[mcp_servers.planport]` table, the `"mcpServers"` object, …), not by where it sits, so the
 * README can be rearranged; a setup that appears twice, or not at all, fails the test.
 */

const README = resolve(import.meta.dirname, "../../README.md");

interface CodeBlock {
  lang: string;
  text: string;
}

function readmeBlocks(): CodeBlock[] {
  const text = readFileSync(README, "utf8");
  const blocks: CodeBlock[] = [];
  for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    blocks.push({ lang: m[1] ?? "", text: m[2] ?? "" });
  }
  return blocks;
}

/** The one README code block of `lang` that contains `marker`. */
function theBlock(lang: string, marker: string): string {
  const found = readmeBlocks().filter((b) => b.lang === lang && b.text.includes(marker));
  if (found.length !== 1) {
    throw new Error(
      `README.md should have exactly one \`\`\`${lang} block containing ${marker}; it has ${found.length}`,
    );
  }
  return (found[0] as CodeBlock).text;
}

/** The one command line in a README ```sh block that starts with `prefix`, as argv. */
function theCommand(prefix: string): string[] {
  const lines = readmeBlocks()
    .filter((b) => b.lang === "sh")
    .flatMap((b) => b.text.split("\n"))
    .filter((line) => line.startsWith(prefix));
  if (lines.length !== 1) {
    throw new Error(
      `README.md should have exactly one command line starting with "${prefix}"; it has ${lines.length}`,
    );
  }
  return shellWords(lines[0] as string);
}

/** Codex CLI's `~/.codex/config.toml` lines for planport. */
export function readmeCodexConfig(): string {
  return theBlock("toml", "[mcp_servers.planport]");
}

/** The README's unattended Codex run (`codex exec …`), as argv without `codex`. */
export function readmeCodexExec(): string[] {
  return theCommand("codex exec ").slice(1);
}

/** Gemini CLI's `~/.gemini/settings.json` for planport. */
export function readmeGeminiSettings(): Record<string, unknown> {
  return JSON.parse(theBlock("json", '"mcpServers"')) as Record<string, unknown>;
}

/** Gemini CLI's policy file for planport (`~/.gemini/policies/planport.toml`). */
export function readmeGeminiPolicy(): string {
  return theBlock("toml", 'mcpName = "planport"');
}

/** The README's unattended Gemini run (`gemini … -p …`), as argv without `gemini`. */
export function readmeGeminiHeadless(): string[] {
  return theCommand("gemini ").slice(1);
}

/**
 * A command line split as a POSIX shell splits it, for the quoting README commands use:
 * single quotes, double quotes (with `\"`, `\\` and `\$` escapes), backslash-escapes outside
 * quotes, and a trailing `# comment`. Anything a shell would expand (`$VAR`, globs, `;`) is refused rather than guessed.
 *
 * @example
 * shellWords(`codex exec -c 'a="b"' "plan it"`) // → ["codex", "exec", "-c", 'a="b"', "plan it"]
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "#" && word === null) break; // a comment
    if (c === " " || c === "\t") {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unclosed ' in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= "";
      for (i += 1; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "$" || line[i] === "`") throw new Error(`expansion in: ${line}`);
        if (line[i] === "\\" && '"\\$`'.includes(line[i + 1] ?? "")) i += 1;
        word += line[i];
      }
      if (i >= line.length) throw new Error(`unclosed " in: ${line}`);
    } else if (c === "\\") {
      word = (word ?? "") + (line[i + 1] ?? "");
      i += 1;
    } else if ("$`;&|<>*?(){}".includes(c)) {
      throw new Error(`shell syntax ${c} in: ${line}`);
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}
