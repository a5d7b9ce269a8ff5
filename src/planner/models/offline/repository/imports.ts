import { escapeRegExp } from "../task/terms.ts";

/**
 * Which files import which: the offline planner ranks a file higher when it is wired to other
 * strong candidates, and finds the entry points that wire a feature in. Pure and heuristic —
 * enough for JS/TS, Python, Go, Rust, Java/Kotlin and Ruby layouts; an import that does not
 * resolve to a known file is ignored.
 */

const JS_EXTENSIONS = [
  ".ts",
  ".tsx",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
  ".mts",
  ".cts",
  ".vue",
  ".svelte",
];

/**
 * Import specifiers a file's text mentions, by its language (from the extension).
 *
 * @example
 * importSpecifiers("src/a.ts", 'import { b } from "./b.js";') // ["./b.js"]
 */
export function importSpecifiers(path: string, text: string): string[] {
  const out = new Set<string>();
  const add = (re: RegExp) => {
    for (const m of text.matchAll(re)) if (m[1]) out.add(m[1]);
  };
  if (/\.(ts|tsx|js|jsx|mjs|cjs|mts|cts|vue|svelte)$/.test(path)) {
    add(/\b(?:import|export)\s[^'"`;]*?\bfrom\s*["']([^"']+)["']/g);
    add(/\bimport\s*["']([^"']+)["']/g);
    add(/\brequire\(\s*["']([^"']+)["']\s*\)/g);
    add(/\bimport\(\s*["']([^"']+)["']\s*\)/g);
  } else if (path.endsWith(".py")) {
    add(/^\s*from\s+(\.*[\w.]*)\s+import\b/gm);
    add(/^\s*import\s+([\w.]+)/gm);
  } else if (path.endsWith(".go")) {
    for (const block of text.matchAll(/^import\s*\(([\s\S]*?)\)/gm)) {
      for (const m of (block[1] ?? "").matchAll(/"([^"]+)"/g)) if (m[1]) out.add(m[1]);
    }
    add(/^import\s+(?:\w+\s+)?"([^"]+)"/gm);
  } else if (path.endsWith(".rs")) {
    add(/^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+((?:crate|super|self)::[\w:]+)/gm);
    for (const m of text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm))
      if (m[1]) out.add(`mod:${m[1]}`);
  } else if (/\.(java|kt|kts|scala)$/.test(path)) {
    add(/^\s*import\s+(?:static\s+)?([\w.]+?)(?:\.\*)?\s*;?\s*$/gm);
  } else if (path.endsWith(".rb") || path.endsWith(".rake")) {
    for (const m of text.matchAll(/^\s*require(_relative)?\s*\(?\s*["']([^"']+)["']/gm))
      if (m[2]) out.add(m[1] ? `relative:${m[2]}` : m[2]);
  }
  return [...out];
}

/**
 * The import specifiers one line states (a row of an importers search): as
 * {@link importSpecifiers}, and a Go import path alone on its line (inside an `import (…)`
 * block).
 *
 * @example
 * lineImports("mux.go", '\t"github.com/go-chi/chi/v5/middleware"') // ["github.com/go-chi/chi/v5/middleware"]
 */
export function lineImports(path: string, line: string): string[] {
  if (path.endsWith(".go")) {
    const m = /^\s*(?:import\s+)?(?:[\w.]+\s+)?"([^"\s]+)"\s*(?:\/\/.*)?$/.exec(line);
    return m?.[1] ? [m[1]] : [];
  }
  return importSpecifiers(path, line);
}

/**
 * The known files an import specifier refers to (usually one; a Go package is a folder).
 *
 * @example
 * resolveImport("src/routes/auth.ts", "../auth/session.js", new Set(["src/auth/session.ts"])) // ["src/auth/session.ts"]
 */
export function resolveImport(from: string, spec: string, known: ReadonlySet<string>): string[] {
  const dir = from.includes("/") ? from.slice(0, from.lastIndexOf("/")) : "";
  if (from.endsWith(".py")) return resolvePython(dir, spec, known);
  if (from.endsWith(".go")) return resolveGo(spec, known);
  if (from.endsWith(".rs")) return resolveRust(from, dir, spec, known);
  if (/\.(java|kt|kts|scala)$/.test(from)) return resolveJava(spec, known);
  if (from.endsWith(".rb") || from.endsWith(".rake")) return resolveRuby(dir, spec, known);
  return resolveJs(dir, spec, known);
}

function resolveJava(spec: string, known: ReadonlySet<string>): string[] {
  const path = spec.replace(/\./g, "/");
  return bySuffix(path, known, [".java", ".kt", ".scala"]);
}

function resolveRuby(dir: string, spec: string, known: ReadonlySet<string>): string[] {
  if (spec.startsWith("relative:")) {
    const base = joinPosix(dir, spec.slice("relative:".length));
    if (base === null) return [];
    return [base, `${base}.rb`].filter((c) => known.has(c)).slice(0, 1);
  }
  return bySuffix(spec, known, [".rb"]);
}

function resolveJs(dir: string, spec: string, known: ReadonlySet<string>): string[] {
  let base: string | null;
  if (spec.startsWith("./") || spec.startsWith("../")) base = joinPosix(dir, spec);
  else if (spec.startsWith("@/") || spec.startsWith("~/")) base = `src/${spec.slice(2)}`;
  else if (spec.startsWith("/")) base = spec.slice(1);
  else base = null;
  if (base === null) {
    // A bare specifier: a package, or a path alias such as "src/lib/x"; try it as a path suffix.
    if (!spec.includes("/") || spec.startsWith("@")) return [];
    return bySuffix(spec, known, JS_EXTENSIONS);
  }
  const stripped = base.replace(/\.(js|jsx|mjs|cjs)$/, "");
  const candidates = [
    base,
    ...JS_EXTENSIONS.map((e) => stripped + e),
    ...JS_EXTENSIONS.map((e) => `${base}/index${e}`),
  ];
  const hit = candidates.find((c) => known.has(c));
  return hit ? [hit] : [];
}

function resolvePython(dir: string, spec: string, known: ReadonlySet<string>): string[] {
  const dots = /^\.*/.exec(spec)?.[0].length ?? 0;
  const module = spec.slice(dots).replace(/\./g, "/");
  if (dots > 0) {
    let base = dir;
    for (let i = 1; i < dots; i++)
      base = base.includes("/") ? base.slice(0, base.lastIndexOf("/")) : "";
    const path = [base, module].filter((p) => p !== "").join("/");
    return [`${path}.py`, `${path}/__init__.py`].filter((c) => known.has(c)).slice(0, 1);
  }
  if (module === "") return [];
  for (const prefix of ["", "src/", "lib/"]) {
    const hit = [`${prefix}${module}.py`, `${prefix}${module}/__init__.py`].find((c) =>
      known.has(c),
    );
    if (hit) return [hit];
  }
  return bySuffix(module, known, [".py"]);
}

function resolveGo(spec: string, known: ReadonlySet<string>): string[] {
  // The longest tail of the import path that is a folder here (the module prefix and a
  // major-version segment are not part of the tree); a one-segment tail only when unique.
  const segments = spec.split("/");
  const folders = goPackages(known);
  for (let n = segments.length; n >= 1; n--) {
    const tail = segments.slice(-n).join("/");
    const matching = [...folders.keys()].filter((d) => d === tail || d.endsWith(`/${tail}`));
    if (matching.length === 0 || (n === 1 && matching.length > 1)) continue;
    return matching.flatMap((d) => folders.get(d)!.sort()).slice(0, MAX_PACKAGE_FILES);
  }
  return [];
}

/** Files of a Go package an import is taken to reach (the package's files, in path order). */
const MAX_PACKAGE_FILES = 40;

const packagesOf = new WeakMap<ReadonlySet<string>, Map<string, string[]>>();

/** The Go packages (folders) of the known paths and their non-test files, computed once per set. */
function goPackages(known: ReadonlySet<string>): Map<string, string[]> {
  const cached = packagesOf.get(known);
  if (cached) return cached;
  const folders = new Map<string, string[]>();
  for (const p of known) {
    if (!p.endsWith(".go") || p.endsWith("_test.go")) continue;
    const dir = dirOf(p);
    const list = folders.get(dir);
    if (list) list.push(p);
    else folders.set(dir, [p]);
  }
  packagesOf.set(known, folders);
  return folders;
}

function resolveRust(
  from: string,
  dir: string,
  spec: string,
  known: ReadonlySet<string>,
): string[] {
  if (spec.startsWith("mod:")) {
    const name = spec.slice(4);
    const here =
      from.endsWith("/mod.rs") || from.endsWith("/lib.rs") || from.endsWith("/main.rs")
        ? dir
        : from.replace(/\.rs$/, "");
    return [`${here}/${name}.rs`, `${here}/${name}/mod.rs`].filter((c) => known.has(c)).slice(0, 1);
  }
  // The crate's root: the folder holding `src/` above this file (a workspace has several).
  const at = from.lastIndexOf("src/");
  const crateSrc = at === -1 ? "src" : from.slice(0, at + 3);
  let base = crateSrc;
  let rest = spec;
  if (spec.startsWith("super::") || spec.startsWith("self::")) {
    const here = /\/(mod|lib|main)\.rs$/.test(from) ? dir : from.replace(/\.rs$/, "");
    base = spec.startsWith("super::") ? dirOf(here) : here;
    rest = spec.replace(/^(super|self)::/, "");
  } else rest = spec.replace(/^crate::/, "");
  const parts = rest.split("::");
  for (let n = parts.length; n > 0; n--) {
    const path = `${base}/${parts.slice(0, n).join("/")}`;
    const hit = [`${path}.rs`, `${path}/mod.rs`].find((c) => known.has(c));
    if (hit) return [hit];
  }
  return [];
}

/**
 * A Grep pattern for the import lines that name any of `modules` (file or package names as
 * the repository spells them): `import … from "…/session"`, `require("./session")`,
 * `from app.session import`, `"example.com/x/session"`, `use crate::session`, `mod session;`,
 * `import org.x.Session;`, `require "x/session"`. Who imports a strong candidate is wired to
 * it: a caller, or the entry point that registers it.
 *
 * @example
 * new RegExp(importersSearch(["session"])).test('import { a } from "../auth/session.js";') // true
 */
export function importersSearch(modules: readonly string[]): string {
  const v = `(?:${[...new Set(modules)].map(escapeRegExp).join("|")})`;
  return [
    `\\b(?:import|export)\\b.*\\bfrom\\s*["'][^"']*${v}`,
    `\\b(?:require|import)\\s*\\(\\s*["'][^"']*${v}`,
    `^\\s*(?:from|import)\\s+[\\w.]*${v}`,
    `^\\s*(?:import\\s+)?(?:\\w+\\s+)?"[^"]*/${v}"`,
    `^\\s*(?:pub(?:\\([^)]*\\))?\\s+)?(?:use\\s+(?:crate|super|self)::[\\w:]*|mod\\s+)${v}`,
    `^\\s*import\\s+(?:static\\s+)?[\\w.]*\\.${v}\\s*;`,
    `^\\s*require(?:_relative)?\\s*\\(?\\s*["'][^"']*${v}`,
  ].join("|");
}

function bySuffix(
  spec: string,
  known: ReadonlySet<string>,
  extensions: readonly string[],
): string[] {
  const byName = basenames(known);
  const wanted = [
    spec,
    ...extensions.map((e) => spec + e),
    ...extensions.map((e) => `${spec}/index${e}`),
  ];
  for (const w of wanted) {
    const name = w.slice(w.lastIndexOf("/") + 1);
    const hit = (byName.get(name) ?? []).find((p) => p === w || p.endsWith(`/${w}`));
    if (hit !== undefined) return [hit];
  }
  return [];
}

const basenamesOf = new WeakMap<ReadonlySet<string>, Map<string, string[]>>();

/** The known paths by file name, each list in path order (computed once per set). */
function basenames(known: ReadonlySet<string>): Map<string, string[]> {
  const cached = basenamesOf.get(known);
  if (cached) return cached;
  const index = new Map<string, string[]>();
  for (const p of [...known].sort()) {
    const name = p.slice(p.lastIndexOf("/") + 1);
    const list = index.get(name);
    if (list) list.push(p);
    else index.set(name, [p]);
  }
  basenamesOf.set(known, index);
  return index;
}

/** Joins and normalises a relative specifier against a folder; null when it climbs above the root. */
function joinPosix(dir: string, rel: string): string | null {
  const parts = dir === "" ? [] : dir.split("/");
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join("/");
}

function dirOf(path: string): string {
  return path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
}
