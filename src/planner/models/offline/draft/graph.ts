import type { RankedFile } from "../rank/ranking.ts";

/**
 * The import graph among the files a plan changes, as data: what a diagram of the change
 * draws (the `visual` workflow variant draws it as mermaid). Pure.
 */

export interface ChangeGraph {
  /** The files, in the plan's order; `isNew` for files the plan creates. */
  nodes: { path: string; isNew: boolean }[];
  /** `from` imports `to`; both are nodes. Sorted by `from`, then `to`. */
  edges: { from: string; to: string }[];
}

/**
 * The nodes and import edges among `paths` (the files to change, in order), from the ranking's
 * import facts; `wired` adds edges the plan itself introduces (a new file and the file that
 * registers it).
 *
 * @example
 * changeGraph(["src/routes/index.js", "src/routes/login.js"], ranking)
 * // { nodes: [{ path: "src/routes/index.js", isNew: false }, …], edges: [{ from: "src/routes/index.js", to: "src/routes/login.js" }] }
 */
export function changeGraph(
  paths: readonly string[],
  ranking: readonly RankedFile[],
  options: { isNew?: ReadonlySet<string>; wired?: readonly { from: string; to: string }[] } = {},
): ChangeGraph {
  const inPlan = new Set(paths);
  const byPath = new Map(ranking.map((f) => [f.path, f]));
  const edges = new Map<string, { from: string; to: string }>();
  const link = (from: string, to: string) => {
    if (from !== to && inPlan.has(from) && inPlan.has(to))
      edges.set(`${from}\n${to}`, { from, to });
  };
  for (const path of paths) {
    const f = byPath.get(path);
    if (f === undefined) continue;
    for (const to of f.imports) link(path, to);
    for (const from of f.importedBy) link(from, path);
  }
  for (const e of options.wired ?? []) link(e.from, e.to);
  return {
    nodes: [...inPlan].map((path) => ({ path, isNew: options.isNew?.has(path) ?? false })),
    edges: [...edges.values()].sort((a, b) =>
      a.from === b.from ? compare(a.to, b.to) : compare(a.from, b.from),
    ),
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
