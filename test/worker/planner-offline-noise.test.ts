/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { takenOption } from "../../src/planner/models/offline/draft/steps.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { coveringTests, testPairing } from "../../src/planner/models/offline/repository/tests.ts";
import { commandOf, taskKind } from "../../src/planner/models/offline/task/intent.ts";
import { COMMON_WORD_WEIGHT, deriveTerms } from "../../src/planner/models/offline/task/terms.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { lineOf, listed } from "../support/plan-lists.ts";
import { runUntilStopped } from "./planner/helpers.ts";

/**
 * The noise issue 31 found in plans a new user got on flask, hono and requests, each on the
 * files it came from: `flask-noise` (Flask's paths, classes, functions and test names, bodies
 * cut down: `json/tag.py` defines `check` on every tag, `Request.max_content_length` lives in
 * `wrappers.py` and is tested in `tests/test_request.py`, `tests/test_json_tag.py` is named
 * after the feature, `cli.py` holds `flask run` beside its helpers), `hono-cookie` (Hono's cookie
 * helper, cookie utilities and the two middlewares with a `maxAge` option, unchanged) and
 * `hono-like`.
 */

function load(glob: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(glob).map(([k, v]) => [k.slice(prefix.length), v]));
}
const HONO = load(
  import.meta.glob("../fixtures/hono-like/**/*", { query: "?raw", import: "default", eager: true }),
  "../fixtures/hono-like/",
);
const HONO_COOKIE = load(
  import.meta.glob("../fixtures/hono-cookie/**/*", {
    query: "?raw",
    import: "default",
    eager: true,
  }),
  "../fixtures/hono-cookie/",
);
const FLASK = load(
  import.meta.glob("../fixtures/flask-noise/**/*", {
    query: "?raw",
    import: "default",
    eager: true,
  }),
  "../fixtures/flask-noise/",
);

async function planOn(files: Record<string, string>, prompt: string): Promise<string> {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt } });
  expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
  expect(port.pendingWait()?.kind).toBe("plan");
  return port.readPlan()!.content;
}

describe("the offline planner leaves out what only the task's common words point at", () => {
  it("'check that SECRET_KEY is set' changes the sessions, not json/tag.py for its `check` methods", async () => {
    const plan = await planOn(
      FLASK,
      "Check that SECRET_KEY is set before the session cookie is signed, and raise a clear error when it is missing",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/sessions.py");
    expect(listed(plan, "Files to change")).not.toContain("src/flask/json/tag.py");
    // Listed at most as a file to check (sessions.py imports it), never for defining `check`.
    expect(lineOf(plan, "src/flask/json/tag.py")).not.toContain("defines `check`");
  });

  it("'should accept an onError option' lists no other middleware for its Accept header or its options type", async () => {
    const plan = await planOn(
      HONO,
      "bodyLimit should accept an onError option so the 413 response can be customised",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/middleware/body-limit/index.ts");
    const all = [...listed(plan, "Files to change"), ...listed(plan, "Files to check")];
    expect(all).not.toContain("src/middleware/language/language.ts");
  });

  it("'the request id middleware should accept a generator option' lists neither the language detector nor the cors options", async () => {
    const plan = await planOn(HONO, "The request id middleware should accept a generator option");
    expect(listed(plan, "Files to change")[0]).toBe("src/middleware/request-id/index.ts");
    const all = [...listed(plan, "Files to change"), ...listed(plan, "Files to check")];
    expect(all).not.toContain("src/middleware/language/language.ts");
    expect(all).not.toContain("src/middleware/cors/index.ts");
  });
});

describe("the offline planner pairs the tests that exist", () => {
  it("pairs tests/test_request.py with wrappers.py for `max_content_length` instead of saying no test is paired", async () => {
    const plan = await planOn(
      FLASK,
      "Allow setting max_content_length per request instead of only through the MAX_CONTENT_LENGTH config",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/wrappers.py");
    expect(listed(plan, "Tests")).toContain("tests/test_request.py");
    expect(lineOf(plan, "tests/test_request.py")).toContain("tests `src/flask/wrappers.py`");
    expect(plan).not.toContain("No test is paired with `src/flask/wrappers.py`");
    expect(plan).toMatch(/Extend `tests\/test_request\.py` with a case/);
  });

  it("pairs tests/test_json_tag.py, named after the feature, with json/tag.py", async () => {
    const plan = await planOn(
      FLASK,
      "The tagged JSON serializer used for sessions cannot serialize a frozenset; add a tag for it",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/json/tag.py");
    expect(listed(plan, "Tests")[0]).toBe("tests/test_json_tag.py");
    expect(lineOf(plan, "tests/test_json_tag.py")).toContain("tests `src/flask/json/tag.py`");
    expect(plan).not.toContain("No test is paired with `src/flask/json/tag.py`");
  });
});

describe("the offline planner notices an option the code already has", () => {
  it("sees that getCookie already takes `prefix?: CookiePrefixOptions`", async () => {
    const plan = await planOn(
      HONO_COOKIE,
      "getCookie should accept a prefix option so __Secure- and __Host- cookies can be read",
    );
    const line = lineOf(plan, "src/helper/cookie/index.ts");
    expect(line).toContain("`getCookie` (lines 27–49) already takes `prefix`");
    expect(line).toContain("`prefix?: CookiePrefixOptions`");
    expect(plan).not.toMatch(/`getCookie` \([^)]*\) takes no options object/);
  });

  it("sees that setCookie takes `maxAge` through `opt?: CookieOptions`, and writes no circular 'model it on the one … already has' step", async () => {
    const plan = await planOn(HONO_COOKIE, "Add a maxAge option to setCookie");
    expect(listed(plan, "Files to change")[0]).toBe("src/helper/cookie/index.ts");
    const line = lineOf(plan, "src/helper/cookie/index.ts");
    expect(line).toContain("already takes `maxAge` through `opt?: CookieOptions`");
    expect(line).toContain("line 21 of `src/utils/cookie.ts`");
    expect(plan).not.toContain("takes no options object");
    // `CookieOptions` is what setCookie takes: the option itself, not a model to follow.
    expect(plan).not.toMatch(/Model `maxAge` on the one/);
  });
});

describe("a new option of a command-line command", () => {
  it("goes to the command's own function (`run_command` of `flask run`), not a helper of the module", async () => {
    const plan = await planOn(
      FLASK,
      "Add an --exclude-patterns option to flask run so the reloader can ignore files matching a pattern",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/cli.py");
    const line = lineOf(plan, "src/flask/cli.py");
    expect(line).toMatch(/^1\. `src\/flask\/cli\.py` — `run_command` \(lines \d+–\d+\)/);
    expect(line).not.toContain("find_best_app");
  });
});

describe("the rules behind them", () => {
  it("weighs a common word of the prose low, unless the task writes it as code", () => {
    const check = deriveTerms("Check that the key is set").find((t) => t.text === "check");
    expect(check).toMatchObject({ weight: COMMON_WORD_WEIGHT, common: true });
    const code = deriveTerms("Call `check` before signing").find((t) => t.text === "check");
    expect(code?.common).toBeUndefined();
  });

  it("pairs a test named after the feature, and one that exercises what a file defines", () => {
    expect(testPairing("tests/test_json_tag.py", "src/flask/json/tag.py")).toBe(2);
    expect(testPairing("tests/test_json.py", "src/flask/json/tag.py")).toBe(0);
    const tests = [
      { path: "tests/test_request.py", names: ["test_limit_config"] },
      { path: "tests/test_views.py", names: ["test_max_content_length_view"] },
      { path: "tests/test_basic.py", names: ["test_run"] },
    ];
    expect(coveringTests(["Request", "max_content_length"], tests)).toEqual([
      "tests/test_request.py",
      "tests/test_views.py",
    ]);
    // Short names pair nothing: `run` is in every other test's name.
    expect(coveringTests(["run"], tests)).toEqual([]);
  });

  it("reads the command a new flag is for, and 'X should accept a Y option' as adding", () => {
    expect(commandOf("Add an --exclude-patterns option to flask run")).toBe("run");
    expect(commandOf("add a --dry-run flag to the install command")).toBe("install");
    expect(commandOf("Add a skip option to the logger middleware")).toBeNull();
    expect(taskKind("getCookie should accept a prefix option")).toBe("add");
    expect(taskKind("The parser should handle empty input")).toBe("change");
  });

  it("sees an option a signature already takes, itself or through its options type", () => {
    expect(
      takenOption(
        "export const getCookie = (c, key?, prefix?: CookiePrefixOptions) => {",
        "prefix",
        [],
      ),
    ).toEqual({ param: "prefix?: CookiePrefixOptions", declared: null });
    expect(takenOption("def run_command(info, host, port, reload=None):", "reload", [])).toEqual({
      param: "reload=None",
      declared: null,
    });
    const declared = {
      path: "src/utils/cookie.ts",
      line: 21,
      text: "maxAge?: number",
      within: "CookieOptions",
    };
    const existing = [{ name: "maxAge", asOption: true, places: [declared], more: 0 }];
    const setCookie =
      "export const setCookie = (c: Context, name: string, value: string, opt?: CookieOptions): void => {";
    expect(takenOption(setCookie, "maxAge", existing)).toEqual({
      param: "opt?: CookieOptions",
      declared,
    });
    // An options type that does not declare it: not taken.
    expect(
      takenOption(setCookie, "maxAge", [
        { ...existing[0]!, places: [{ ...declared, within: "CORSOptions" }] },
      ]),
    ).toBeNull();
    expect(
      takenOption("export const serialize = (name: string) => {", "maxAge", existing),
    ).toBeNull();
  });
});
