import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS_DIR } from "./support.ts";

/**
 * A test run leaves the clone as it found it: tests write only to temporary folders. The
 * README's screenshots in docs/ are made by `npm run screenshots` (scripts/screenshots.ts),
 * never by a test; before issue 26 every `npm test` rewrote them, so a clone was dirty after
 * testing. These checks read the test sources, so they fail before any such test runs.
 */

const ROOT = resolve(import.meta.dirname, "..", "..");
const TEST_DIR = join(ROOT, "test");
const THIS_FILE = relative(ROOT, import.meta.filename);

function testSources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "fixtures" && entry.name !== "node_modules")
        files.push(...testSources(path));
    } else if (entry.name.endsWith(".ts")) {
      files.push(relative(ROOT, path));
    }
  }
  return files;
}

/** The test sources whose text matches `pattern` (this file excepted: it names them). */
function sourcesMatching(pattern: RegExp): string[] {
  return testSources(TEST_DIR)
    .filter((file) => file !== THIS_FILE)
    .filter((file) => pattern.test(readFileSync(join(ROOT, file), "utf8")));
}

describe("tests write only to temporary folders", () => {
  it("no test source names the repository's docs/ folder as a path: no docs/screenshots, no ../docs", () => {
    expect(sourcesMatching(/docs[/\\]screenshots|["'`]screenshots["'`]/)).toEqual([]);
    // Climbing out of test/ into docs/ ("..", "docs" or "../docs"), or joining the root onto it.
    // A fixture repository's own docs/ (join(repo, "docs", …)) is a temporary folder: allowed.
    const intoDocs =
      /["'`]\.\.["'`]\s*,\s*["'`]docs["'`]|["'`](?:\.\.\/)+docs\b|\b(?:ROOT|PACKAGE_ROOT)\s*,\s*["'`]docs\b/;
    expect(sourcesMatching(intoDocs)).toEqual([]);
  });

  it("screenshots are saved only through support.ts's screenshot(), into ARTIFACTS_DIR", () => {
    const saving = sourcesMatching(/\.screenshot\(\s*\{[^}]*\bpath\s*[:,}]/s);
    expect(saving).toEqual([join("test", "browser", "support.ts")]);
  });

  it("ARTIFACTS_DIR is outside the repository", () => {
    expect(`${resolve(ARTIFACTS_DIR)}${sep}`.startsWith(`${ROOT}${sep}`)).toBe(false);
  });
});
