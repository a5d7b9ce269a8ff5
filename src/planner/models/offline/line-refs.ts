import { wordStartPattern } from "./terms.ts";
/**
 * Where in a file the task's terms show up, named by the enclosing declaration, so the plan can
 * say "`createSession` (lines 12–18)" instead of just a path. Pure.
 */

export interface LineRef {
  /** The enclosing function/class/type, or null for top-level lines. */
  symbol: string | null;
  lines: number[];
}

const DECLARATION =
  /^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:static\s+)?(?:function\*?|class|interface|type|enum|const|let|var|def|fn|struct|trait|impl|module|mod)\s+([A-Za-z_$][\w$]*)|^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/;

/**
 * The name a line declares, if it is a declaration.
 *
 * @example
 * declaredName("export async function login(email) {") // "login"
 */
export function declaredName(line: string): string | null {
  const m = DECLARATION.exec(line);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

/**
 * Groups the lines that mention any term under their nearest preceding declaration; the
 * groups with most hits first, at most `limit`.
 *
 * @example
 * lineRefs([[1, "export function createSession() {"], [2, "  const session = {};"]], ["session"])
 * // [{ symbol: "createSession", lines: [1, 2] }]
 */
export function lineRefs(
  lines: readonly [number, string][],
  terms: readonly string[],
  limit = 3,
): LineRef[] {
  const patterns = terms.filter((t) => t !== "").map((t) => new RegExp(wordStartPattern(t)));
  const groups = new Map<string, LineRef>();
  let symbol: string | null = null;
  for (const [n, text] of lines) {
    const declared = declaredName(text);
    // Indented const/let/var are locals, not declarations worth naming.
    if (declared !== null && !/^\s+(?:export\s+)?(?:const|let|var)\b/.test(text)) symbol = declared;
    if (!patterns.some((p) => p.test(text))) continue;
    const key = symbol ?? "";
    const group = groups.get(key) ?? { symbol, lines: [] };
    group.lines.push(n);
    groups.set(key, group);
  }
  return [...groups.values()]
    .sort((a, b) => b.lines.length - a.lines.length || a.lines[0]! - b.lines[0]!)
    .slice(0, limit)
    .sort((a, b) => a.lines[0]! - b.lines[0]!);
}

/**
 * "lines 12–18" / "line 4" / "lines 3, 9, 40" for a list of line numbers.
 *
 * @example
 * formatLines([12, 13, 14]) // "lines 12–14"
 */
export function formatLines(lines: readonly number[]): string {
  if (lines.length === 0) return "";
  if (lines.length === 1) return `line ${lines[0]}`;
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  if (last - first + 1 === lines.length || last - first <= 12) return `lines ${first}–${last}`;
  return `lines ${lines.slice(0, 4).join(", ")}${lines.length > 4 ? ", …" : ""}`;
}
