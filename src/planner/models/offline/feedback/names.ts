import { dirOf, isGeneratedPath, namesModule, pathKind } from "../repository/paths.ts";
import { STOP_WORDS, splitIdentifier } from "../task/terms.ts";

/**
 * What the names a reviewer writes mean in this repository: a path as written (`wrappers.py`,
 * `…/logger/index.ts`), a dotted module (`flask.testing`), plain words naming modules ("the
 * cache and language files"). Pure; instructions.ts uses them to tie a reading to files.
 */

/** Words of an instruction that name no module. */
const INSTRUCTION_WORDS = new Set(
  `drop dropping remove leave alone touch keep change changes changed only just also add include
exclude skip file files module modules folder folders code test tests its their the this that
these those and or but not don't dont never need needs should must plan part parts one ones
here there well too plus lists list instead rather than without avoid untouched out entirely
altogether now for middleware package helper component handler plugin command stuff bits bit
changes pieces logic everything anything something`.split(/\s+/),
);

/**
 * What a named path means: the known path itself; else the one known file of that name beside
 * another path the same clause names (`…/logger/index.ts and its index.test.ts`); else the
 * only known file ending so; several candidates are ambiguous, none is unknown.
 */
export function resolveNamed(
  mention: string,
  known: ReadonlySet<string>,
  siblings: readonly string[] = [],
): { kind: "one"; path: string } | { kind: "many" } | { kind: "none" } {
  if (known.has(mention)) return { kind: "one", path: mention };
  const matches = [...known].filter((p) => p.endsWith(`/${mention}`) && !isGeneratedPath(p)).sort();
  if (matches.length === 0) return { kind: "none" };
  if (matches.length === 1) return { kind: "one", path: matches[0]! };
  for (const sibling of siblings) {
    const beside = matches.find((p) => dirOf(p) === dirOf(sibling.replace(/^repo\//, "")));
    if (beside !== undefined) return { kind: "one", path: beside };
  }
  return { kind: "many" };
}

/** A dotted module name as a file (`flask.testing` → `src/flask/testing.py`), if one is known. */
export function modulePath(name: string, known: ReadonlySet<string>): string | null {
  if (!name.includes(".")) return null;
  const tail = name.split(".").join("/");
  const ends = [
    `${tail}.py`,
    `${tail}/__init__.py`,
    `${tail}.ts`,
    `${tail}/index.ts`,
    `${tail}.js`,
  ];
  const found = [...known].filter((p) => ends.some((e) => p === e || p.endsWith(`/${e}`))).sort();
  return found.length === 1 ? found[0]! : null;
}

/**
 * Known files whose module the words name: `cache` → `src/middleware/cache/index.ts`,
 * `trailing-slash` → `src/middleware/trailing-slash/index.ts`, `billing` → the files of a
 * `billing/` folder. Words that belong to the instruction ("drop", "files", "only") name none.
 */
export function modulesNamed(text: string, known: ReadonlySet<string>): string[] {
  const words = (text.match(/[A-Za-z][A-Za-z0-9_-]*/g) ?? [])
    .map((w) => w.toLowerCase().replace(/^-+|-+$/g, ""))
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w) && !INSTRUCTION_WORDS.has(w))
    .filter((w) => splitIdentifier(w).length > 0);
  if (words.length === 0) return [];
  const out: string[] = [];
  for (const path of [...known].sort()) {
    const kind = pathKind(path);
    if (kind !== "source" && kind !== "test") continue;
    if (words.some((w) => namesModule(path, w))) out.push(path);
  }
  return out;
}
