import { describe, expect, it } from "vitest";
import { definitionSearch } from "../../src/planner/models/offline/repository/definitions.ts";
import { searchPattern } from "../../src/planner/models/offline/task/terms.ts";
import { compileLinePattern } from "../../src/planner/tools/line-pattern.ts";
import { matchingLines } from "../../src/planner/tools/line-scan.ts";
import { ScanBudget, WORK_LIMIT } from "../../src/planner/tools/scan-budget.ts";
import {
  JS_MAX_LINE_CHARS,
  toJavaScript,
  trustedSliceSearch,
} from "../../src/planner/tools/trusted-pattern.ts";

/**
 * The offline planner's Grep patterns run on V8's RegExp where it answers exactly as RE2
 * (trusted-pattern.ts, issue 31's plan time). "Exactly" is what keeps the plan byte for byte the
 * same, so each pattern shape the planner writes is run through both engines on lines chosen
 * where the two engines' readings differ: Unicode spaces (`\s`), a `\r` inside a line (`.`,
 * the `m` flag), surrogate pairs (one code point or two units), lines at the length cut, `]`
 * first in a class, braces that are no repeat.
 */

const PATTERNS = [
  searchPattern({ text: "retry" } as never),
  searchPattern({ text: "maxAge", spellings: ["maxAge", "max_age", "MAX_AGE"] } as never),
  definitionSearch(["cookie", "maxAge"]),
  definitionSearch(["retry"]),
  definitionSearch(["JSONObject", "fastjson"]),
  String.raw`\b(?:import|export)\b.*\bfrom\s*["'][^"']*(?:cookie|session)|\b(?:require|import)\s*\(\s*["'][^"']*(?:cookie|session)`,
  String.raw`^\s*(?:pub\s+)?fn\s+retry\b`,
  String.raw`retry.{2}x|[]a]retry|retry{2}|a{,2}retry|retry\S+$`,
  String.raw`(?:^|[^\w$])(?:retry|Retry)(?:[^\w$]|$)`,
];

const LINES = [
  "",
  "retry",
  "  retry = 3;",
  "const maxAge = 1\r",
  "\u00a0retry \u2028 x",
  "retry\u00a0=\u00a0function () {",
  "x\u00a0retry\u00a0=\u00a0function () {",
  "\u00a0fn\u00a0retry",
  "\tfn\u000bretry",
  "import { cookie } from './cookie'",
  "const x = require( 'session' )",
  "export const cookie = (maxAge: number) => {",
  "pub fn retry(x: u32) {",
  "\tfn retry",
  "let s = '😀retry😀'; // surrogate pair",
  "retryyx retry😀x retrXx retr\rx",
  "]retry aretry a{,2}retry",
  "retry\u00a0\u00a0",
  "def max_age(self):",
  "  MAX_AGE: int = 3",
  "class JSONObject extends fastjson {",
  "  public static JSONObject parse(String text) {",
  "x".repeat(JS_MAX_LINE_CHARS - 6) + " retry",
  "x".repeat(JS_MAX_LINE_CHARS + 1) + " retry",
  "\u2028retry",
  "retry\u2029",
];

function engines(pattern: string) {
  const plain = compileLinePattern(pattern, { ignoreCase: false });
  const trusted = compileLinePattern(pattern, { ignoreCase: false, trusted: true });
  if (!plain.ok || !trusted.ok) throw new Error(`pattern did not compile: ${pattern}`);
  return { plain: plain.value, trusted: trusted.value };
}

describe("the offline planner's patterns on V8's RegExp answer as RE2 does", () => {
  it("translates each of the planner's pattern shapes (none falls back to RE2 alone)", () => {
    for (const pattern of PATTERNS.slice(0, 7)) expect(toJavaScript(pattern)).not.toBeNull();
    expect(toJavaScript("(?i)retry")).toBeNull();
    expect(toJavaScript(String.raw`\pL+`)).toBeNull();
    expect(toJavaScript("[[:alpha:]]")).toBeNull();
    expect(toJavaScript("café")).toBeNull();
  });

  it("matches the same lines, one line at a time", () => {
    for (const pattern of PATTERNS) {
      const { plain, trusted } = engines(pattern);
      for (const line of LINES)
        expect({ pattern, line, match: trusted.testLine(line) }).toEqual({
          pattern,
          line,
          match: plain.testLine(line),
        });
    }
  });

  it("matches the same lines when a run of lines is searched at once", () => {
    const text = LINES.join("\n");
    const crlf = LINES.join("\r\n");
    // What the fast search answers for itself: no surrogate, no line past the cut.
    const plainLines = LINES.filter(
      (l) => !/[\uD800-\uDFFF]/.test(l) && l.length <= JS_MAX_LINE_CHARS,
    );
    for (const pattern of PATTERNS) {
      const { plain, trusted } = engines(pattern);
      for (const subject of [text, crlf, plainLines.join("\n"), plainLines.join("\r\n")]) {
        const expected = subject
          .split("\n")
          .flatMap((line, i) => (plain.testLine(line) ? [i] : []));
        const searched = trusted.searchLines(subject);
        // A slice with a surrogate or a line past the cut is left to the line tests.
        if (searched !== null)
          expect({ pattern, searched }).toEqual({ pattern, searched: expected });
        expect(plain.searchLines(subject)).toBeNull();
      }
    }
    for (const pattern of PATTERNS.slice(0, 7))
      expect(trustedSliceSearch(pattern)?.(plainLines.join("\n"))).not.toBeNull();
  });

  it("finds the same lines in a whole file through Grep's line scan", async () => {
    const file = Array.from({ length: 400 }, (_, i) => LINES[i % LINES.length]).join("\n");
    for (const pattern of PATTERNS) {
      const { plain, trusted } = engines(pattern);
      const a = await matchingLines(file, plain, new ScanBudget(WORK_LIMIT));
      const b = await matchingLines(file, trusted, new ScanBudget(WORK_LIMIT));
      expect(b).toEqual(a);
    }
  });
});
