/**
 * Which commits make benchmark tasks, and what a task's gold and area hint are. Pure: paths and
 * subjects in, verdicts out; build-tasks.ts applies it to git history. The rules are listed in
 * README.md beside this file, which must say the same.
 */

/** What a changed path is, for the gold: only `source` files count. */
export type PathKind =
  | "source"
  | "test"
  | "doc"
  | "changelog"
  | "lockfile"
  | "generated"
  | "ci"
  | "other";

/** Extensions of source code in the languages the benchmark covers (and their neighbours). */
const SOURCE_EXTENSIONS: Record<string, string> = {
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JavaScript",
  ts: "TypeScript",
  tsx: "TypeScript",
  mts: "TypeScript",
  cts: "TypeScript",
  py: "Python",
  pyi: "Python",
  go: "Go",
  rs: "Rust",
  rb: "Ruby",
  java: "Java",
  kt: "Kotlin",
  scala: "Scala",
  c: "C",
  h: "C",
  cc: "C++",
  cpp: "C++",
  hpp: "C++",
  cs: "C#",
  php: "PHP",
  swift: "Swift",
  vue: "JavaScript",
  svelte: "JavaScript",
};

/**
 * Files that are part of a code change although not in a programming language: templates,
 * styles, SQL, shell scripts, schemas. They count as source (a planner must find them too),
 * but a task's language is taken from the files above when it has any.
 */
const MARKUP_EXTENSIONS: Record<string, string> = {
  sql: "SQL",
  html: "HTML",
  htm: "HTML",
  erb: "HTML",
  liquid: "HTML",
  tmpl: "HTML",
  gotmpl: "HTML",
  mustache: "HTML",
  hbs: "HTML",
  css: "CSS",
  scss: "CSS",
  sass: "CSS",
  less: "CSS",
  sh: "Shell",
  bash: "Shell",
  proto: "Protobuf",
  graphql: "GraphQL",
};

const LOCKFILES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lockb",
  "Cargo.lock",
  "poetry.lock",
  "uv.lock",
  "Pipfile.lock",
  "Gemfile.lock",
  "go.sum",
  "composer.lock",
]);

const TEST_FOLDER =
  /(^|\/)(tests?|__tests__|specs?|testdata|testing|test-d|fixtures|__fixtures__|__mocks__|__snapshots__|e2e|benches|benchmarks?|integration-tests?)\/|(^|\/)features\/(step_definitions|support)(\/|\.rb$)/i;
const TEST_FILE =
  /(_test\.go|[-_.]tests?\.[a-z]+|\.(test|spec|test-d)\.[a-z]+|(^|\/)test_[^/]*\.py|_test\.py|(^|\/)conftest\.py|_(spec|test)\.rb|(Tests?|IT)\.(java|kt)|(^|\/)[^/]*(integrationtest|testutils?|testhelpers?)[^/]*|(^|\/)tests?\.rs|\.snap)$/;
const DOC_FOLDER = /(^|\/)(docs?|site|website|_?examples?|samples?|man)\//i;
const DOC_FILE =
  /(\.(md|mdx|markdown|rst|txt|adoc|asciidoc)$)|(^|\/)(README|LICENSE|LICENCE|CONTRIBUTING|AUTHORS|CODE_OF_CONDUCT|SECURITY|NOTICE)([.-][^/]*)?$/i;
const CHANGELOG = /(^|\/)(changelog|changes|history|news|releases?)([._-][^/]*)?$/i;
const GENERATED =
  /((^|\/)(vendor|vendored|third_party|node_modules|dist|build|out|target|generated|gen|single_include|singleheader)\/)|\.min\.(js|css)$|[._]generated\.[a-z]+$|\.pb(\.gw)?\.go$|(^|\/)zz_generated[^/]*$|_pb2(_grpc)?\.py$|(^|\/)[^/]*amalgamated?[^/]*$/i;
/** Tool configuration and build scripts: code, but not the application's. */
const TOOL_CONFIG =
  /(^|\/)(\.?[\w-]*rc\.[cm]?[jt]s|[\w-]+\.config\.[cm]?[jt]s|[Gg]runtfile\.js|[Gg]ulpfile\.js|setup\.py|noxfile\.py|build\.rs)$/;
const CI =
  /^(\.github|\.circleci|\.buildkite|\.gitlab|\.azure-pipelines)\/|(^|\/)(\.travis\.yml|appveyor\.yml|\.gitlab-ci\.yml|azure-pipelines\.ya?ml|Jenkinsfile|\.cirrus\.yml)$/;

/**
 * Classifies one changed path. Order matters: a lockfile or CI file is never source, a test
 * is never gold even when it is code, and vendored or generated code is not the task's.
 *
 * @example
 * classifyPath("lib/command.js"); // "source"
 * classifyPath("tests/test_client.py"); // "test"
 * classifyPath("CHANGELOG.md"); // "changelog"
 */
export function classifyPath(path: string): PathKind {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (LOCKFILES.has(name)) return "lockfile";
  if (CI.test(path)) return "ci";
  if (CHANGELOG.test(path)) return "changelog";
  if (GENERATED.test(path)) return "generated";
  if (TOOL_CONFIG.test(path)) return "other";
  if (TEST_FOLDER.test(path) || TEST_FILE.test(path)) return "test";
  if (DOC_FOLDER.test(path) || DOC_FILE.test(path)) return "doc";
  return languageOfPath(path) === null ? "other" : "source";
}

/**
 * The language of a source path, by extension, or null for anything else.
 *
 * @example
 * languageOfPath("src/lib.rs"); // "Rust"
 */
export function languageOfPath(path: string): string | null {
  const extension = extensionOf(path);
  return SOURCE_EXTENSIONS[extension] ?? MARKUP_EXTENSIONS[extension] ?? null;
}

function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}

/**
 * The most common programming language among `paths` (ties: alphabetical), else the most
 * common markup or template language, else "unknown".
 */
export function languageOf(paths: readonly string[]): string {
  const code = paths.filter((path) => SOURCE_EXTENSIONS[extensionOf(path)] !== undefined);
  const counts = new Map<string, number>();
  for (const path of code.length > 0 ? code : paths) {
    const language = languageOfPath(path);
    if (language !== null) counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return ranked[0]?.[0] ?? "unknown";
}

/** Conventional-commit types that describe a code change a planner could be asked for. */
const TASK_TYPES = new Set(["feat", "feature", "fix", "bugfix", "perf", "refactor", "security"]);
/** Conventional-commit types that are not such a task (a commit of one is left out). */
const NON_TASK_TYPES = new Set([
  "chore",
  "docs",
  "doc",
  "test",
  "tests",
  "build",
  "ci",
  "style",
  "revert",
  "deps",
  "release",
  "typo",
  "wip",
  "lint",
]);

/** Prefixes that say what kind of change it is, not where: no area. */
const NOT_AN_AREA = new Set([
  "bug",
  "bugfix",
  "hotfix",
  "fix",
  "feat",
  "feature",
  "enhancement",
  "improve",
  "improvement",
  "perf",
  "security",
  "breaking",
  "minor",
  "major",
  "patch",
  "refactor",
]);

/** Words that mark a commit as housekeeping, not a task. */
const HOUSEKEEPING =
  /\b(merge|merged|revert|reverts|reverting|reverted|release|released|bump|bumped|bumps|wip|typos?|spelling|misspell\w*|whitespace|lint|linter|linting|formatting|reformat\w*|prettier|rustfmt|gofmt|clippy|rubocop|black|changelog|readme|dependabot|renovate|copyright|licen[cs]e|docstrings?|jsdoc|javadoc|pre-commit|ruff|eslint|tslint|tselint|mypy|flake8|pylint|docs?|documentation|document|documented|documenting)\b/i;
const VERSION_LIKE = /^v?\d+(\.\d+)+\b|\bv\d+\.\d+(\.\d+)?\b/;
const NON_TASK_START =
  /^upgrade\b|^(update|pin|unpin)\s+(the\s+)?(dependencies|dependency|deps|\S+\s+(to|from)\s+v?\d)|^(prepare|cut|tag)\b|^update history to reflect|^apply suggestions? from code review|^(fix|fixed|fixes|update|updated|improve|add|added)\s+(the\s+|a\s+|some\s+|more\s+)?(tests?|specs?|ci|build|docs?|documentation|examples?|benchmarks?)\b|^(code\s+)?comments?\b|^clarify\b|^(address|addressed)\s+(review|feedback|comments)|^(minor|small|misc|various|tweaks?|refinements?|cleanups?|changes|updates|fixes|improvements)\b|^(fix|fixed|update|updated|improve|add|added|clarify|tweak)\s+(code\s+|doc\s+)?comments?\b/i;
const MIN_WORDS = 3;
const MAX_SUBJECT_CHARS = 110;

/** A commit subject split into the task text and the scope it names, if any. */
export interface TaskSubject {
  /** The bare task: the subject without its `type(scope):` prefix and reference tags. */
  task: string;
  /** `scope` of `fix(scope): …`, or the `pkg` of a Go-style `pkg: …` subject. */
  scope: string | null;
}

/**
 * Reads a commit subject as a task, or says why it is not one. Trailing references
 * (`(#123)`, `[ci skip]`) go; a conventional prefix goes and its scope is kept; a Go-style
 * `package: message` prefix counts as a scope.
 *
 * @example
 * taskFromSubject("fix(router): keep the trailing slash (#42)");
 * // { ok: true, value: { task: "keep the trailing slash", scope: "router" } }
 * taskFromSubject("Bump v6.0.0"); // { ok: false, reason: "housekeeping" }
 */
export function taskFromSubject(
  subject: string,
): { ok: true; value: TaskSubject } | { ok: false; reason: string } {
  let text = subject
    .replace(/\s*\[(ci skip|skip ci|no ci)\]\s*/gi, " ")
    .replace(/(\s*\((#\d+|[\w.-]+\/[\w.-]+#\d+)([,\s]+#\d+)*\))+\s*$/, "")
    .replace(/\s+(\(|)(closes|fixes|fix|resolves|refs?)\s+#\d+\)?\s*$/i, "")
    .replace(/^(fix(es)?|closes|refs?)?\s*#\d+:?\s+/i, "")
    .replace(/^(\[[^\]]{1,30}\]\s*|[-*]\s+)/, "")
    .trim();
  let scope: string | null = null;
  const conventional = /^(?<type>[a-z]+)(?:\((?<scope>[^)]{1,60})\))?!?:\s*(?<rest>.+)$/i.exec(
    text,
  );
  const type = conventional?.groups?.type?.toLowerCase();
  if (conventional?.groups && type !== undefined && NON_TASK_TYPES.has(type)) {
    return { ok: false, reason: `conventional type ${type}` };
  }
  if (conventional?.groups && type !== undefined && TASK_TYPES.has(type)) {
    scope = conventional.groups.scope?.trim() || null;
    text = conventional.groups.rest!.trim();
  } else {
    const goStyle = /^(?<scope>[A-Za-z0-9_./-]+(?:,\s?[A-Za-z0-9_./-]+)*):\s+(?<rest>.+)$/.exec(
      text,
    );
    if (goStyle?.groups) {
      scope = goStyle.groups.scope!;
      text = goStyle.groups.rest!.trim();
    }
  }
  if (scope !== null && HOUSEKEEPING.test(scope)) return { ok: false, reason: "housekeeping" };
  if (scope !== null && NOT_AN_AREA.has(scope.toLowerCase())) scope = null;
  if (HOUSEKEEPING.test(text) || VERSION_LIKE.test(text)) {
    return { ok: false, reason: "housekeeping" };
  }
  if (NON_TASK_START.test(text)) return { ok: false, reason: "not a code task" };
  if (text.split(/\s+/).filter((w) => /[A-Za-z]/.test(w)).length < MIN_WORDS) {
    return { ok: false, reason: `fewer than ${MIN_WORDS} words` };
  }
  // A longer subject, or one with a list in it, is a squashed commit body, not a task.
  if (text.length > MAX_SUBJECT_CHARS || text.includes(" * ")) {
    return { ok: false, reason: "subject too long" };
  }
  return { ok: true, value: { task: text, scope } };
}

/** Where the area hint came from (README.md "Area hint"). */
export type AreaSource = "scope" | "folder" | "root";

/** The text that stands for "the files are at the top level" in an area hint. */
export const ROOT_AREA = "repository root";

/**
 * The area hint of a task: the subject's scope when it has one, else the nearest folder that
 * holds every gold file, else {@link ROOT_AREA}.
 *
 * @example
 * areaHint(null, ["src/auth/login.ts", "src/auth/session.ts"]); // { area: "src/auth", source: "folder" }
 * areaHint("router", ["mux.go"]); // { area: "router", source: "scope" }
 */
export function areaHint(
  scope: string | null,
  gold: readonly string[],
): { area: string; source: AreaSource } {
  if (scope !== null) return { area: scope, source: "scope" };
  const folder = commonFolder(gold);
  return folder === "" ? { area: ROOT_AREA, source: "root" } : { area: folder, source: "folder" };
}

/**
 * The deepest folder that contains every path ("" when that is the root).
 *
 * @example
 * commonFolder(["a/b/c.ts", "a/d.ts"]); // "a"
 */
export function commonFolder(paths: readonly string[]): string {
  if (paths.length === 0) return "";
  let shared = paths[0]!.split("/").slice(0, -1);
  for (const path of paths.slice(1)) {
    const parts = path.split("/").slice(0, -1);
    let i = 0;
    while (i < shared.length && i < parts.length && shared[i] === parts[i]) i++;
    shared = shared.slice(0, i);
  }
  return shared.join("/");
}

/** The prompt of one variant of a task. */
export function taskPrompt(task: { subject: string; area: string }, withArea: boolean): string {
  return withArea ? `${task.subject} (area: ${task.area})` : task.subject;
}
