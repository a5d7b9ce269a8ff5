import { describe, expect, it } from "vitest";
import { clauseFor, taskClauses } from "../../src/planner/models/offline/draft/file-notes.ts";
import { changeGraph } from "../../src/planner/models/offline/draft/graph.ts";
import {
  type DefinitionHit,
  type RankedFile,
  rankFiles,
  type TermEvidence,
} from "../../src/planner/models/offline/rank/ranking.ts";
import { neighbourTerms } from "../../src/planner/models/offline/rank/selection.ts";
import {
  joinWords,
  migrationFolders,
  nameStyle,
  newFilePath,
  nextMigrationPath,
} from "../../src/planner/models/offline/repository/conventions.ts";
import {
  makeTargets,
  projectFacts,
  readmeSummary,
} from "../../src/planner/models/offline/repository/manifests.ts";
import { taskKind } from "../../src/planner/models/offline/task/intent.ts";
import {
  deriveTerms,
  pathMentions,
  splitIdentifier,
  stem,
  wordStartPattern,
} from "../../src/planner/models/offline/task/terms.ts";

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
    ]);
    expect(terms.find((t) => t.text === "fetchinvoice")?.weight).toBe(2);
    expect(terms.find((t) => t.text === "retry")?.weight).toBe(1);
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

describe("ranking", () => {
  const ev = (
    term: string,
    hits: Record<string, number>,
    opts: {
      paths?: string[];
      defs?: Record<string, DefinitionHit[]>;
      truncated?: boolean;
      weight?: number;
    } = {},
  ): TermEvidence => ({
    term,
    weight: opts.weight ?? 1,
    hits: new Map(Object.entries(hits)),
    pathMatches: new Set(opts.paths ?? []),
    defs: new Map(Object.entries(opts.defs ?? {})),
    truncated: opts.truncated ?? false,
  });
  const order = (ranked: readonly RankedFile[]) => ranked.map((f) => f.path);
  const fn = (name: string, line = 1): DefinitionHit => ({ name, kind: "function", line });

  it("counts a definition for less where nothing of the word written beside it is (the events feed is not a gzip stream's feed())", () => {
    const terms = [
      ev(
        "feed",
        { "src/snapshot/gunzip.ts": 5, "src/session/event-log.ts": 8 },
        {
          defs: {
            "src/snapshot/gunzip.ts": [fn("feed", 86)],
            "src/session/event-log.ts": [fn("feedPage", 199)],
          },
        },
      ),
      ev("event", { "src/session/event-log.ts": 37, "src/api/sessions.ts": 2 }),
    ];
    const plain = rankFiles({ terms, totalFiles: 300, imports: new Map() });
    const gunzip = (r: readonly RankedFile[]) =>
      r.find((f) => f.path === "src/snapshot/gunzip.ts")!;
    const withNeighbours = rankFiles({
      terms,
      totalFiles: 300,
      imports: new Map(),
      neighbours: [["event", "feed"]],
    });
    expect(gunzip(withNeighbours).score).toBeLessThan(0.7 * gunzip(plain).score);
    expect(order(withNeighbours)[0]).toBe("src/session/event-log.ts");
    // The file that holds the neighbour keeps its definition's full worth.
    const log = (r: readonly RankedFile[]) => r.find((f) => f.path === "src/session/event-log.ts")!;
    expect(log(withNeighbours).score).toBeCloseTo(log(plain).score, 6);
  });

  it("pairs plain words written side by side, never across other words or code spans", () => {
    const terms = ["rate", "limit", "event", "feed", "getcookie", "decode"].map((t) => ev(t, {}));
    expect(neighbourTerms("Add rate limiting to the events feed", terms)).toEqual([
      ["rate", "limit"],
      ["event", "feed"],
    ]);
    expect(neighbourTerms("let getCookie accept a custom decode function", terms)).toEqual([]);
    expect(neighbourTerms("the `events` feed", terms)).toEqual([]);
    expect(neighbourTerms("rate-limiting", terms)).toEqual([["rate", "limit"]]);
  });

  it("puts the file that defines a term before files that mention it more often", () => {
    const ranked = rankFiles({
      terms: [
        ev(
          "querystring",
          { "src/utils/url.ts": 2, "src/request.ts": 9, "src/adapter/lambda.ts": 6 },
          { defs: { "src/utils/url.ts": [fn("getQueryString", 12)] } },
        ),
      ],
      totalFiles: 200,
      imports: new Map(),
    });
    expect(order(ranked)[0]).toBe("src/utils/url.ts");
    expect(ranked[0]!.defines).toEqual([
      { term: "querystring", name: "getQueryString", kind: "function", line: 12, exact: false },
    ]);
  });

  it("takes a task word that names a file or folder as strong evidence, by whole words only", () => {
    const ranked = rankFiles({
      terms: [
        ev(
          "wsgi",
          { "httpx/_client.py": 3, "httpx/__init__.py": 2, "httpx/_transports/wsgi.py": 1 },
          { paths: ["httpx/_transports/wsgi.py", "tests/test_wsgi.py"] },
        ),
        // "type" is in most files: it says little.
        ev("type", {
          ...Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`httpx/m${i}.py`, 5])),
          "httpx/_types.py": 20,
          "httpx/_client.py": 40,
          "httpx/_transports/wsgi.py": 2,
        }),
      ],
      totalFiles: 100,
      imports: new Map(),
    });
    expect(order(ranked)[0]).toBe("httpx/_transports/wsgi.py");
    expect(ranked[0]!.pathTerms).toEqual([{ term: "wsgi", where: "file" }]);
    // The test is ranked, but flagged: it is listed as a test.
    expect(ranked.find((f) => f.path === "tests/test_wsgi.py")?.isTest).toBe(true);
  });

  it("lifts the files inside the area hint", () => {
    const terms = [ev("header", { "lib/a/headers.rb": 3, "lib/b/response.rb": 3 })];
    const plain = rankFiles({ terms, totalFiles: 50, imports: new Map() });
    const hinted = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map(),
      area: new Set(["lib/b/response.rb"]),
    });
    expect(order(plain)[0]).toBe("lib/a/headers.rb");
    expect(order(hinted)[0]).toBe("lib/b/response.rb");
    expect(hinted[0]!.inArea).toBe(true);
  });

  it("demotes docs, changelogs and examples unless the task is about them, and never ranks generated or project files", () => {
    const terms = [
      ev("locale", {
        "docs/content/languages.md": 30,
        "CHANGELOG.md": 12,
        "examples/i18n/main.go": 9,
        "langs/language.go": 4,
        "dist/bundle.js": 90,
        "package.json": 2,
      }),
    ];
    const ranked = rankFiles({ terms, totalFiles: 300, imports: new Map() });
    expect(order(ranked)[0]).toBe("langs/language.go");
    expect(order(ranked)).not.toContain("dist/bundle.js");
    expect(order(ranked)).not.toContain("package.json");
    const aboutDocs = rankFiles({ terms, totalFiles: 300, imports: new Map(), aboutDocs: true });
    expect(order(aboutDocs)[0]).toBe("docs/content/languages.md");
  });

  it("lifts a file wired to a strong candidate, less when it is wired to everything", () => {
    const terms = [
      ev("session", { "src/auth/session.ts": 9, "src/other.ts": 1, "src/routes/auth.ts": 1 }),
    ];
    const plain = rankFiles({ terms, totalFiles: 50, imports: new Map() });
    const wired = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map([["src/routes/auth.ts", ["src/auth/session.ts"]]]),
    });
    const score = (list: readonly RankedFile[], p: string) =>
      list.find((f) => f.path === p)?.score ?? 0;
    expect(score(wired, "src/routes/auth.ts")).toBeGreaterThan(score(plain, "src/routes/auth.ts"));
    expect(score(wired, "src/routes/auth.ts")).toBeGreaterThan(score(wired, "src/other.ts"));
    expect(wired.find((f) => f.path === "src/routes/auth.ts")!.imports).toEqual([
      "src/auth/session.ts",
    ]);

    // An index that imports twenty modules gains less from the one that matters.
    const modules = Array.from({ length: 20 }, (_, i) => `src/m${i}.ts`);
    const hub = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map([
        ["src/index.ts", ["src/auth/session.ts", ...modules]],
        ["src/routes/auth.ts", ["src/auth/session.ts"]],
      ]),
    });
    expect(score(hub, "src/index.ts")).toBeLessThan(score(hub, "src/routes/auth.ts"));
  });

  it("puts named files first, drops excluded ones and lifts the files a comment was about", () => {
    const terms = [
      ev("session", { "src/auth/session.ts": 9, "src/other.ts": 1, "src/auth/cookie.ts": 1 }),
    ];
    const steered = rankFiles({
      terms,
      totalFiles: 50,
      imports: new Map(),
      include: new Set(["src/other.ts"]),
      exclude: new Set(["src/auth/session.ts"]),
    });
    expect(steered[0]).toMatchObject({ path: "src/other.ts", named: true });
    expect(order(steered)).not.toContain("src/auth/session.ts");
    const focused = rankFiles({
      terms: [ev("session", { "src/auth/session.ts": 3, "src/db/store.ts": 3 })],
      totalFiles: 50,
      imports: new Map(),
      focus: new Set(["src/db/store.ts"]),
    });
    expect(focused[0]).toMatchObject({ path: "src/db/store.ts", focused: true });
  });

  it("damps a term found in most files or cut short", () => {
    const everywhere = Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`f${i}.ts`, 9]));
    const ranked = rankFiles({
      terms: [
        ev(
          "invoice",
          { "src/billing/invoice.ts": 5, "docs/notes.md": 1 },
          { paths: ["src/billing/invoice.ts"] },
        ),
        ev("round", { "src/billing/invoice.ts": 1, "src/util/math.ts": 3 }),
        ev("the", everywhere, { truncated: true }),
      ],
      totalFiles: 100,
      imports: new Map(),
    });
    expect(order(ranked)[0]).toBe("src/billing/invoice.ts");
    expect(order(ranked).indexOf("src/util/math.ts")).toBeLessThan(
      order(ranked).indexOf("f0.ts") === -1 ? Infinity : order(ranked).indexOf("f0.ts"),
    );
  });

  it("is deterministic: ties break by path", () => {
    const terms = [ev("x", { "b.ts": 1, "a.ts": 1 })];
    expect(order(rankFiles({ terms, totalFiles: 10, imports: new Map() }))).toEqual([
      "a.ts",
      "b.ts",
    ]);
  });
});

describe("the import graph among the files to change", () => {
  it("returns the listed files as nodes and the imports among them as edges", () => {
    const ranked = rankFiles({
      terms: [
        {
          term: "login",
          weight: 1,
          hits: new Map([
            ["src/routes/login.js", 3],
            ["src/routes/index.js", 1],
            ["src/db/users.js", 1],
          ]),
          pathMatches: new Set(),
          defs: new Map(),
          truncated: false,
        },
      ],
      totalFiles: 20,
      imports: new Map([
        ["src/routes/index.js", ["src/routes/login.js"]],
        ["src/routes/login.js", ["src/db/users.js", "src/auth/password.js"]],
      ]),
    });
    const graph = changeGraph(
      ["src/routes/login.js", "src/routes/index.js", "src/db/users.js", "src/routes/github.js"],
      ranked,
      {
        isNew: new Set(["src/routes/github.js"]),
        wired: [{ from: "src/routes/index.js", to: "src/routes/github.js" }],
      },
    );
    expect(graph).toEqual({
      nodes: [
        { path: "src/routes/login.js", isNew: false },
        { path: "src/routes/index.js", isNew: false },
        { path: "src/db/users.js", isNew: false },
        { path: "src/routes/github.js", isNew: true },
      ],
      edges: [
        { from: "src/routes/index.js", to: "src/routes/github.js" },
        { from: "src/routes/index.js", to: "src/routes/login.js" },
        { from: "src/routes/login.js", to: "src/db/users.js" },
      ],
    });
  });
});

describe("the repository's conventions for new files", () => {
  it("numbers the next migration like the ones before it", () => {
    const [folder] = migrationFolders([
      "migrations/001_users.sql",
      "migrations/002_invoices.sql",
      "src/app.js",
    ]);
    expect(folder).toMatchObject({
      dir: "migrations",
      width: 3,
      separator: "_",
      next: 3,
      extension: ".sql",
    });
    expect(nextMigrationPath(folder!, ["linked", "identities"])).toBe(
      "migrations/003_linked_identities.sql",
    );
    const [unpadded] = migrationFolders(["db/migrations/9-a.sql", "db/migrations/10-b.sql"]);
    expect(nextMigrationPath(unpadded!, ["user", "tokens"])).toBe(
      "db/migrations/11-user-tokens.sql",
    );
    const [timestamps] = migrationFolders([
      "db/migrate/20240101120000_create_users.rb",
      "db/migrate/20240301090000_add_email.rb",
    ]);
    expect(nextMigrationPath(timestamps!, ["add", "tokens"])).toBe(
      "db/migrate/YYYYMMDDHHMMSS_add_tokens.rb",
    );
    // Numbered files elsewhere are not migrations; tests never are.
    expect(migrationFolders(["src/steps/01_a.ts", "src/steps/02_b.ts"])).toEqual([]);
    expect(migrationFolders(["test/migrations/001_a.sql", "test/migrations/002_b.sql"])).toEqual(
      [],
    );
  });

  it("names a new file the way its neighbours are named", () => {
    expect(nameStyle(["user-store", "session-cache", "login"])).toBe("kebab");
    expect(nameStyle(["user_store", "login"])).toBe("snake");
    expect(nameStyle(["UserStore", "Login"])).toBe("pascal");
    expect(joinWords(["github", "oauth"], "camel")).toBe("githubOauth");
    expect(
      newFilePath(
        "src/routes",
        ["src/routes/login.js", "src/routes/billing.js"],
        ["github", "oauth"],
      ),
    ).toBe("src/routes/github-oauth.js");
    expect(
      newFilePath("app/api", ["app/api/users.py", "app/api/billing.py"], ["github", "oauth"]),
    ).toBe("app/api/github_oauth.py");
    expect(
      newFilePath(
        "src/main/java/x/handlers",
        ["src/main/java/x/handlers/LoginHandler.java"],
        ["github", "oauth"],
      ),
    ).toBe("src/main/java/x/handlers/GithubOauth.java");
  });
});

describe("what the plan says a file is about", () => {
  it("reads the task's kind from its verb", () => {
    expect(taskKind("Add GitHub OAuth login")).toBe("add");
    expect(taskKind("feat(router): support wildcards")).toBe("add");
    expect(taskKind("Fix escaped path matcher over-matching")).toBe("fix");
    expect(taskKind("Drop 'Response(on_close=...)' from API")).toBe("remove");
    expect(taskKind("Move serve implementation out of WithGracefulShutdown")).toBe("change");
  });

  it("ties each file to the clause of the task its evidence is in", () => {
    const clauses = taskClauses(
      "Add GitHub OAuth login that reuses the existing session store and links GitHub identities to users",
    );
    expect(clauses).toEqual([
      "Add GitHub OAuth login",
      "reuses the existing session store",
      "links GitHub identities to users",
    ]);
    const file = (path: string, terms: string[]): RankedFile => ({
      path,
      score: 1,
      own: 1,
      kind: "source",
      termHits: terms.map((term) => ({ term, count: 1 })),
      pathTerms: [{ term: terms[0]!, where: "file" }],
      defines: [],
      inArea: false,
      imports: [],
      importedBy: [],
      isTest: false,
      named: false,
      focused: false,
      pointers: [],
    });
    expect(clauseFor(file("src/session/store.js", ["store", "session", "user"]), clauses)).toBe(
      "reuses the existing session store",
    );
    expect(clauseFor(file("src/db/users.js", ["user"]), clauses)).toBe(
      "links GitHub identities to users",
    );
  });
});
