import { splitIdentifier } from "../task/terms.ts";
import { parseDefinition } from "./definitions.ts";
import { enclosing, type Span, symbolSpans } from "./line-refs.ts";
import { languageOf, moduleName } from "./paths.ts";

/**
 * The places in a file a step names, read from its lines: its options type and the options
 * in it, the function that reads them, where a name the task writes is declared, the test
 * cases of a test file. Pure: numbered lines in, places out. Each is what a reviewer would
 * look for first ("the options type, the function that reads them, the test to extend").
 */

/** A declaration of a name: its line, the line as written, and the definition around it. */
export interface Declaration {
  line: number;
  text: string;
  /** The type, class or function it is declared in, if any. */
  within: string | null;
}

/** An options type (`CORSOptions`, `LoggerConfig`, `Settings`) and its members. */
export interface OptionsType {
  span: Span;
  members: { name: string; line: number }[];
}

/** Longest line quoted in a step. */
const MAX_QUOTED_CHARS = 100;
const OPTIONS_NAME = /(Options|Opts|Config|Configuration|Settings|Params|Props|Init|Args)$/;

/**
 * The options types a file declares, largest first.
 *
 * @example
 * optionsTypes("src/middleware/cors/index.ts", lines)[0]!.span.name // "CORSOptions"
 */
export function optionsTypes(path: string, lines: readonly [number, string][]): OptionsType[] {
  const spans = symbolSpans(path, lines);
  const out: OptionsType[] = [];
  for (const span of spans) {
    if ((span.kind !== "type" && span.kind !== "class") || !OPTIONS_NAME.test(span.name)) continue;
    const found: { name: string; line: number; indent: number }[] = [];
    for (const [n, text] of lines) {
      if (n <= span.start || n > span.end) continue;
      const d = parseDefinition(path, text);
      if (d !== null && (d.kind === "field" || d.kind === "key" || d.kind === "constant"))
        found.push({ name: d.name, line: n, indent: /^\s*/.exec(text)![0].length });
    }
    // Its own members, not those of a type nested in one of them.
    const outer = Math.min(...found.map((m) => m.indent));
    const members = found
      .filter((m) => m.indent === outer)
      .map(({ name, line }) => ({ name, line }));
    out.push({ span, members });
  }
  return out.sort((a, b) => b.members.length - a.members.length || a.span.start - b.span.start);
}

/**
 * Where `name` is declared in the file (a member, a function, a constant), first first.
 *
 * @example
 * declarationsOf("src/middleware/cors/index.ts", lines, "maxAge") // [{ line: 19, text: "maxAge?: number", within: "CORSOptions" }]
 */
export function declarationsOf(
  path: string,
  lines: readonly [number, string][],
  name: string,
): Declaration[] {
  const wanted = normal(name);
  const spans = symbolSpans(path, lines);
  const exact: Declaration[] = [];
  const folded: Declaration[] = [];
  for (const [n, text] of lines) {
    const d = parseDefinition(path, text);
    if (d === null || normal(d.name) !== wanted) continue;
    const around = enclosing(
      spans.filter((s) => s.start !== n),
      n,
    );
    // `getCookie` the function before `GetCookie` its type: the name as written comes first.
    (d.name === name ? exact : folded).push({
      line: n,
      text: quote(text),
      within: around?.name ?? null,
    });
  }
  return [...exact, ...folded];
}

/**
 * The function a module is used through: the one the task names (`getCookie`), the command
 * a new flag is for (`run_command` for `flask run`, by its `@click.command("run")` or its
 * name), the one named after the module (`cors` in `middleware/cors/index.ts`), the first
 * command of a command-line module, else the first exported function; with its first line,
 * which shows how it is called.
 */
export function entryFunction(
  path: string,
  lines: readonly [number, string][],
  preferred: readonly string[] = [],
  command: string | null = null,
): { span: Span; signature: string } | null {
  const spans = symbolSpans(path, lines).filter(
    (s) => s.kind === "function" || s.kind === "method" || s.kind === "constant",
  );
  const module = normal(moduleName(path));
  const text = new Map(lines);
  const isCallable = (s: Span) => {
    const line = text.get(s.start) ?? "";
    return s.kind !== "constant" || /=>|function\b|=\s*\(|:\s*\w+\s*=/.test(line);
  };
  const byName = (names: readonly string[]) =>
    spans.find((s) => names.some((n) => normal(n) === normal(s.name)) && isCallable(s));
  const commands = commandFunctions(spans, text);
  const found =
    byName(preferred) ??
    (command === null ? undefined : commands.find((c) => c.command === normal(command))?.span) ??
    spans.find((s) => normal(s.name) === module && isCallable(s)) ??
    commands[0]?.span ??
    spans.find(
      (s) => /^\s*export\b|^\s*pub\s|^def\s|^func\s/.test(text.get(s.start) ?? "") && isCallable(s),
    );
  if (found === undefined) return null;
  return { span: found, signature: signatureAt(text, found.start) };
}

/**
 * The functions a command-line module declares as commands — decorated with a command
 * (`@click.command("run")`, `@app.command()`, `@cli.command`) — with the command's name: the
 * decorator's string, else the function's name less a `_command`/`Command`/`Cmd` ending.
 */
function commandFunctions(
  spans: readonly Span[],
  text: ReadonlyMap<number, string>,
): { span: Span; command: string }[] {
  const out: { span: Span; command: string }[] = [];
  for (const span of spans) {
    if (span.kind !== "function") continue;
    let named: string | null = null;
    let decorated = false;
    for (let n = span.start - 1; n >= Math.max(1, span.start - DECORATOR_LINES); n--) {
      const line = text.get(n) ?? "";
      if (!/^\s*@/.test(line)) break;
      const m = /^\s*@[\w.]*\b(?:command|group)\s*(?:\(\s*(?:name\s*=\s*)?["']([\w-]+)["'])?/.exec(
        line,
      );
      if (m !== null) {
        decorated = true;
        named = m[1] ?? named;
      }
    }
    if (!decorated) continue;
    const bare = span.name.replace(/(_command|_cmd|Command|Cmd)$/, "");
    out.push({ span, command: normal(named ?? bare) });
  }
  return out;
}

/** Decorator lines read above a function for a command. */
const DECORATOR_LINES = 20;

/** A test case or group of a test file. */
export interface TestCase {
  name: string;
  line: number;
  /** A group (`describe`, a test class) rather than one case. */
  group: boolean;
}

/**
 * The cases and groups of a test file: `describe`/`it`/`test` (JS), `def test_…` and `class
 * Test…` (Python), `func Test…` (Go), `#[test] fn` (Rust), `@Test` methods (Java), `describe`
 * and `it` (Ruby).
 *
 * @example
 * testCases("tests/test_config.py", lines) // [{ name: "test_config_from_file_toml", line: 38, group: false }, …]
 */
export function testCases(path: string, lines: readonly [number, string][]): TestCase[] {
  const language = languageOf(path);
  const out: TestCase[] = [];
  let marked = false;
  for (const [n, text] of lines) {
    let m: RegExpExecArray | null = null;
    if (language === "js" || language === "rb") {
      m = /^\s*(describe|context|it|test)(?:\.\w+)?\(?\s*(['"`])(.{1,80}?)\2/.exec(text);
      if (m) out.push({ name: m[3]!, line: n, group: m[1] === "describe" || m[1] === "context" });
    } else if (language === "py") {
      m = /^\s*(?:async\s+)?def\s+(test_\w+)|^class\s+(Test\w*)/.exec(text);
      if (m) out.push({ name: (m[1] ?? m[2])!, line: n, group: m[2] !== undefined });
    } else if (language === "go") {
      m = /^func\s+(Test\w+)/.exec(text);
      if (m) out.push({ name: m[1]!, line: n, group: false });
    } else if (language === "rs" || language === "java") {
      if (/^\s*(#\[(tokio::)?test|@Test\b|@ParameterizedTest\b)/.test(text)) marked = true;
      else if (marked) {
        m = /\bfn\s+(\w+)|\bvoid\s+(\w+)\s*\(/.exec(text);
        if (m) {
          out.push({ name: (m[1] ?? m[2])!, line: n, group: false });
          marked = false;
        }
      }
    }
  }
  return out;
}

/**
 * The test case most about the given names (its name holds most of them), else null.
 *
 * @example
 * closestCase(cases, ["from_file", "toml"])?.name // "test_config_from_file_toml"
 */
export function closestCase(cases: readonly TestCase[], names: readonly string[]): TestCase | null {
  const words = new Set(names.flatMap((n) => splitIdentifier(n)).filter((w) => w.length >= 3));
  let best: TestCase | null = null;
  let bestScore = 0;
  for (const c of cases) {
    const score = splitIdentifier(c.name.replace(/\W+/g, "_")).filter((w) => words.has(w)).length;
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

/** A definition's first line, with the lines its parameter list runs on (at most four). */
function signatureAt(text: ReadonlyMap<number, string>, start: number): string {
  const parts: string[] = [];
  let depth = 0;
  for (let n = start; n < start + 4 && text.has(n); n++) {
    const line = text.get(n)!.trim();
    parts.push(line);
    for (const ch of line) depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
    if (depth <= 0) break;
  }
  return quote(
    parts
      .join(" ")
      .replace(/\(\s+/g, "(")
      .replace(/,\s*\)/g, ")"),
  );
}

function normal(name: string): string {
  return splitIdentifier(name.replace(/^-+/, "")).join("");
}

function quote(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_QUOTED_CHARS ? `${trimmed.slice(0, MAX_QUOTED_CHARS - 1)}…` : trimmed;
}
