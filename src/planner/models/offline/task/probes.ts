import type { GrepLine } from "../transcript.ts";
import { PLACE_RANK, type TaskEvidence } from "./evidence.ts";
import { escapeRegExp, STOP_WORDS } from "./terms.ts";

/**
 * Asking the repository about the task's names before choosing the terms: which names to probe,
 * the one search that probes them, and the census of its answer. Pure.
 */

/** Most names one probe looks for. */
const MAX_PROBED_NAMES = 40;

/** Longest probe pattern (Grep accepts 1,000 characters). */
const MAX_PROBE_PATTERN_CHARS = 980;

/**
 * The names worth asking the repository about before choosing the terms: every name written as
 * code, strongest place first. An issue pastes the user's own code as often as the library's;
 * one search for all of them at once (`probePatterns`) tells which the repository has.
 *
 * @example
 * probeNames(readTask("`Config.from_file` fails\n\n```\nboard = Board()\n```")) // ["Config", "from_file", "Board", "board"]
 */
export function probeNames(e: TaskEvidence): string[] {
  return e.names
    .filter((n) => n.name.length >= 3 && /^[A-Za-z_$][\w$]*$/.test(n.name))
    .filter((n) => !STOP_WORDS.has(n.name.toLowerCase()))
    .sort(
      (a, b) =>
        PLACE_RANK[a.where] - PLACE_RANK[b.where] ||
        b.count - a.count ||
        a.first - b.first ||
        (a.name < b.name ? -1 : 1),
    )
    .slice(0, MAX_PROBED_NAMES)
    .map((n) => n.name);
}

/**
 * Grep patterns (content mode) that find the lines holding any of `names` as a whole
 * identifier, as written or with its first letter's case flipped; as few patterns as fit.
 *
 * @example
 * probePatterns(["from_file"]) // ["(?:^|[^\\w$])(?:from_file|From_file)(?:[^\\w$]|$)"]
 */
export function probePatterns(names: readonly string[]): string[] {
  const wrap = (alternatives: string[]) =>
    `(?:^|[^\\w$])(?:${alternatives.join("|")})(?:[^\\w$]|$)`;
  const patterns: string[] = [];
  let current: string[] = [];
  for (const name of names) {
    const spelled = [...new Set([name, flipFirst(name)])].map(escapeRegExp);
    const next = [...current, ...spelled];
    if (current.length > 0 && wrap(next).length > MAX_PROBE_PATTERN_CHARS) {
      patterns.push(wrap(current));
      current = spelled;
    } else current = next;
  }
  if (current.length > 0) patterns.push(wrap(current));
  return patterns;
}

function flipFirst(name: string): string {
  const first = name.charAt(0);
  const flipped = first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase();
  return flipped + name.slice(1);
}

/**
 * What a probe found: for each probed name, the files holding it and how many of their lines
 * do; `complete` when the probe's output was not cut (then a name it did not find is in no
 * file, and the counts are whole).
 */
export interface NameCensus {
  files: Map<string, Map<string, number>>;
  complete: boolean;
}

/**
 * Sorts a probe's lines by the names they hold.
 *
 * @example
 * nameCensus(["from_file"], [{ path: "src/flask/config.py", line: 3, text: "def from_file(self):" }], false)
 * // { files: Map { "from_file" => Map { "src/flask/config.py" => 1 } }, complete: true }
 */
export function nameCensus(
  names: readonly string[],
  rows: readonly GrepLine[],
  cut: boolean,
): NameCensus {
  const files = new Map<string, Map<string, number>>();
  const tests = names.map((name) => {
    const spelled = [...new Set([name, flipFirst(name)])].map(escapeRegExp).join("|");
    return { name, re: new RegExp(`(?:^|[^\\w$])(?:${spelled})(?:[^\\w$]|$)`) };
  });
  for (const name of names) files.set(name, new Map());
  for (const row of rows)
    for (const { name, re } of tests)
      if (re.test(row.text)) {
        const counts = files.get(name)!;
        counts.set(row.path, (counts.get(row.path) ?? 0) + 1);
      }
  return { files, complete: !cut };
}
