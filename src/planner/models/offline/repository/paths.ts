import { splitIdentifier, stem } from "../task/terms.ts";

/**
 * What a repository path is, read from the path alone: its kind (source, test, docs, …), its
 * language, the words its folders and file name are made of, and the names its tests would
 * have. Pure. The offline planner ranks with these facts: a test is listed under tests, docs
 * and changelogs are demoted unless the task is about them, generated and vendored files are
 * never proposed, and a task word that names a folder or a file is strong evidence. Which
 * tests are about which code is tests.ts.
 */

export type PathKind =
  | "source"
  | "test"
  | "docs"
  | "changelog"
  | "example"
  | "bench"
  | "config"
  | "project"
  | "generated"
  | "other";

/** Source extensions → the language family whose definitions and imports the planner reads. */
const LANGUAGES: Record<string, Language> = {
  js: "js",
  mjs: "js",
  cjs: "js",
  jsx: "js",
  ts: "js",
  tsx: "js",
  mts: "js",
  cts: "js",
  vue: "js",
  svelte: "js",
  py: "py",
  pyi: "py",
  go: "go",
  rs: "rs",
  rb: "rb",
  rake: "rb",
  java: "java",
  kt: "java",
  kts: "java",
  scala: "java",
  cs: "java",
  swift: "java",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  hpp: "c",
  php: "php",
};

export type Language = "js" | "py" | "go" | "rs" | "rb" | "java" | "c" | "php";

/** Files that are part of a change although not in a programming language. */
const MARKUP =
  /\.(sql|html?|erb|liquid|tmpl|gotmpl|mustache|hbs|css|scss|sass|less|sh|bash|proto|graphql)$/i;
const CONFIG = /\.(json|ya?ml|toml|ini|cfg|conf|properties|xml|env)$/i;
const DOC_EXT = /\.(md|mdx|markdown|rst|txt|adoc|textile)$/i;

// Vendored copies (third-party folders) and amalgamated single-file builds (`single_include/`,
// `singleheader/`, `catch_amalgamated.hpp`) hold code that is edited elsewhere and regenerated.
const GENERATED =
  /(^|\/)(node_modules|dist|build|out|target|vendor|vendored|third_party|third-party|thirdparty|3rdparty|deps|dependencies|bower_components|coverage|__pycache__|\.git|\.next|\.venv|venv|generated|__generated__|single_include|singleheader)\/|amalgamat\w*\.\w+$|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum|poetry\.lock|uv\.lock|Gemfile\.lock|composer\.lock|bun\.lockb?)$|\.(min\.(js|css)|map|snap|lock)$|\.generated\.|\.pb\.go$|(^|\/)zz_generated|_pb2\.py$/;

const TEST_DIRS =
  /(^|\/)(test|tests|__tests__|spec|specs|testdata|testing|test-d|fixtures|__fixtures__|__mocks__|__snapshots__|e2e|integration-tests|testlib)\//;
const TEST_FILES =
  /(\.|_|-)(test|spec|tests|steps)\.[a-z]+$|_test\.(go|py|rb|rs|exs)$|(^|\/)test_[^/]+\.(py|rb)$|(^|\/)conftest\.py$|_spec\.rb$|(Test|Tests|IT|Spec)\.(java|kt|scala|cs|swift)$|(^|\/)tests\.rs$|(^|\/)features\/(step_definitions|support)\//;
const BENCH = /(^|\/)(bench|benches|benchmark|benchmarks|perf)\/|_bench(mark)?\.[a-z]+$/;
const EXAMPLE = /(^|\/)(examples?|_examples|samples?|demos?|playground|sandbox|scripts)\//;
const DOC_DIRS = /(^|\/)(docs?|site|website|man|documentation|_docs)\//;
const CHANGELOG =
  /(^|\/)(CHANGELOG|CHANGES|HISTORY|History|NEWS|RELEASES?|RELEASE[-_]NOTES|change-archive)[\w.-]*$/i;
const CI =
  /(^|\/)(\.github|\.circleci|\.gitlab|\.buildkite|\.husky|\.vscode|\.idea|\.devcontainer)\/|(^|\/)\.(travis|gitlab-ci|appveyor)\.ya?ml$/;
const PROJECT =
  /^(package\.json|pyproject\.toml|setup\.py|setup\.cfg|requirements[\w-]*\.txt|tox\.ini|pytest\.ini|noxfile\.py|Cargo\.toml|go\.mod|go\.work|Gemfile|[\w-]+\.gemspec|Rakefile|pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|[Mm]akefile|GNUmakefile|deno\.jsonc?|tsconfig[\w.-]*\.json|jsconfig\.json|biome\.jsonc?|README[\w.-]*|readme\.md|LICEN[SC]E[\w.-]*|COPYING[\w.-]*|CONTRIBUTING[\w.-]*|CODE_OF_CONDUCT[\w.-]*|SECURITY[\w.-]*|AUTHORS[\w.-]*|\.gitignore|\.gitattributes|\.editorconfig|\.npmignore|\.prettierrc[\w.]*|\.eslintrc[\w.]*)$/;
const TOOL_CONFIG =
  /(^|\/)[\w-]+\.config\.[cm]?[jt]s$|(^|\/)\.[\w-]+rc\.[cm]?js$|(^|\/)(Gruntfile|Gulpfile|gulpfile)\.js$|(^|\/)build\.rs$/;

/**
 * The kind of a repository path.
 *
 * @example
 * pathKind("src/auth/login.ts") // "source"
 * pathKind("test/auth/login.test.ts") // "test"
 * pathKind("docs/guide.md") // "docs"
 */
export function pathKind(path: string): PathKind {
  const known = KINDS.get(path);
  if (known !== undefined) return known;
  // Bounded: a long-lived worker plans many trees; a cleared memo only costs the regexes again.
  if (KINDS.size >= MAX_MEMO_PATHS) KINDS.clear();
  const kind = kindOf(path);
  KINDS.set(path, kind);
  return kind;
}

/**
 * Memo of {@link pathKind}: the ranking and the test pairing ask it of the same paths again and
 * again (on a 4,400-file tree ~0.6 s of a plan's CPU went to these regexes). A pure function of
 * the path, so the memo never changes an answer.
 */
const KINDS = new Map<string, PathKind>();
const MAX_MEMO_PATHS = 100_000;

function kindOf(path: string): PathKind {
  if (GENERATED.test(path)) return "generated";
  if (CI.test(path)) return "other";
  if (PROJECT.test(path)) return "project";
  if (CHANGELOG.test(path)) return "changelog";
  if (TEST_DIRS.test(path) || TEST_FILES.test(path)) return "test";
  if (BENCH.test(path)) return "bench";
  if (EXAMPLE.test(path)) return "example";
  if (DOC_DIRS.test(path) || DOC_EXT.test(path)) return "docs";
  if (TOOL_CONFIG.test(path)) return "config";
  if (languageOf(path) !== null || MARKUP.test(path)) return "source";
  if (CONFIG.test(path)) return "config";
  return "other";
}

/**
 * True for test files (listed under tests, never as files to change).
 *
 * @example
 * isTestPath("pkg/mux_test.go") // true
 */
export function isTestPath(path: string): boolean {
  return pathKind(path) === "test";
}

/**
 * True for generated, vendored or lock files, which a plan never edits by hand.
 *
 * @example
 * isGeneratedPath("dist/index.js") // true
 */
export function isGeneratedPath(path: string): boolean {
  return GENERATED.test(path);
}

/**
 * The language family of a source path, or null.
 *
 * @example
 * languageOf("lib/sinatra/base.rb") // "rb"
 */
export function languageOf(path: string): Language | null {
  const dot = path.lastIndexOf(".");
  if (dot === -1 || dot < path.lastIndexOf("/")) return null;
  return LANGUAGES[path.slice(dot + 1).toLowerCase()] ?? null;
}

/** File names that stand for their folder's module (`index.ts`, `mod.rs`, `__init__.py`). */
const MODULE_FILE = /^(index|mod|__init__)$/;

/**
 * Whether the file is its folder's module, named by the folder (`src/middleware/logger/index.ts`
 * is the logger middleware).
 *
 * @example
 * isModuleFile("src/middleware/logger/index.ts") // true
 */
export function isModuleFile(path: string): boolean {
  return MODULE_FILE.test(fileStem(path));
}

/** The name a file's module goes by: its folder's for an index file, else its own. */
export function moduleName(path: string): string {
  const folder = dirOf(path).split("/").pop() ?? "";
  return isModuleFile(path) && folder !== "" ? folder : fileStem(path);
}

/**
 * Whether a word the user wrote names the file's module or one of its folders (`cors` for
 * `src/middleware/cors/index.ts`, `billing` for `src/billing/tax.ts`).
 *
 * @example
 * namesModule("src/middleware/trailing-slash/index.ts", "trailing-slash") // true
 */
export function namesModule(path: string, word: string): boolean {
  const folders = dirOf(path).split("/");
  return [moduleName(path), ...folders].some((segment) => sameName(segment, word));
}

/** A path segment and a word are the same name (`basic-auth`, `basicAuth`; `caches`, `cache`). */
export function sameName(segment: string, word: string): boolean {
  const a = splitIdentifier(segment).join("");
  const b = splitIdentifier(word).join("");
  return a !== "" && (a === b || stem(a) === stem(b));
}

/** The file name without its folder and extension(s): `src/a/index.d.ts` → `index`. */
export function fileStem(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const first = name.indexOf(".", 1);
  return first === -1 ? name : name.slice(0, first);
}

/** The folder of a path ("" at the root). */
export function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "" : path.slice(0, slash);
}

/** The extension with its dot, or "" (`.d.ts` for declaration files). */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name.endsWith(".d.ts")) return ".d.ts";
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot);
}

/** How strongly a term names a part of a path. */
export interface PathMatch {
  /** 1 for a whole word of the file name or a folder, less for a word it starts. */
  strength: number;
  /** The file's own name, or one of its folders. */
  where: "file" | "folder";
}

/** A word of a path: lower-case, with its stem. */
interface PathWord {
  word: string;
  stem: string;
}

function wordsOf(segment: string): PathWord[] {
  const parts = splitIdentifier(segment);
  const words = parts.map((w) => ({ word: w, stem: stem(w) }));
  // The segment as one word too: `url_format` is the identifier `URLFormat`, `hugo_sites`
  // is `hugoSites`.
  if (parts.length > 1) {
    const joined = parts.join("");
    words.push({ word: joined, stem: stem(joined) });
  }
  return words;
}

/**
 * How strongly `term` (a lower-case stem, see task/terms.ts) names the path's file or one of its
 * folders: a whole word (`wsgi` → `_transports/wsgi.py`, `warn` → `lib/warnings.js`,
 * `urlformat` → `middleware/url_format.go`) is 1; the start of a longer word
 * (`journald` → `journaldencoder.go`) is 0.5; anything else is null. The file's own name wins
 * over its folders.
 *
 * @example
 * matchPath("migr", "db/migrations/001_init.sql") // { strength: 1, where: "folder" }
 * matchPath("rate", "src/generate.ts") // null
 */
export function matchPath(term: string, path: string): PathMatch | null {
  const segments = path.split("/");
  const file = segments.pop() ?? "";
  // An `index.ts`, `mod.rs` or `__init__.py` is its folder's module: the folder is its name.
  const name = isModuleFile(path) && segments.length > 0 ? segments.pop()! : fileStem(file);
  const inFile = bestWordMatch(term, wordsOf(name));
  if (inFile >= 1) return { strength: inFile, where: "file" };
  let inFolder = 0;
  for (const segment of segments)
    inFolder = Math.max(inFolder, bestWordMatch(term, wordsOf(segment)));
  if (inFile > 0 && inFile >= inFolder) return { strength: inFile, where: "file" };
  if (inFolder > 0) return { strength: inFolder, where: "folder" };
  return null;
}

function bestWordMatch(term: string, words: readonly PathWord[]): number {
  let best = 0;
  for (const { word, stem: s } of words) {
    if (word === term || s === term || (word.startsWith(term) && word.length - term.length <= 2))
      return 1;
    if (term.length >= 4 && word.startsWith(term)) best = Math.max(best, 0.5);
  }
  return best;
}
