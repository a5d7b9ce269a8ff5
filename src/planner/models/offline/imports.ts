/**
 * Which files import which: the offline planner ranks a file higher when it is wired to other
 * strong candidates. Pure and heuristic — enough for JS/TS, Python, Go and Rust layouts; an
 * import that does not resolve to a known file is ignored.
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
    add(/^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(crate::[\w:]+)/gm);
    for (const m of text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm))
      if (m[1]) out.add(`mod:${m[1]}`);
  }
  return [...out];
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
  return resolveJs(dir, spec, known);
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
  const tail = spec.split("/").slice(-2).join("/");
  const files = [...known].filter(
    (p) => p.endsWith(".go") && !p.endsWith("_test.go") && dirOf(p).endsWith(tail),
  );
  return files.slice(0, 3);
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
  const parts = spec.replace(/^crate::/, "").split("::");
  for (let n = parts.length; n > 0; n--) {
    const path = `src/${parts.slice(0, n).join("/")}`;
    const hit = [`${path}.rs`, `${path}/mod.rs`].find((c) => known.has(c));
    if (hit) return [hit];
  }
  return [];
}

function bySuffix(
  spec: string,
  known: ReadonlySet<string>,
  extensions: readonly string[],
): string[] {
  const wanted = new Set([
    spec,
    ...extensions.map((e) => spec + e),
    ...extensions.map((e) => `${spec}/index${e}`),
  ]);
  for (const path of known) {
    for (const w of wanted) if (path === w || path.endsWith(`/${w}`)) return [path];
  }
  return [];
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
