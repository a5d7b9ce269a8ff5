/**
 * Reading an offline plan's file lists, for the tests and benchmarks that score them: the paths
 * under a heading, every listed path in order, and the line about one path.
 */

/** The headings whose items are repository files, in the order a plan lists them. */
export const FILE_HEADINGS = ["Files to change", "Files to check", "New files", "Tests"] as const;

/**
 * The paths listed under one heading of a plan (up to the next heading).
 *
 * @example listed("## Tests\n\n- `a.test.ts` — …", "Tests") // → ["a.test.ts"]
 */
export function listed(plan: string, heading: string): string[] {
  const start = plan.search(new RegExp(`^#+ ${heading}$`, "m"));
  if (start === -1) return [];
  const rest = plan.slice(start).split("\n").slice(1);
  const end = rest.findIndex((l) => l.startsWith("#"));
  const section = (end === -1 ? rest : rest.slice(0, end)).join("\n");
  return [...section.matchAll(/^(?:\d+\.|-) `([^`]+)`/gm)].map((m) => m[1]!);
}

/** Every path the plan lists: files to change, to check, new files and tests, in that order. */
export function listedFiles(plan: string): string[] {
  return FILE_HEADINGS.flatMap((heading) => listed(plan, heading));
}

/** The line of a list that is about `path`. */
export function lineOf(plan: string, path: string): string {
  return plan.split("\n").find((l) => new RegExp(`^(?:\\d+\\.|-) \`${path}\``).test(l)) ?? "";
}
