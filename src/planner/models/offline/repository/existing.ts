import type { TaskIntent } from "../task/intent.ts";
import { splitIdentifier } from "../task/terms.ts";
import { nameMatch } from "./definitions.ts";
import type { Knowledge } from "./knowledge.ts";
import { pathKind } from "./paths.ts";
import { type Declaration, declarationsOf } from "./places.ts";

/**
 * What the task names that the code already has: the option it asks to add may be there
 * (`maxAge` in `CORSOptions`), the function it asks to change is defined somewhere. Pure. A
 * plan that says where a thing already is tells the reviewer the task may be smaller — or
 * other — than it reads.
 */

/** A name of the task and where the repository already declares it. */
export interface Existing {
  /** As the task writes it (`maxAge`, `skip`, `from_file`). */
  name: string;
  /** The task asks to add it as an option (rather than naming it as code). */
  asOption: boolean;
  /** Where it is declared, source files first (at most a few). */
  places: ({ path: string } & Declaration)[];
  /** Files declaring it beyond those shown. */
  more: number;
}

/** Places shown for one name. */
const MAX_PLACES = 3;

/**
 * Where the task's option and code names are already declared: in the files the planner read
 * (with the line as written and what it is declared in), and where the definition searches
 * found them in files it did not read.
 *
 * @example
 * existingNames(intent, k)
 * // [{ name: "maxAge", asOption: true, places: [{ path: "src/middleware/cors/index.ts", line: 19, text: "maxAge?: number", within: "CORSOptions" }], more: 3 }]
 */
export function existingNames(
  intent: TaskIntent,
  k: Knowledge,
  preferred: readonly string[],
): Existing[] {
  const wanted: { name: string; asOption: boolean }[] = [];
  if (intent.option !== null)
    wanted.push({ name: intent.option.replace(/^-+/, ""), asOption: true });
  for (const name of intent.names)
    if (!wanted.some((w) => same(w.name, name))) wanted.push({ name, asOption: false });
  const out: Existing[] = [];
  for (const { name, asOption } of wanted) {
    const found = new Map<string, Declaration>();
    for (const [path, lines] of k.texts) {
      const kind = pathKind(path);
      if (kind !== "source" && kind !== "config") continue;
      const first = declarationsOf(path, lines, name)[0];
      if (first !== undefined) found.set(path, first);
    }
    for (const [path, defs] of k.defs) {
      if (found.has(path) || pathKind(path) !== "source") continue;
      const d = defs.find((x) => same(x.name, name) || nameMatch(x.name, normal(name)) === 2);
      if (d !== undefined) found.set(path, { line: d.line, text: "", within: null });
    }
    if (found.size === 0) continue;
    const rank = (path: string) => {
      const at = preferred.indexOf(path);
      return at === -1 ? preferred.length : at;
    };
    const places = [...found]
      .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1))
      .map(([path, d]) => ({ path, ...d }));
    out.push({
      name,
      asOption,
      places: places.slice(0, MAX_PLACES),
      more: Math.max(0, places.length - MAX_PLACES),
    });
  }
  return out;
}

function same(a: string, b: string): boolean {
  return normal(a) === normal(b);
}

function normal(name: string): string {
  return splitIdentifier(name.replace(/^-+/, "")).join("");
}
