import { describe, expect, it } from "vitest";
import {
  isLoneSurrogateAt,
  manifestSkips,
  pathNameProblem,
  printablePath,
} from "../../../src/protocol/index.ts";

/**
 * The path rules both ends share, where UTF-16 can say what a file name cannot (issue 22,
 * finding 9): a lone surrogate is no character, and a shown path is not a stored one.
 */

const hasLoneSurrogate = (text: string) =>
  Array.from({ length: text.length }, (_, i) => isLoneSurrogateAt(text, i)).some(Boolean);

describe("paths with surrogates", () => {
  it("refuses to store a name holding a lone surrogate, and stores a surrogate pair", () => {
    expect(pathNameProblem("a\ud800.ts")).toBe("invalid_name");
    expect(pathNameProblem("a\udc00.ts")).toBe("invalid_name");
    expect(pathNameProblem("\udc00\ud800")).toBe("invalid_name");
    expect(pathNameProblem("emoji-\ud83d\ude00.ts")).toBeNull();
  });

  it("shows a lone surrogate escaped, and never shortens a path between a pair's halves", () => {
    expect(printablePath("a\ud800b")).toBe("a\\ud800b");
    for (let prefix = 290; prefix <= 300; prefix++) {
      const shown = printablePath(`${"p".repeat(prefix)}${"\ud83d\ude00".repeat(10)}`);
      expect(hasLoneSurrogate(shown), `prefix ${prefix}`).toBe(false);
      expect(shown.length).toBeLessThanOrEqual(301);
      expect(shown.endsWith("…")).toBe(true);
    }
    // Unchanged when nothing needs escaping or shortening: no copy is made.
    const plain = "src/app.ts";
    expect(printablePath(plain)).toBe(plain);
  });
});

describe("the skipped list a manifest carries", () => {
  it("lists a shown path once, first by reason, and never one that is a stored file", () => {
    expect(
      manifestSkips(
        ["a.ts"],
        [
          { path: "n\ufffd", reason: "invalid_name" },
          { path: "a.ts", reason: "too_large" },
          { path: "big", reason: "too_large" },
          { path: "n\ufffd", reason: "invalid_name" },
          { path: "big", reason: "binary" },
        ],
      ),
    ).toEqual([
      { path: "big", reason: "binary" },
      { path: "n\ufffd", reason: "invalid_name" },
    ]);
  });
});
