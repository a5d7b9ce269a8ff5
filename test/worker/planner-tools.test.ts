import { describe, expect, it } from "vitest";
import { GREP_DEFAULT_LIMIT } from "../../src/planner/tools/grep.ts";
import { TOOL_SPECS } from "../../src/planner/tools/index.ts";
import {
  numberedLines,
  READ_MAX_CHARS,
  READ_MAX_LINE_CHARS,
} from "../../src/planner/tools/read.ts";
import { TOOL_NAMES } from "../../src/protocol/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { runTool, shopFixture } from "./planner/helpers.ts";

const PLAN = "/plans/bold-eagle.md";

const run = runTool;

const shop = () => new MemoryPort({ files: shopFixture() });

describe("tool specs", () => {
  it("offer every tool with a JSON schema the model can read", () => {
    expect(TOOL_SPECS.map((s) => s.name)).toEqual([...TOOL_NAMES]);
    for (const spec of TOOL_SPECS) {
      expect(spec.description.length).toBeGreaterThan(40);
      expect(spec.input_schema.type).toBe("object");
      expect(spec.input_schema).not.toHaveProperty("$schema");
    }
    const ask = TOOL_SPECS.find((s) => s.name === "AskUserQuestion")!.input_schema as {
      properties: {
        questions: {
          maxItems: number;
          items: {
            properties: {
              header: { maxLength: number };
              options: { minItems: number; maxItems: number };
            };
          };
        };
      };
    };
    expect(ask.properties.questions.maxItems).toBe(4);
    expect(ask.properties.questions.items.properties.header.maxLength).toBe(12);
    expect(ask.properties.questions.items.properties.options).toMatchObject({
      minItems: 2,
      maxItems: 4,
    });
  });

  it("reject extra and mistyped fields with a message naming the field", async () => {
    const port = shop();
    const r = await run(port, "Read", { file_path: "src/app.ts", lines: 3 });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("InputValidationError");
    expect(r.text).toContain("lines");
    const g = await run(port, "Grep", { pattern: 5 });
    expect(g.text).toContain("pattern");
    const glob = await run(port, "Glob", {});
    expect(glob.text).toContain("pattern");
  });
});

describe("Read", () => {
  it("numbers lines like cat -n and honours offset and limit", async () => {
    const r = await run(shop(), "Read", {
      file_path: "/repo/src/billing/tax.ts",
      offset: 2,
      limit: 3,
    });
    expect(r.text.split("\n").slice(0, 3)).toEqual([
      "     2\texport const VAT_RATES: Record<string, number> = {",
      "     3\t  DE: 0.19,",
      "     4\t  FR: 0.2,",
    ]);
    expect(r.text).toContain("[Showing lines 2–4 of 12; read on with offset 5.]");
  });

  it("reads the plan file and explains missing files and folders", async () => {
    const port = shop();
    expect((await run(port, "Read", { file_path: PLAN })).text).toContain("does not exist yet");
    port.writePlan("# P\n");
    expect((await run(port, "Read", { file_path: PLAN })).text).toBe("     1\t# P");
    expect((await run(port, "Read", { file_path: "src/nope.ts" })).text).toBe(
      "File does not exist: /repo/src/nope.ts",
    );
    expect((await run(port, "Read", { file_path: "src/auth" })).text).toContain("is a folder");
    expect((await run(port, "Read", { file_path: "../etc/passwd" })).isError).toBe(true);
    expect((await run(port, "Read", { file_path: "src/app.ts", offset: 999 })).text).toContain(
      "has only 16 lines",
    );
  });

  it("caps long lines and the total size", () => {
    const long = numberedLines(`${"y".repeat(READ_MAX_LINE_CHARS + 50)}\n`, 1, 10, "/repo/x");
    expect(long).toContain("… [line cut]");
    const huge = numberedLines(
      Array.from({ length: 2000 }, () => "z".repeat(1000)).join("\n"),
      1,
      2000,
      "/repo/x",
    );
    expect(huge.length).toBeLessThan(READ_MAX_CHARS + 500);
    expect(huge).toMatch(/\[Output cut at line \d+ of 2000/);
  });

  it("sees the overlay over the snapshot", async () => {
    const port = shop();
    port.writeOverlay("src/util/log.ts", "changed\n");
    port.writeOverlay("src/app.ts", null);
    expect((await run(port, "Read", { file_path: "src/util/log.ts" })).text).toBe(
      "     1\tchanged",
    );
    expect((await run(port, "Read", { file_path: "src/app.ts" })).text).toContain(
      "File does not exist",
    );
  });
});

describe("Glob and LS", () => {
  it("Glob matches globs, sorted, relative paths", async () => {
    const r = await run(shop(), "Glob", { pattern: "**/*.test.ts" });
    expect(r.text.split("\n")).toEqual([
      "test/auth/login.test.ts",
      "test/auth/session.test.ts",
      "test/billing/invoice.test.ts",
      "test/catalog/products.test.ts",
    ]);
    expect((await run(shop(), "Glob", { pattern: "*.ts", path: "src/billing" })).text).toBe(
      "src/billing/currency.ts\nsrc/billing/invoice.ts\nsrc/billing/tax.ts",
    );
    expect((await run(shop(), "Glob", { pattern: "**/*.{sql,md}", path: "/repo/src" })).text).toBe(
      "src/db/migrations/001_init.sql\nsrc/db/migrations/002_orders.sql",
    );
    expect((await run(shop(), "Glob", { pattern: "**/*.rb" })).text).toBe("No files found");
    expect((await run(shop(), "Glob", { pattern: "*", path: "nope" })).isError).toBe(true);
  });

  it("Glob caps its answer and says how many there were", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 700 }, (_, i) => [`gen/f${String(i).padStart(4, "0")}.txt`, ""]),
    );
    const r = await run(new MemoryPort({ files }), "Glob", { pattern: "gen/*" });
    expect(r.text.split("\n")).toHaveLength(501);
    expect(r.text).toContain("(Showing the first 500 of 700 files");
  });

  it("LS lists folders first, then files; and the plans folder", async () => {
    const port = shop();
    expect((await run(port, "LS", {})).text).toBe(
      "/repo/\n  docs/\n  src/\n  test/\n  Makefile\n  README.md\n  package.json",
    );
    expect((await run(port, "LS", { path: "src/auth" })).text).toBe(
      "/repo/src/auth/\n  login.ts\n  password.ts\n  session.ts",
    );
    expect((await run(port, "LS", { path: "/plans" })).text).toContain("has not been written yet");
    port.writePlan("x");
    expect((await run(port, "LS", { path: "/plans/" })).text).toBe("/plans/\n  bold-eagle.md");
    expect((await run(port, "LS", { path: "src/app.ts" })).text).toContain("is a file");
  });
});

describe("Grep", () => {
  it("lists matching files by default, sorted by path", async () => {
    const r = await run(shop(), "Grep", { pattern: "createSession" });
    expect(r.text).toBe(
      "Found 3 files\nsrc/auth/login.ts\nsrc/auth/session.ts\ntest/auth/session.test.ts",
    );
  });

  it("shows content with line numbers and context, case-insensitively", async () => {
    const r = await run(shop(), "Grep", {
      pattern: "vat_rates",
      "-i": true,
      output_mode: "content",
      "-C": 1,
      path: "src/billing",
    });
    expect(r.text).toBe(
      [
        "src/billing/tax.ts-1-/** VAT rates by country code. */",
        "src/billing/tax.ts:2:export const VAT_RATES: Record<string, number> = {",
        "src/billing/tax.ts-3-  DE: 0.19,",
        "--",
        "src/billing/tax.ts-9-export function taxFor(amount: number, country: string): number {",
        "src/billing/tax.ts:10:  const rate = VAT_RATES[country.toUpperCase()] ?? 0;",
        "src/billing/tax.ts-11-  return amount * rate;",
      ].join("\n"),
    );
  });

  it("counts per file and filters by glob (name or path)", async () => {
    const r = await run(shop(), "Grep", {
      pattern: "session",
      "-i": true,
      output_mode: "count",
      glob: "*.ts",
    });
    expect(r.text).toContain("src/auth/session.ts:15");
    expect(r.text).not.toContain(".sql");
    const sql = await run(shop(), "Grep", {
      pattern: "sessions",
      glob: "src/db/**/*.sql",
      output_mode: "count",
    });
    expect(sql.text).toBe("src/db/migrations/001_init.sql:1\n(Found 1 matching line in 1 file.)");
  });

  it("explains an invalid regular expression and an unknown path", async () => {
    expect((await run(shop(), "Grep", { pattern: "(unclosed" })).text).toContain(
      "not a valid regular expression for Grep (RE2 syntax",
    );
    expect((await run(shop(), "Grep", { pattern: "x", path: "nowhere" })).text).toContain(
      "No such file or folder",
    );
    expect((await run(shop(), "Grep", { pattern: "zzz_not_there" })).text).toBe("No matches found");
  });

  it("caps results and streams the snapshot once per search", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`gen/f${String(i).padStart(3, "0")}.txt`, "needle\n"]),
    );
    const port = new MemoryPort({ files });
    const r = await run(port, "Grep", { pattern: "needle" });
    expect(r.text.split("\n")).toHaveLength(GREP_DEFAULT_LIMIT + 2);
    expect(r.text).toContain(`(Showing the first ${GREP_DEFAULT_LIMIT} of 400 files`);
    expect(port.snapshot.scans).toBe(1);
    const limited = await run(port, "Grep", {
      pattern: "needle",
      output_mode: "content",
      head_limit: 5,
    });
    expect(limited.text.split("\n")).toHaveLength(6);
    expect(limited.text).toContain("Output cut after 5 lines");
  });

  it("searches overlay files in path order together with the snapshot", async () => {
    const port = shop();
    port.writeOverlay("src/aaa-new.ts", "createSession();\n");
    port.writeOverlay("src/auth/login.ts", "// no longer\n");
    const r = await run(port, "Grep", { pattern: "createSession" });
    expect(r.text).toBe(
      "Found 3 files\nsrc/aaa-new.ts\nsrc/auth/session.ts\ntest/auth/session.test.ts",
    );
  });
});
