import { dirOf, fileStem, isModuleFile, isTestPath, languageOf, moduleName } from "./paths.ts";

/**
 * Which tests are about which code, read from paths alone. Pure. The test beside a file comes
 * first (`index.test.ts` beside `index.ts`, `__tests__/login.test.ts`), then the conventional
 * one named after its module (`tests/test_config.py` for `src/flask/config.py`, `LoginTest`
 * for `Login.java`, `logger.test.ts` for `middleware/logger/index.ts`). An `index.test.ts`
 * elsewhere tests some other index, and fixtures, support helpers and mocks test nothing:
 * they are never "the tests of" a file.
 */

/** How surely a test is about a file: beside it, named after its module, or not at all. */
export type Pairing = 0 | 1 | 2 | 3;

/** A file name that says it is a test. */
const TEST_MARK =
  /(\.|_|-)(test|spec|tests)\.[a-z]+$|^test[_-][^/]+$|(Test|Tests|IT|Spec)\.[a-z]+$|_spec\.rb$/;

/**
 * Folders and files that serve tests without being tests of anything: fixture folders anywhere,
 * support folders inside a test tree (`test/support/`, `tests/helpers/` — never `src/helper/`),
 * and helper or fixture files by name.
 */
const SUPPORT =
  /(^|\/)(fixtures?|__fixtures__|testdata|test-data|test_data|test_apps?|__mocks__|__snapshots__)\/|(^|\/)(tests?|specs?|__tests__|e2e|testing)\/(?:[^/]+\/)*(support|helpers?|mocks?|stubs?|utils?|baselines?|static|assets|snapshots)\/|(^|\/)(conftest\.py|[\w-]*helpers?\.\w+|[\w-]*fixtures?\.\w+)$/i;

/**
 * Whether a test path is support for tests (a fixture, a helper, a mock) rather than a test.
 *
 * @example
 * isTestSupport("test/support/memory-port.ts") // true
 * isTestSupport("src/middleware/logger/index.test.ts") // false
 */
export function isTestSupport(test: string): boolean {
  return isTestPath(test) && SUPPORT.test(test);
}

/**
 * The name a test file is about, lower-case: `login` for `login.test.ts`, `test_login.py`,
 * `login_test.go`, `LoginTest.java`, `login_spec.rb`; null when the path is not a test.
 *
 * @example
 * testSubject("src/test/java/org/x/ParserTest.java") // "parser"
 */
export function testSubject(test: string): string | null {
  if (!isTestPath(test) || languageOf(test) === null) return null;
  const file = test.slice(test.lastIndexOf("/") + 1);
  // A test says what it tests in its name (`login.test.ts`, `test_login.py`, `LoginTest.java`);
  // a file in a test folder without that mark is a fixture app or a helper (`test_apps/app.py`)
  // — except where the language names integration tests freely (Rust's `tests/span.rs`) or
  // the folder itself marks them (`__tests__/`).
  const marked =
    TEST_MARK.test(file) || /(^|\/)__tests__\//.test(test) || /(^|\/)tests\/[^/]+\.rs$/.test(test);
  if (!marked) return null;
  const name = file.replace(/\.[A-Za-z0-9]+$/, "");
  const subject = name
    .replace(/\.(test|spec|tests)$/i, "")
    .replace(/[-_](test|spec|tests)$/i, "")
    .replace(/^test[-_]/i, "")
    .replace(/(Test|Tests|IT|Spec)$/, "")
    .replace(/\.[a-z]+$/i, "");
  return subject === "" ? null : subject.toLowerCase();
}

/**
 * How surely `test` is about `source`: 3 beside it (same folder or its `__tests__`, same
 * name), 2 named after its module elsewhere (`tests/test_config.py`, a mirrored
 * `test/middleware/logger/index.test.ts`) or after its folder and name together
 * (`tests/test_json_tag.py`), 0 otherwise — support files pair with nothing.
 *
 * @example
 * testPairing("src/middleware/logger/index.test.ts", "src/middleware/logger/index.ts") // 3
 * testPairing("tests/test_config.py", "src/flask/config.py") // 2
 * testPairing("tests/test_json_tag.py", "src/flask/json/tag.py") // 2
 * testPairing("runtime-tests/bun/index.test.tsx", "src/middleware/cache/index.ts") // 0
 */
export function testPairing(test: string, source: string): Pairing {
  if (isTestSupport(test)) return 0;
  const subject = testSubject(test);
  if (subject === null) return 0;
  const name = fileStem(source).toLowerCase();
  const module = moduleName(source).toLowerCase();
  const here = dirOf(source);
  const there = dirOf(test);
  if (
    subject === name &&
    (there === here || there === `${here}/__tests__` || there === `${here}/tests`)
  )
    return 3;
  if (isModuleFile(source)) {
    // `index.test.ts` elsewhere is some other index's test, unless its folder is this module's.
    if (subject === module) return 2;
    return subject === name && there.split("/").pop()?.toLowerCase() === module ? 2 : 0;
  }
  if (subject === name) return 2;
  // A test named after the feature, its folder and its file together (`test_json_tag.py` for
  // `json/tag.py`, `CookieUtilsTest` for `cookie/utils.ts`): a namesake as sure as the file's.
  const folder = here.split("/").pop()?.toLowerCase() ?? "";
  return folder !== "" && squash(subject) === squash(folder + name) ? 2 : 0;
}

/** A name without its separators: `json_tag`, `json-tag` and `jsontag` are one name. */
function squash(name: string): string {
  return name.replace(/[-_.]/g, "");
}

/**
 * Glob alternatives for the tests of `source`: beside it (its folder, `__tests__/`), and named
 * after its module anywhere — for one Glob call that pairs every top candidate with its tests.
 *
 * @example
 * testGlobs("src/auth/login.ts") // ["src/auth/login.{test,spec}.*", "src/auth/__tests__/login.*", "**\/login.test.*", …]
 */
export function testGlobs(source: string): string[] {
  const dir = dirOf(source);
  const here = dir === "" ? "" : `${dir}/`;
  const name = fileStem(source);
  const base = moduleName(source);
  const cap = base.charAt(0).toUpperCase() + base.slice(1);
  const globs = [
    `${here}${name}.{test,spec}.*`,
    `${here}__tests__/${name}.*`,
    `**/${base}.test.*`,
    `**/${base}.spec.*`,
    `**/${base}_test.*`,
    `**/test_${base}.*`,
  ];
  const folder = dir.split("/").pop() ?? "";
  // The test named after the feature (`tests/test_json_tag.py` for `json/tag.py`).
  if (folder !== "" && !isModuleFile(source)) globs.push(`**/test_${folder}_${name}.*`);
  if (languageOf(source) === "java") globs.push(`**/${cap}Test.*`, `**/${cap}Tests.*`);
  if (languageOf(source) === "rb") globs.push(`**/${base}_spec.*`);
  return globs;
}

/** A test file as coverage reads it: its path and the names it defines (its cases). */
export interface TestDefinitions {
  path: string;
  names: readonly string[];
}

/**
 * The tests that exercise `source` though neither its place nor its name says so: a test file
 * named after a class the source defines (`tests/test_request.py` for `Request` in
 * `wrappers.py`), or one with a case named after a function or property the source defines
 * (`test_max_content_length` for `max_content_length`). Only names of at least
 * {@link MIN_COVERED_NAME} characters count: `get` or `run` would pair everything.
 *
 * @example
 * coveringTests(["Request", "max_content_length"], [{ path: "tests/test_request.py", names: ["test_limit_config"] }])
 * // ["tests/test_request.py"]
 */
export function coveringTests(
  defined: readonly string[],
  tests: readonly TestDefinitions[],
): string[] {
  const names = defined.map(squashLower).filter((n) => n.length >= MIN_COVERED_NAME);
  if (names.length === 0) return [];
  const out: string[] = [];
  for (const test of tests) {
    if (isTestSupport(test.path)) continue;
    const subject = testSubject(test.path);
    if (subject === null) continue;
    const cases = test.names.map(squashLower);
    if (
      names.includes(squash(subject)) ||
      cases.some((c) => names.some((n) => c === `test${n}` || c.startsWith(`test${n}`)))
    )
      out.push(test.path);
  }
  return out;
}

/** Shortest defined name a test's name or case is matched against. */
const MIN_COVERED_NAME = 6;

function squashLower(name: string): string {
  return squash(name.toLowerCase());
}
