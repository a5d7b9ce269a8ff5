import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../local-client/package-root.ts";

/**
 * What `planport` loads before it runs a command (issue 23): the built entry and the chunks it
 * imports statically. Each command's own modules are chunks imported when it runs, so `--help`
 * and usage errors stay about as cheap as starting Node. Sizes, not times: a verdict that holds
 * on any machine (the timings are P11 in `npm run bench`).
 */

const ENTRY = join(PACKAGE_ROOT, "dist", "cli", "planport.js");

/** The entry and every module it imports statically, transitively (not `import()`). */
function staticGraph(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const text = readFileSync(file, "utf8");
    seen.set(file, text);
    for (const match of text.matchAll(
      /(?:^|[;\s])import\s*(?:[^'"();]*?from\s*)?["'](\.[^"']+)["']/g,
    )) {
      visit(resolve(dirname(file), match[1] as string));
    }
  };
  visit(entry);
  return seen;
}

describe("the built command's start", () => {
  it("loads only the command table and its small helpers: no schema library, no command", () => {
    const graph = staticGraph(ENTRY);
    const bytes = [...graph.values()].reduce((sum, text) => sum + text.length, 0);
    expect(bytes).toBeLessThan(150 * 1024);
    const loaded = [...graph.values()].join("\n");
    // zod's error class, and the modules of two commands, never load for --help.
    expect(loaded).not.toContain("ZodError");
    expect([...graph.keys()].some((f) => /poll-command|session-commands|stdio/.test(f))).toBe(
      false,
    );
  });
});
