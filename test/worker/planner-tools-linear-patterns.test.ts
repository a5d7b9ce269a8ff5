import fc from "fast-check";
import picomatch from "picomatch/posix";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { compileGlob } from "../../src/planner/tools/glob-pattern.ts";
import { findTool, Workspace } from "../../src/planner/tools/index.ts";
import {
  compileLinePattern,
  MAX_PATTERN_PROGRAM_SIZE,
} from "../../src/planner/tools/line-pattern.ts";
import { requiredLiterals } from "../../src/planner/tools/required-literals.ts";
import type { ScanLimit } from "../../src/planner/tools/scan-budget.ts";
import type { ToolName } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { PLAN_PATH, shopFixture } from "./planner/helpers.ts";

/**
 * Model-chosen patterns (issue 10, finding 1): Grep's regular expressions and every glob run on
 * a linear-time engine, scans hand the event loop back while they work and stop at a time
 * budget. The end-to-end freeze (healthz, other sessions, restarts) is in
 * test/e2e/hostile-patterns.test.ts; here are the tools' answers.
 */

const shop = () => new MemoryPort({ files: shopFixture() });

/** Runs a read-only tool with an optional scan limit (the loop's choice: scanLimitFor). */
async function scan(port: MemoryPort, name: ToolName, input: object, scanLimit?: ScanLimit) {
  const outcome = await findTool(name)!.run(input, {
    port,
    workspace: new Workspace(port, PLAN_PATH),
    mode: "plan",
    planPath: PLAN_PATH,
    ...(scanLimit !== undefined && { scanLimit }),
  });
  if (outcome.kind !== "result") throw new Error(`${name} opened a wait`);
  return { text: outcome.content, isError: outcome.isError };
}

/** `count` files of about `bytes` characters each, lines of source-like text. */
function corpus(count: number, bytes: number): Record<string, string> {
  const line = "export function handle(request: Request) { return respond(request, 200); }\n";
  const body = line.repeat(Math.ceil(bytes / line.length));
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`gen/f${String(i).padStart(4, "0")}.ts`, body]),
  );
}

describe("Grep patterns", () => {
  it("answers an exponential-backtracking pattern on its trigger text like any other (no match, no hang)", async () => {
    const port = new MemoryPort({
      files: { "a.txt": `${"a".repeat(48)}!\n`, "b.txt": "aaaa\n" },
    });
    const r = await scan(port, "Grep", { pattern: "^(a+)+$", output_mode: "content" });
    expect(r).toEqual({ text: "b.txt:1:aaaa", isError: false });
  });

  it("understands RE2 and ripgrep syntax that JavaScript does not: inline flags, \\A, \\z, Unicode and POSIX classes", async () => {
    const port = new MemoryPort({
      files: { "src/a.ts": "// TODO: first\nconst x = 1; // todo later\nÉtat final\nend\n" },
    });
    const inline = await scan(port, "Grep", { pattern: "(?i)todo", output_mode: "count" });
    expect(inline.text).toBe("src/a.ts:2\n(Found 2 matching lines in 1 file.)");
    // Each line is searched on its own: \A and \z are its start and end, as ^ and $ are.
    const anchored = await scan(port, "Grep", { pattern: "\\Aend\\z", output_mode: "content" });
    expect(anchored.text).toBe("src/a.ts:4:end");
    const unicode = await scan(port, "Grep", { pattern: "^\\p{Lu}tat", output_mode: "content" });
    expect(unicode.text).toBe("src/a.ts:3:État final");
    const posix = await scan(port, "Grep", { pattern: "[[:digit:]];", output_mode: "count" });
    expect(posix.text).toBe("src/a.ts:1\n(Found 1 matching line in 1 file.)");
  });

  it("translates the JavaScript spellings models write: \\uXXXX, (?<name>…) and \\/", async () => {
    const port = new MemoryPort({ files: { "a.ts": "const é = 1;\nimport x from './x/y';\n" } });
    expect((await scan(port, "Grep", { pattern: "\\u00e9 =" })).text).toBe("Found 1 file\na.ts");
    expect((await scan(port, "Grep", { pattern: "(?<dir>\\.\\/x)\\/y" })).text).toBe(
      "Found 1 file\na.ts",
    );
  });

  it.each([
    ["foo(?=bar)", "a lookahead (?=…)"],
    ["foo(?!bar)", "a negative lookahead (?!…)"],
    ["(?<=foo)bar", "a lookbehind (?<=…)"],
    ["(?<!foo)bar", "a negative lookbehind (?<!…)"],
    ["(a)\\1", "a backreference (\\1)"],
    ["(?<q>['\"]).*\\k<q>", "a named backreference (\\k<…>)"],
    ["(?>a+)b", "an atomic group (?>…)"],
  ])("refuses %j with an error tool result that names %s", async (pattern, named) => {
    const r = await scan(shop(), "Grep", { pattern });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`uses ${named}`);
    expect(r.text).toContain("linear-time engine");
  });

  it("does not mistake escaped or bracketed parentheses for lookaround", () => {
    for (const pattern of ["\\(?=", "[(?=]x", "a\\\\(b)", "[\\]](?:x)"]) {
      expect(compileLinePattern(pattern, { ignoreCase: false }).ok, pattern).toBe(true);
    }
  });

  it("refuses a pattern whose compiled program is too large, and explains bad syntax", async () => {
    const huge = await scan(shop(), "Grep", { pattern: "(?:\\w\\W){1000}(?:\\w\\W){1000}" });
    expect(huge.isError).toBe(true);
    expect(huge.text).toContain(`the limit is ${MAX_PATTERN_PROGRAM_SIZE}`);
    const bad = await scan(shop(), "Grep", { pattern: "a{2,1}" });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain("not a valid regular expression for Grep");
  });

  it("finds exactly the lines JavaScript finds for ordinary patterns, line by line", () => {
    const lines = fc.array(fc.stringMatching(/^[ab_( )\t.x]{0,12}$/), { maxLength: 30 });
    const patterns = fc.constantFrom(
      "a",
      "^a",
      "b$",
      "a.b",
      "(a|b)x",
      "\\(a\\)",
      "^$",
      "\\bab\\b",
      "a{2,}",
      "[^ab]",
      "x?_",
      "\\s+\\w",
    );
    fc.assert(
      fc.property(patterns, lines, fc.boolean(), (pattern, ls, ignoreCase) => {
        const compiled = compileLinePattern(pattern, { ignoreCase });
        if (!compiled.ok) return false;
        const js = new RegExp(pattern, ignoreCase ? "i" : "");
        const text = ls.join("\n");
        const expected = text.split("\n").map((l) => js.test(l));
        expect(text.split("\n").map((l) => compiled.value.testLine(l))).toEqual(expected);
        // The whole-text test never rules out a text with a matching line.
        if (expected.some(Boolean)) expect(compiled.value.mayMatch(text)).toBe(true);
        return true;
      }),
      { numRuns: 500 },
    );
  });
});

/** Random regular expressions over a small alphabet, with the constructs Grep users write. */
const regex: fc.Arbitrary<string> = fc
  .letrec((tie) => ({
    atom: fc.oneof(
      { maxDepth: 2, depthIdentifier: "regex" },
      // Runs of three or more letters give the literal fast paths something to work with.
      fc.stringMatching(/^[abc]{3,4}$/),
      fc.constantFrom(
        "a",
        "b",
        "c",
        "ab",
        "abc",
        "ca",
        ".",
        "[ab]",
        "[^a]",
        "\\w",
        "\\d",
        "\\.",
        "\\s",
        " ",
      ),
      tie("group"),
    ),
    group: fc
      .tuple(fc.constantFrom("(", "(?:"), fc.array(tie("sequence"), { minLength: 1, maxLength: 2 }))
      .map(([open, alternatives]) => `${open}${alternatives.join("|")})`),
    piece: fc
      .tuple(tie("atom"), fc.constantFrom("", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?"))
      .map(([atom, q]) => `${atom}${q}`),
    sequence: fc
      .tuple(
        fc.constantFrom("", "", "^", "\\b"),
        fc.array(tie("piece"), { minLength: 1, maxLength: 3 }),
        fc.constantFrom("", "", "$"),
      )
      .map(([lead, pieces, end]) => `${lead}${pieces.join("")}${end}`),
  }))
  .sequence.filter((p) => (p as string).length <= 300) as fc.Arbitrary<string>;
const lineText = fc.stringMatching(/^[abc. 1]{0,30}$/);

describe("Grep's fast paths", () => {
  it("never drop a needed literal: a line RE2 matches holds one string of each required set", () => {
    fc.assert(
      fc.property(regex, fc.array(lineText, { maxLength: 20 }), (pattern, lines) => {
        const sets = requiredLiterals(pattern);
        if (sets === null) return true;
        const re = RE2JS.compile(pattern);
        for (const line of lines.filter((l) => re.test(l)))
          for (const set of sets)
            expect(
              set.some((s) => line.includes(s)),
              `${pattern} / ${line}`,
            ).toBe(true);
        return true;
      }),
      { numRuns: 3_000 },
    );
  });

  it("find exactly the lines a plain per-line RE2 test finds, whatever the pattern and text", async () => {
    await fc.assert(
      fc.asyncProperty(regex, fc.array(lineText, { maxLength: 60 }), async (pattern, lines) => {
        const text = lines.join("\n");
        const port = new MemoryPort({ files: { "f.txt": text } });
        const r = await scan(port, "Grep", { pattern, output_mode: "content", head_limit: 1_000 });
        const re = RE2JS.compile(pattern);
        const expected = text
          .split("\n")
          .flatMap((l, i) => (re.test(l) ? [`f.txt:${i + 1}:${l}`] : []));
        expect(r.text, pattern).toBe(
          expected.length === 0 ? "No matches found" : expected.join("\n"),
        );
        return true;
      }),
      { numRuns: 1_000 },
    );
  });

  it("know the literals of everyday patterns, and none where case or escapes make them unsure", () => {
    expect(requiredLiterals("(TODO|FIXME|XXX)")).toEqual([["TODO", "FIXME", "XXX"]]);
    expect(requiredLiterals("function\\s+\\w+Error")).toEqual([["function"], ["Error"]]);
    expect(requiredLiterals("^import .* from")).toEqual([["import "], [" from"]]);
    expect(requiredLiterals("x(abc)+y")).toEqual([["abc"]]);
    for (const unsure of ["(?i)todo", "a(?i:bc)d", "\\x41BC", "\\QABC\\E", "(abc)?", "abc|d*"])
      expect(requiredLiterals(unsure), unsure).toBeNull();
  });
});

describe("Grep and Glob share the worker", () => {
  it("Grep hands the event loop back while it scans, so other work runs during a long search", async () => {
    // 24 files of 1 MiB where every line matches: the per-line path, the slowest there is.
    const port = new MemoryPort({ files: corpus(24, 1024 * 1024) });
    let ticks = 0;
    let searching = true;
    const tick = () => {
      if (!searching) return;
      ticks++;
      setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const r = await scan(port, "Grep", { pattern: "respond\\(\\w+", output_mode: "count" });
    searching = false;
    expect(r.text).toContain("(Found ");
    // A scan that never yielded would let the timer run once, after it finished.
    expect(ticks).toBeGreaterThan(10);
  });

  it("Grep stops at its time budget and answers with what it found so far, saying where it stopped", async () => {
    const port = new MemoryPort({ files: corpus(200, 64 * 1024) });
    const full = await scan(port, "Grep", { pattern: "handle", head_limit: 1_000 });
    expect(full.text.startsWith("Found 200 files")).toBe(true);
    const cut = await scan(
      port,
      "Grep",
      { pattern: "handle", head_limit: 1_000 },
      { kind: "time", ms: 5 },
    );
    expect(cut.isError).toBe(false);
    const found = Number(/^Found (\d+) files/.exec(cut.text)?.[1] ?? "0");
    expect(found).toBeLessThan(200);
    expect(cut.text).toMatch(
      /\(The search reached its time limit of 0\.005 s at gen\/f\d{4}\.ts: that file and the ones after it in path order were not searched\./,
    );
  });

  it("Glob stops at its time budget with the paths matched so far", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [`src/m${String(i).padStart(5, "0")}.ts`, ""]),
    );
    const port = new MemoryPort({ files });
    const cut = await scan(port, "Glob", { pattern: "src/**/*.ts" }, { kind: "time", ms: 1 });
    expect(cut.isError).toBe(false);
    expect(cut.text).toMatch(/\(The match reached its time limit of 0\.001 s at src\/m\d{5}\.ts/);
  });
});

describe("globs", () => {
  it("answers a pattern that backtracks exponentially in picomatch at once", async () => {
    const trap = "a".repeat(40);
    const hit = `${"a".repeat(9)}b`;
    const port = new MemoryPort({ files: { [trap]: "x\n", [hit]: "x\n" } });
    const glob = "*a*a*a*a*a*a*a*a*a*b";
    expect((await scan(port, "Glob", { pattern: glob })).text).toBe(hit);
    // Grep's glob option goes through the same matcher.
    expect((await scan(port, "Grep", { pattern: "x", glob })).text).toBe(`Found 1 file\n${hit}`);
  });

  it("supports *, **, ?, sets, negated sets, nested braces and escapes; dotfiles included", async () => {
    const port = new MemoryPort({
      files: {
        ".env": "",
        ".github/workflows/ci.yml": "",
        "src/api/routes.ts": "",
        "src/db/migrations/001_init.sql": "",
        "src/db/models/user.ts": "",
        "src/a*b.ts": "",
        "src/x1.ts": "",
        "src/xa.ts": "",
      },
    });
    const glob = async (pattern: string) => (await scan(port, "Glob", { pattern })).text;
    expect(await glob("**/*.yml")).toBe(".github/workflows/ci.yml");
    expect(await glob(".*")).toBe(".env");
    expect(await glob("src/{api,db/{models,migrations}}/*")).toBe(
      "src/api/routes.ts\nsrc/db/migrations/001_init.sql\nsrc/db/models/user.ts",
    );
    expect(await glob("src/x[!a].ts")).toBe("src/x1.ts");
    expect(await glob("src/x[^0-9].ts")).toBe("src/xa.ts");
    expect(await glob("src/x?.ts")).toBe("src/x1.ts\nsrc/xa.ts");
    expect(await glob("src/a\\*b.ts")).toBe("src/a*b.ts");
    // `dir/**` is everything below dir; `*`, `?` and sets never cross a `/`.
    expect(await glob("src/db/**")).toBe("src/db/migrations/001_init.sql\nsrc/db/models/user.ts");
    expect(await glob("src*")).toBe("No files found");
    expect(await glob("src?api/*")).toBe("No files found");
    expect(await glob("src[/]api/*")).toBe("No files found");
  });

  it.each([
    ["!(*.ts)", "extglob"],
    ["src/@(a|b).ts", "extglob"],
    ["src/+(x).ts", "extglob"],
    ["!src/**", "negated"],
  ])("refuses %j with an error naming what is not supported", async (pattern, what) => {
    const r = await scan(shop(), "Glob", { pattern });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(what);
    expect((await scan(shop(), "Grep", { pattern: "x", glob: pattern })).isError).toBe(true);
  });

  it("match what picomatch matches for ordinary patterns (dotfiles on)", () => {
    const literal = fc.stringMatching(/^\.?[abc]{1,2}$/);
    const atom = fc.oneof(
      literal,
      fc.constant("*"),
      fc.constant("?"),
      fc.constantFrom("[abc]", "[a-b]", "[^a]", "[.a]"),
    );
    const { part } = fc.letrec((tie) => ({
      part: fc.oneof(
        { depthSize: "small" },
        atom,
        fc
          .array(tie("alternative"), { minLength: 2, maxLength: 3 })
          .map((alts) => `{${alts.join(",")}}`),
      ),
      alternative: fc.array(tie("part"), { minLength: 1, maxLength: 2 }).map((p) => p.join("")),
    }));
    const segment = fc.array(part as fc.Arbitrary<string>, { minLength: 1, maxLength: 3 });
    const glob = fc
      .tuple(
        fc.boolean(),
        fc.array(
          fc.oneof(
            segment.map((s) => s.join("")),
            fc.constant("**"),
          ),
          { maxLength: 2 },
        ),
        segment,
      )
      .map(([lead, middle, last]) => [...(lead ? ["**"] : []), ...middle, last.join("")].join("/"))
      // Left out, where picomatch has quirks we do not copy: `**` inside a segment (picomatch
      // sometimes treats `}**` as a globstar), segments that can match nothing (it lets
      // `a/**/*` match "a") and a trailing `/**` (it matches the folder itself after `a`, not
      // after `*`; here it always does).
      .filter(
        (g) =>
          !g.endsWith("/**") &&
          g
            .split("/")
            .every(
              (s) =>
                s === "**" ||
                (!s.includes("**") &&
                  !(compileGlob(s) as { value: (p: string) => boolean }).value("")),
            ),
      );
    const name = fc.stringMatching(/^[abc.]{1,4}$/).filter((s) => s !== "." && s !== "..");
    const path = fc.array(name, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));
    let agreedMatches = 0;
    fc.assert(
      fc.property(glob, fc.array(path, { minLength: 1, maxLength: 8 }), (pattern, paths) => {
        const ours = compileGlob(pattern);
        if (!ours.ok) return false;
        const theirs = picomatch(pattern, { dot: true });
        for (const p of paths) {
          expect(ours.value(p), `${pattern} on ${p}`).toBe(theirs(p));
          if (theirs(p)) agreedMatches++;
        }
        return true;
      }),
      { numRuns: 3_000 },
    );
    // The corpus is not all misses: a good share of the pairs match.
    expect(agreedMatches).toBeGreaterThan(1_000);
  });
});
