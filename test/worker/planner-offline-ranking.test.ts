import { describe, expect, it } from "vitest";
import { importSpecifiers, resolveImport } from "../../src/planner/models/offline/imports.ts";
import {
  makeTargets,
  projectFacts,
  readmeSummary,
} from "../../src/planner/models/offline/manifests.ts";
import { rankFiles, type TermEvidence } from "../../src/planner/models/offline/ranking.ts";
import {
  deriveTerms,
  pathMentions,
  splitIdentifier,
  stem,
  wordStartPattern,
} from "../../src/planner/models/offline/terms.ts";

describe("search terms", () => {
  it("splits identifiers", () => {
    expect(splitIdentifier("createSession")).toEqual(["create", "session"]);
    expect(splitIdentifier("parseHTTPResponse_v2")).toEqual(["parse", "http", "response", "v2"]);
    expect(splitIdentifier("user_id")).toEqual(["user", "id"]);
    expect(splitIdentifier("kebab-case-name")).toEqual(["kebab", "case", "name"]);
  });

  it("stems lightly to prefixes that still match the word family", () => {
    expect(
      [
        "invoices",
        "rounding",
        "sessions",
        "migrations",
        "stories",
        "logging",
        "users",
        "user",
        "tax",
        "payments",
        "created",
      ].map(stem),
    ).toEqual([
      "invoice",
      "round",
      "session",
      "migr",
      "stor",
      "log",
      "user",
      "user",
      "tax",
      "payment",
      "creat",
    ]);
  });

  it("drops stop words and generic verbs, keeps code identifiers whole", () => {
    const terms = deriveTerms(
      "Please add a retry to fetchInvoice and update the user_id handling in the tests",
    );
    expect(terms.map((t) => t.text)).toEqual([
      "retry",
      "fetchinvoice",
      "fetch",
      "invoice",
      "userid",
      "user",
      "handl",
    ]);
    expect(terms.find((t) => t.text === "fetchinvoice")?.weight).toBe(2);
    expect(terms.find((t) => t.text === "retry")?.weight).toBe(1);
  });

  it("treats brand capitalisation without splitting it into noise", () => {
    expect(deriveTerms("Add GitHub OAuth login").map((t) => t.text)).toEqual([
      "github",
      "oauth",
      "auth",
      "login",
    ]);
  });

  it("finds path mentions in feedback", () => {
    expect(
      pathMentions("Also touch src/db/schema.sql, not tax.ts. Version 1.2.3 is fine, e.g. this."),
    ).toEqual(["src/db/schema.sql", "tax.ts"]);
  });
});

describe("term matching", () => {
  const matches = (term: string, text: string) => new RegExp(wordStartPattern(term)).test(text);

  it("finds a stem where a word or identifier part starts, in any case", () => {
    for (const text of [
      "rate limit",
      "rateLimit",
      "getRateLimit",
      "RATE_LIMIT",
      "MAX_RATE",
      "rates",
      "max-rate",
    ]) {
      expect(matches("rate", text), text).toBe(true);
    }
  });

  it("never finds a stem inside a word", () => {
    for (const text of ["generate", "migrate()", "separated", "iterate", "curated", "GeneraTe"]) {
      expect(matches("rate", text), text).toBe(false);
    }
  });

  it("escapes characters that mean something in a regular expression", () => {
    expect(matches("v2.x", "use v2.x now")).toBe(true);
    expect(matches("v2.x", "use v2yx now")).toBe(false);
    expect(matches("404", "status 404")).toBe(true);
    expect(matches("404", "x1404")).toBe(false);
  });
});

describe("manifests", () => {
  it("finds verification commands in package.json, Makefile, pyproject, go.mod and Cargo.toml", () => {
    const facts = projectFacts(
      {
        "package.json": JSON.stringify({
          name: "web",
          description: "A web app",
          scripts: { test: "vitest run", lint: "biome check", dev: "vite" },
        }),
        Makefile: "all: build\n\ntest:\n\tgo test ./...\ncheck: lint\nVAR := 1\n.PHONY: test\n",
        "pyproject.toml":
          '[project]\nname = "svc"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\nline-length = 100\n',
        "go.mod": "module example.com/svc\n\ngo 1.22\n",
        "Cargo.toml": '[package]\nname = "crate"\n',
      },
      ["pnpm-lock.yaml", "tests/"],
    );
    expect(facts.name).toBe("web");
    expect(facts.ecosystems).toEqual(["Node.js", "Python", "Go", "Rust"]);
    expect(facts.commands.map((c) => c.command)).toEqual([
      "pnpm run test",
      "pnpm run lint",
      "pytest",
      "ruff check .",
      "go test ./...",
      "go vet ./...",
      "cargo test",
      "make test",
      "make check",
    ]);
  });

  it("reads Makefile targets and README summaries", () => {
    expect(makeTargets("a:\nb: a\nX := 1\n%.o: %.c\n.PHONY: a\n")).toEqual(["a", "b"]);
    expect(
      readmeSummary(
        "# Shop\n\n[![ci](x)](y)\n\n```sh\nnpm i\n```\n\nA tiny shop.\nIt sells things.",
      ),
    ).toBe("A tiny shop. It sells things.");
  });
});

describe("imports", () => {
  const known = new Set([
    "src/auth/session.ts",
    "src/routes/auth.ts",
    "src/lib/db/index.ts",
    "pkg/store/store.go",
    "app/models/user.py",
    "src/util/mod.rs",
    "src/util/fmt.rs",
  ]);
  it("extracts and resolves JS/TS, Python, Go and Rust imports", () => {
    expect(
      importSpecifiers(
        "src/routes/auth.ts",
        'import { a } from "../auth/session.js";\nexport * from "hono";\nconst x = require("./x");',
      ),
    ).toEqual(["../auth/session.js", "hono", "./x"]);
    expect(resolveImport("src/routes/auth.ts", "../auth/session.js", known)).toEqual([
      "src/auth/session.ts",
    ]);
    expect(resolveImport("src/routes/auth.ts", "../lib/db", known)).toEqual([
      "src/lib/db/index.ts",
    ]);
    expect(resolveImport("src/routes/auth.ts", "hono", known)).toEqual([]);
    expect(resolveImport("app/views.py", "app.models.user", known)).toEqual(["app/models/user.py"]);
    expect(resolveImport("app/views.py", ".models.user", known)).toEqual(["app/models/user.py"]);
    expect(
      importSpecifiers("cmd/main.go", 'import (\n\t"fmt"\n\t"example.com/x/pkg/store"\n)\n'),
    ).toEqual(["fmt", "example.com/x/pkg/store"]);
    expect(resolveImport("cmd/main.go", "example.com/x/pkg/store", known)).toEqual([
      "pkg/store/store.go",
    ]);
    expect(resolveImport("src/main.rs", "crate::util::fmt", known)).toEqual(["src/util/fmt.rs"]);
  });
});

describe("ranking", () => {
  const ev = (
    term: string,
    hits: Record<string, number>,
    paths: string[] = [],
    truncated = false,
  ): TermEvidence => ({
    term,
    weight: 1,
    hits: new Map(Object.entries(hits)),
    pathMatches: new Set(paths),
    truncated,
  });

  it("prefers files that match more terms, rarer terms and path names", () => {
    const ranked = rankFiles({
      terms: [
        ev(
          "invoice",
          { "src/billing/invoice.ts": 5, "src/routes/orders.ts": 2, "docs/notes.md": 1 },
          ["src/billing/invoice.ts"],
        ),
        ev("round", { "src/billing/invoice.ts": 1, "src/util/math.ts": 3 }),
        ev(
          "the",
          Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`f${i}.ts`, 9])),
          [],
          true,
        ),
      ],
      totalFiles: 100,
      imports: new Map(),
    });
    expect(ranked[0]!.path).toBe("src/billing/invoice.ts");
    expect(ranked.findIndex((f) => f.path === "src/util/math.ts")).toBeLessThan(
      ranked.findIndex((f) => f.path === "f0.ts") === -1
        ? Infinity
        : ranked.findIndex((f) => f.path === "f0.ts"),
    );
  });

  it("lifts a file wired by imports to a strong candidate, puts named files first, drops excluded and generated ones", () => {
    const terms = [
      ev("session", {
        "src/auth/session.ts": 9,
        "src/routes/auth.ts": 1,
        "src/other.ts": 1,
        "dist/bundle.js": 50,
      }),
    ];
    const plain = rankFiles({ terms, totalFiles: 50, imports: new Map() });
    const wired = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map([["src/routes/auth.ts", ["src/auth/session.ts"]]]),
    });
    const score = (list: typeof plain, p: string) => list.find((f) => f.path === p)?.score ?? 0;
    expect(score(wired, "src/routes/auth.ts")).toBeGreaterThan(score(plain, "src/routes/auth.ts"));
    expect(score(wired, "src/routes/auth.ts")).toBeGreaterThan(score(wired, "src/other.ts"));
    expect(wired.find((f) => f.path === "src/routes/auth.ts")!.imports).toEqual([
      "src/auth/session.ts",
    ]);
    expect(plain.some((f) => f.path.startsWith("dist/"))).toBe(false);

    const steered = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map(),
      include: new Set(["src/other.ts"]),
      exclude: new Set(["src/auth/session.ts"]),
    });
    expect(steered[0]).toMatchObject({ path: "src/other.ts", named: true });
    expect(steered.some((f) => f.path === "src/auth/session.ts")).toBe(false);
  });

  it("is deterministic: ties break by path", () => {
    const terms = [ev("x", { "b.ts": 1, "a.ts": 1 })];
    expect(rankFiles({ terms, totalFiles: 10, imports: new Map() }).map((f) => f.path)).toEqual([
      "a.ts",
      "b.ts",
    ]);
  });
});
