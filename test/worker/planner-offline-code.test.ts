import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import {
  definitionSearch,
  nameMatch,
  parseDefinition,
} from "../../src/planner/models/offline/repository/definitions.ts";
import {
  importersSearch,
  importSpecifiers,
  lineImports,
  resolveImport,
} from "../../src/planner/models/offline/repository/imports.ts";
import { symbolSpans } from "../../src/planner/models/offline/repository/line-refs.ts";
import { matchPath, pathKind } from "../../src/planner/models/offline/repository/paths.ts";
import {
  testGlobs,
  testPairing,
  testSubject,
} from "../../src/planner/models/offline/repository/tests.ts";
import {
  deriveTerms,
  identifierSpellings,
  parseTask,
  searchPattern,
  splitIdentifier,
} from "../../src/planner/models/offline/task/terms.ts";
import { compileLinePattern } from "../../src/planner/tools/line-pattern.ts";
import { requiredLiterals } from "../../src/planner/tools/required-literals.ts";

/**
 * How the offline planner reads code: task words, paths, definitions and imports. Pure
 * functions, tested line by line; the patterns it hands Grep are also compiled by Grep's own
 * engine (RE2) here, so a pattern that runs in JavaScript but not in Grep fails.
 */

/** A pattern as Grep runs it (RE2, line by line). */
function grep(pattern: string): (line: string) => boolean {
  const compiled = compileLinePattern(pattern, { ignoreCase: false });
  if (!compiled.ok) throw new Error(compiled.error);
  return (line) => compiled.value.testLine(line);
}

describe("task words", () => {
  it("splits an area hint off the task", () => {
    expect(parseTask("Add `retry.jitter` option (area: source/utils)")).toEqual({
      text: "Add `retry.jitter` option",
      area: "source/utils",
    });
    expect(parseTask("Fix the router [area: router]")).toEqual({
      text: "Fix the router",
      area: "router",
    });
    expect(parseTask("Fix the router")).toEqual({ text: "Fix the router", area: null });
  });

  it("keeps brand capitalisation whole instead of splitting off a letter", () => {
    expect(splitIdentifier("OAuth")).toEqual(["oauth"]);
    expect(splitIdentifier("XMLParser")).toEqual(["xml", "parser"]);
    expect(deriveTerms("Add GitHub OAuth login").map((t) => t.text)).toEqual([
      "github",
      "oauth",
      "login",
    ]);
  });

  it("takes words in backticks as names written as code", () => {
    const terms = deriveTerms("Add `Find` to `Routes` interface");
    expect(terms.find((t) => t.text === "find")).toMatchObject({ weight: 2, code: true });
    expect(terms.find((t) => t.text === "route")).toMatchObject({ weight: 2, code: true });
    expect(terms.find((t) => t.text === "interface")).toMatchObject({ weight: 1 });
  });

  it("searches an identifier in the spellings code uses for it", () => {
    expect(identifierSpellings("ReplacePairs")).toEqual([
      "ReplacePairs",
      "replacePairs",
      "replace_pairs",
      "REPLACE_PAIRS",
    ]);
    const term = deriveTerms("Use RoutePath in URLFormat middleware").find(
      (t) => t.text === "urlformat",
    )!;
    const matches = grep(searchPattern(term));
    expect(matches("func URLFormat(next http.Handler) http.Handler {")).toBe(true);
    expect(matches("// see url_format.go")).toBe(true);
    expect(matches("notURLFormat()")).toBe(false);
  });

  it("gives Grep plain literals to rule files out with, for every term pattern", () => {
    expect(requiredLiterals(searchPattern({ text: "session", weight: 1 }))).toEqual([
      ["session", "Session", "SESSION"],
    ]);
    expect(
      requiredLiterals(
        searchPattern({ text: "x", weight: 2, spellings: ["URLFormat", "url_format"] }),
      ),
    ).toEqual([["URLFormat", "url_format"]]);
  });
});

describe("paths", () => {
  it("tells source from tests, docs, changelogs, examples, generated and project files", () => {
    const kinds = Object.fromEntries(
      [
        "src/auth/login.ts",
        "lib/sinatra/base.rb",
        "src/main/java/org/jsoup/nodes/Node.java",
        "test/auth/login.test.ts",
        "pkg/mux_test.go",
        "tests/test_users.py",
        "src/test/java/org/jsoup/nodes/NodeTest.java",
        "spec/base_spec.rb",
        "docs/guide.md",
        "CHANGELOG.md",
        "History.markdown",
        "_examples/rest/main.go",
        "dist/bundle.js",
        "vendor/x/y.go",
        "package.json",
        "README.md",
        "benches/route.rs",
        "config/app.yaml",
        "migrations/001_users.sql",
        ".github/workflows/ci.yml",
      ].map((p) => [p, pathKind(p)]),
    );
    expect(kinds).toEqual({
      "src/auth/login.ts": "source",
      "lib/sinatra/base.rb": "source",
      "src/main/java/org/jsoup/nodes/Node.java": "source",
      "test/auth/login.test.ts": "test",
      "pkg/mux_test.go": "test",
      "tests/test_users.py": "test",
      "src/test/java/org/jsoup/nodes/NodeTest.java": "test",
      "spec/base_spec.rb": "test",
      "docs/guide.md": "docs",
      "CHANGELOG.md": "changelog",
      "History.markdown": "changelog",
      "_examples/rest/main.go": "example",
      "dist/bundle.js": "generated",
      "vendor/x/y.go": "generated",
      "package.json": "project",
      "README.md": "project",
      "benches/route.rs": "bench",
      "config/app.yaml": "config",
      "migrations/001_users.sql": "source",
      ".github/workflows/ci.yml": "other",
    });
  });

  it("matches a term to a whole word of a file or folder name, never inside a word", () => {
    expect(matchPath("wsgi", "httpx/_transports/wsgi.py")).toEqual({ strength: 1, where: "file" });
    expect(matchPath("warn", "lib/warnings.js")).toEqual({ strength: 1, where: "file" });
    expect(matchPath("remov", "src/poetry/console/commands/remove.py")).toMatchObject({
      where: "file",
    });
    expect(matchPath("urlformat", "middleware/url_format.go")).toEqual({
      strength: 1,
      where: "file",
    });
    expect(matchPath("migr", "db/migrations/001_init.sql")).toEqual({
      strength: 1,
      where: "folder",
    });
    expect(matchPath("journald", "modules/logging/journaldencoder.go")).toEqual({
      strength: 0.5,
      where: "file",
    });
    expect(matchPath("rate", "src/generate.ts")).toBeNull();
    expect(matchPath("port", "src/report/import.ts")).toBeNull();
  });

  it("pairs tests with the code they are named after, in every convention", () => {
    expect(testSubject("test/auth/login.test.ts")).toBe("login");
    expect(testSubject("tests/test_users.py")).toBe("users");
    expect(testSubject("mux_test.go")).toBe("mux");
    expect(testSubject("src/test/java/org/x/ParserTest.java")).toBe("parser");
    expect(testSubject("spec/base_spec.rb")).toBe("base");
    expect(testSubject("src/a.ts")).toBeNull();
    expect(testPairing("test/auth/login.test.ts", "src/auth/login.ts")).toBe(2);
    expect(testPairing("tests/test_users.py", "app/users/__init__.py")).toBe(2);
    expect(testPairing("tests/test_users.py", "app/users/service.py")).toBe(0);
    expect(testGlobs("src/main/java/org/x/Parser.java")).toContain("**/ParserTest.*");
    expect(testGlobs("lib/x/base.rb")).toContain("**/base_spec.*");
  });
});

describe("the definitions index", () => {
  const cases: [path: string, line: string, name: string | null, kind?: string][] = [
    [
      "src/a.ts",
      "export async function getQueryString(url: string) {",
      "getQueryString",
      "function",
    ],
    ["src/a.ts", "export default class SessionStore {", "SessionStore", "class"],
    ["src/a.ts", "export interface RetryOptions {", "RetryOptions", "type"],
    ["src/a.ts", "export const FEED_LIMIT = 100;", "FEED_LIMIT", "constant"],
    ["src/a.ts", "  async create(userId) {", "create", "method"],
    ["src/a.ts", "  jitter?: boolean | ((delay: number) => number);", "jitter", "field"],
    ["lib/a.js", "Command.prototype.parseArg = function (value) {", "parseArg", "function"],
    ["lib/a.js", "  onError: (err) => {", "onError", "function"],
    ["src/a.ts", "router.post('/login', loginRoute);", "/login", "route"],
    ["src/a.ts", "  if (session) {", null],
    ["src/a.ts", "  return createSession(id);", null],
    ["app/a.py", "    async def handle_request(self, request):", "handle_request", "function"],
    ["app/a.py", "class WSGITransport(BaseTransport):", "WSGITransport", "class"],
    ["app/a.py", "DEFAULT_TIMEOUT = 5.0", "DEFAULT_TIMEOUT", "constant"],
    ["app/a.py", '@app.route("/users/<id>")', "/users/<id>", "route"],
    [
      "mux.go",
      "func (mx *Mux) Find(rctx *Context, method, path string) string {",
      "Find",
      "function",
    ],
    ["mux.go", "type Routes interface {", "Routes", "type"],
    [
      "mux.go",
      '\tSampleInterval caddy.Duration `json:"interval,omitempty"`',
      "SampleInterval",
      "field",
    ],
    ["mux.go", '\tr.Get("/articles", listArticles)', "/articles", "route"],
    ["src/lib.rs", "pub(crate) async fn serve<L>(listener: L) -> Serve<L> {", "serve", "function"],
    ["src/lib.rs", "pub struct WithGracefulShutdown<L, M, S, F> {", "WithGracefulShutdown", "type"],
    ["src/lib.rs", "impl<T> FromRequest<S> for Form<T>", "Form", "type"],
    ["src/X.java", "public class XmlTreeBuilder extends TreeBuilder {", "XmlTreeBuilder", "class"],
    [
      "src/X.java",
      "    public static Document parse(String html, String baseUri) {",
      "parse",
      "method",
    ],
    [
      "src/X.java",
      "    boolean isSafeAttribute(String tagName, Element el, Attribute attr) {",
      "isSafeAttribute",
      "method",
    ],
    ["src/X.java", "        return parse(html);", null],
    ["lib/x.rb", "    def self.settings", "settings", "method"],
    ["lib/x.rb", "  class IndifferentHash < Hash", "IndifferentHash", "class"],
    ["lib/x.rb", "    set :server, %w[puma webrick]", "server", "key"],
    ["lib/x.rb", "  attr_accessor :template_cache", "template_cache", "field"],
    ["config/app.yaml", "retry_limit: 3", "retry_limit", "key"],
    ["src/a.ts", "// export function old() {}", null],
  ];
  it.each(cases)("%s: %s", (path, line, name, kind) => {
    const d = parseDefinition(path, line);
    if (name === null) expect(d).toBeNull();
    else expect(d).toEqual({ name, kind });
  });

  it("finds those lines with one RE2 pattern per few terms, under Grep's limits", () => {
    const pattern = definitionSearch(["session", "find", "route", "retry", "parse"]);
    expect(pattern.length).toBeLessThanOrEqual(1_000);
    expect(RE2JS.compile(RE2JS.translateRegExp(pattern)).programSize()).toBeLessThan(2_000);
    // Grep rules out files without any spelling of a term at `indexOf` speed.
    expect(requiredLiterals(pattern)?.[0]).toEqual(expect.arrayContaining(["session", "Retry"]));
    const matches = grep(pattern);
    for (const [, line, name] of cases)
      if (name !== null && /session|find|route|retry|parse/i.test(name))
        expect(matches(line), line).toBe(true);
    expect(matches("  return createSession(id);")).toBe(false);
    expect(matches("  retry: options.retry,")).toBe(false);
  });

  it("matches a defined name to a term by whole words, the task's identifier best", () => {
    expect(nameMatch("createSession", "session")).toBe(1);
    expect(nameMatch("SessionStore", "session")).toBe(1);
    expect(nameMatch("getQueryString", "getquerystring")).toBe(2);
    expect(nameMatch("obsession", "session")).toBe(0);
    expect(nameMatch("sessionless", "session")).toBe(0);
  });

  it("spans each definition up to the next one as deep or shallower", () => {
    expect(
      symbolSpans("a.py", [
        [1, "class A:"],
        [2, "    def run(self):"],
        [3, "        return 1"],
        [4, "    def stop(self):"],
        [5, "        pass"],
        [6, "LIMIT = 3"],
      ]),
    ).toEqual([
      { name: "A", kind: "class", start: 1, end: 5 },
      { name: "run", kind: "function", start: 2, end: 3 },
      { name: "stop", kind: "function", start: 4, end: 5 },
      { name: "LIMIT", kind: "constant", start: 6, end: 6 },
    ]);
  });
});

describe("imports", () => {
  const known = new Set([
    "src/auth/session.ts",
    "src/routes/auth.ts",
    "src/lib/db/index.ts",
    "pkg/store/store.go",
    "pkg/store/cache.go",
    "middleware/realip.go",
    "app/models/user.py",
    "src/util/mod.rs",
    "src/util/fmt.rs",
    "axum/src/serve/mod.rs",
    "axum/src/serve/listener.rs",
    "src/main/java/org/jsoup/nodes/Document.java",
    "lib/sinatra/base.rb",
    "lib/sinatra/indifferent_hash.rb",
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
    // A Go import reaches the package: every file of its folder.
    expect(resolveImport("cmd/main.go", "example.com/x/pkg/store", known)).toEqual([
      "pkg/store/cache.go",
      "pkg/store/store.go",
    ]);
    expect(resolveImport("mux.go", "github.com/go-chi/chi/v5/middleware", known)).toEqual([
      "middleware/realip.go",
    ]);
    expect(resolveImport("src/main.rs", "crate::util::fmt", known)).toEqual(["src/util/fmt.rs"]);
    // A workspace member's crate root is its own src/.
    expect(resolveImport("axum/src/routing/mod.rs", "crate::serve::listener", known)).toEqual([
      "axum/src/serve/listener.rs",
    ]);
    expect(resolveImport("axum/src/serve/mod.rs", "mod:listener", known)).toEqual([
      "axum/src/serve/listener.rs",
    ]);
  });

  it("extracts and resolves Java and Ruby imports", () => {
    expect(
      importSpecifiers(
        "src/main/java/org/jsoup/parser/Parser.java",
        "import org.jsoup.nodes.Document;\n",
      ),
    ).toEqual(["org.jsoup.nodes.Document"]);
    expect(
      resolveImport(
        "src/main/java/org/jsoup/parser/Parser.java",
        "org.jsoup.nodes.Document",
        known,
      ),
    ).toEqual(["src/main/java/org/jsoup/nodes/Document.java"]);
    expect(
      importSpecifiers(
        "lib/sinatra/main.rb",
        "require 'sinatra/base'\nrequire_relative 'indifferent_hash'\n",
      ),
    ).toEqual(["sinatra/base", "relative:indifferent_hash"]);
    expect(resolveImport("lib/sinatra/main.rb", "sinatra/base", known)).toEqual([
      "lib/sinatra/base.rb",
    ]);
    expect(resolveImport("lib/sinatra/main.rb", "relative:indifferent_hash", known)).toEqual([
      "lib/sinatra/indifferent_hash.rb",
    ]);
  });

  it("finds who imports a module with one Grep pattern, and reads its rows line by line", () => {
    const matches = grep(importersSearch(["session", "store", "Document", "base"]));
    for (const line of [
      'import { a } from "../auth/session.js";',
      'const { s } = require("./session");',
      "from app.session import Session",
      '\t"example.com/x/pkg/store"',
      "use crate::session::Store;",
      "import org.jsoup.nodes.Document;",
      "require 'sinatra/base'",
    ])
      expect(matches(line), line).toBe(true);
    expect(matches("const session = store.get(id);")).toBe(false);
    expect(lineImports("mux.go", '\t"github.com/go-chi/chi/v5/middleware"')).toEqual([
      "github.com/go-chi/chi/v5/middleware",
    ]);
    expect(lineImports("src/a.ts", 'import { x } from "./session.js";')).toEqual(["./session.js"]);
  });
});
