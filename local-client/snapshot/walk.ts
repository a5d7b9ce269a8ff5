import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { pathNameProblem, printablePath, type SkippedEntry } from "../../src/protocol/index.ts";

/**
 * The walk for a folder that is not a git work tree: every file below `root`, minus what its
 * `.gitignore` files exclude, read with git's precedence (a deeper `.gitignore` overrides a
 * shallower one; within one file the last matching rule wins; an ignored folder is not
 * entered, so nothing below it can be re-included).
 *
 * `.git` and `node_modules` are always left out, unreported: `.git` is version-control
 * internals, never source; `node_modules` is installed code that, without a git repository
 * to ignore it, would alone blow the 20,000-file limit of most JavaScript projects. Inside a
 * git work tree this walk is not used and git's own view decides.
 */

const ALWAYS_SKIPPED_NAMES = new Set([".git", "node_modules"]);

interface Rules {
  /** Folder the rules belong to, relative to the root ("" for the root). */
  base: string;
  rules: Ignore;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const lenientUtf8 = new TextDecoder("utf-8");

/** Every file below `root` the `.gitignore` files keep, and what was left out and why. */
export async function walkFolder(
  root: string,
): Promise<{ paths: string[]; skipped: SkippedEntry[] }> {
  const paths: string[] = [];
  const skipped: SkippedEntry[] = [];
  const visit = async (folder: string, stack: readonly Rules[]): Promise<void> => {
    const absolute = folder === "" ? root : join(root, folder);
    const rules = await loadRules(absolute, folder);
    const scope = rules === null ? stack : [...stack, rules];
    const entries = await readdir(absolute, { withFileTypes: true, encoding: "buffer" });
    const subfolders: string[] = [];
    for (const entry of entries) {
      let name: string;
      try {
        name = strictUtf8.decode(entry.name);
      } catch {
        const shown = lenientUtf8.decode(entry.name);
        skipped.push({
          path: printablePath(folder === "" ? shown : `${folder}/${shown}`),
          reason: "invalid_name",
        });
        continue;
      }
      if (ALWAYS_SKIPPED_NAMES.has(name)) continue;
      const path = folder === "" ? name : `${folder}/${name}`;
      const isFolder = entry.isDirectory();
      if (isIgnored(scope, path, isFolder)) continue;
      if (isFolder) {
        subfolders.push(path);
        continue;
      }
      const problem = pathNameProblem(path);
      if (problem !== null) skipped.push({ path: printablePath(path), reason: problem });
      else paths.push(path);
    }
    for (const subfolder of subfolders) await visit(subfolder, scope);
  };
  await visit("", []);
  return { paths, skipped };
}

async function loadRules(absolute: string, base: string): Promise<Rules | null> {
  let text: string;
  try {
    text = await readFile(join(absolute, ".gitignore"), "utf8");
  } catch {
    return null;
  }
  return { base, rules: ignore().add(text) };
}

/** Git's precedence: the deepest `.gitignore` with a rule for the path decides. */
function isIgnored(scope: readonly Rules[], path: string, isFolder: boolean): boolean {
  for (let i = scope.length - 1; i >= 0; i--) {
    const level = scope[i];
    if (level === undefined) continue;
    const relative = level.base === "" ? path : path.slice(level.base.length + 1);
    const verdict = level.rules.test(isFolder ? `${relative}/` : relative);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}
