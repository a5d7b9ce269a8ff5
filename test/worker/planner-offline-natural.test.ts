/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { listedFiles as allListed, lineOf, listed } from "../support/plan-lists.ts";
import { runUntilStopped } from "./planner/helpers.ts";

/**
 * The natural tasks of issue 24, as a new user writes them, on two fixtures: `hono-like` (the
 * folders and kinds of files of hono — middleware with co-located tests, a big JSX typings
 * file, runtime-test entry points, a test helper app, a package.json over 20,000 characters)
 * and `flask-like` (real files of Flask: `src/flask/config.py`, `tests/test_config.py`, its
 * pyproject.toml). Each test asserts what the plan must say, not the whole plan.
 */

function load(glob: Record<string, string>, prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(glob).map(([k, v]) => [k.slice(prefix.length), v]));
}
const HONO = load(
  import.meta.glob("../fixtures/hono-like/**/*", { query: "?raw", import: "default", eager: true }),
  "../fixtures/hono-like/",
);
const FLASK = load(
  import.meta.glob("../fixtures/flask-like/**/*", {
    query: "?raw",
    import: "default",
    eager: true,
  }),
  "../fixtures/flask-like/",
);

async function planOn(files: Record<string, string>, prompt: string) {
  const port = new MemoryPort({ files, facts: { planner: "offline", prompt } });
  const planner = offlinePlanner();
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  expect(port.pendingWait()?.kind).toBe("plan");
  return { port, planner, plan: port.readPlan()!.content };
}

function section(plan: string, heading: string): string {
  const start = plan.indexOf(`\n## ${heading}\n`);
  if (start === -1) return "";
  const rest = plan.slice(start + 1);
  const end = rest.indexOf("\n## ", 1);
  return end === -1 ? rest : rest.slice(0, end);
}

const LOGGER_TASK =
  "add a skip option to the logger middleware so health checks can be left out of the log";

describe("the offline planner on the words users write (hono-like)", () => {
  it("puts the logger middleware first for 'a skip option to the logger middleware', with its co-located test and the skip option to model it on", async () => {
    const { plan } = await planOn(HONO, LOGGER_TASK);
    expect(listed(plan, "Files to change")[0]).toBe("src/middleware/logger/index.ts");
    expect(listed(plan, "Files to change")).not.toContain("src/jsx/intrinsic-elements.ts");
    expect(listed(plan, "Tests")[0]).toBe("src/middleware/logger/index.test.ts");
    expect(lineOf(plan, "src/middleware/logger/index.test.ts")).toContain(
      "tests `src/middleware/logger/index.ts`",
    );
    // The step names the place: the function that takes no options yet, and the option that
    // already exists elsewhere.
    const steps = section(plan, "Steps");
    expect(steps).toMatch(/`logger` \(lines \d+–\d+\) takes no options object/);
    expect(steps).toMatch(
      /Model `skip` on the one `src\/middleware\/trailing-slash\/index\.ts` already has/,
    );
    expect(steps).toMatch(
      /Extend `src\/middleware\/logger\/index\.test\.ts` with a case for `skip`/,
    );
    expect(steps).not.toMatch(/for '.*'/);
  });

  it("never calls runtime-test entry points, fixture apps or test helpers the tests of the code", async () => {
    for (const task of [LOGGER_TASK, "let getCookie accept a custom decode function"]) {
      const { plan } = await planOn(HONO, task);
      const tests = listed(plan, "Tests");
      expect(tests.length).toBeGreaterThan(0);
      for (const t of tests) expect(t).not.toMatch(/^runtime-tests\/|^src\/test-utils\//);
      expect(plan).not.toMatch(
        /tests `[^`]*` .*runtime-tests|`src\/test-utils\/setup-app\.ts` — tests/,
      );
    }
  });

  it("finds the file that defines getCookie first, names the function (not its type), and is not led to JSX by the parts of decodeURIComponent", async () => {
    const { plan } = await planOn(HONO, "let getCookie accept a custom decode function");
    expect(listed(plan, "Files to change")[0]).toBe("src/helper/cookie/index.ts");
    expect(lineOf(plan, "src/helper/cookie/index.ts")).toMatch(
      /`getCookie` \(lines \d+–\d+\) — `export const getCookie/,
    );
    expect(allListed(plan)).not.toContain("src/middleware/jsx-renderer/index.ts");
    expect(listed(plan, "Files to change")).not.toContain("src/jsx/components.ts");
    expect(listed(plan, "Tests")[0]).toBe("src/helper/cookie/index.test.ts");
  });

  it("notices that cors already has maxAge and says where, instead of adding a second one", async () => {
    const { plan } = await planOn(HONO, "add a validated maxAge option to cors");
    expect(listed(plan, "Files to change")[0]).toBe("src/middleware/cors/index.ts");
    expect(lineOf(plan, "src/middleware/cors/index.ts")).toMatch(
      /`maxAge` is already here \(`maxAge\?: number` in `CORSOptions`, line \d+\): validate it where `cors` reads it/,
    );
    expect(section(plan, "Context")).toMatch(
      /Already in the code:\n {2}- `maxAge`: `src\/middleware\/cors\/index\.ts` line \d+ \(in `CORSOptions`\)/,
    );
    // Another module with an option of the same name is one to check, not to change.
    expect(listed(plan, "Files to change")).not.toContain("src/middleware/language/language.ts");
  });

  it("reads a package.json over 20,000 characters for the project's name and its scripts", async () => {
    expect(HONO["package.json"]!.length).toBeGreaterThan(20_000);
    const { plan } = await planOn(HONO, LOGGER_TASK);
    expect(plan).toContain("- Repository: hono-like — Node.js");
    expect(section(plan, "Verification")).toContain("- `npm test` — package.json script");
    expect(plan).not.toMatch(/no test, lint or build command was found/i);
  });

  it("keeps metadata, docs and changelogs out of the files to change: AUTHORS quoted from the README is not a file to change", async () => {
    const { plan } = await planOn(HONO, "add a skip option to the logger middleware");
    for (const p of listed(plan, "Files to change"))
      expect(p).not.toMatch(/^(AUTHORS|CHANGELOG\.md|README\.md|docs\/|package\.json)/);
  });

  it("takes feedback as instructions: 'drop …; only in X and its test' leaves exactly X and its test, and adds nothing", async () => {
    const { port, planner, plan: first } = await planOn(HONO, LOGGER_TASK);
    expect(allListed(first).length).toBeGreaterThan(2);
    port.decide(port.pendingWait()!.tool_use_id, {
      kind: "reject",
      feedback:
        "Drop the cache, trailing-slash, language and basic-auth files; the change is only in src/middleware/logger/index.ts and its index.test.ts",
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const second = port.readPlan()!.content;
    expect(listed(second, "Files to change")).toEqual(["src/middleware/logger/index.ts"]);
    expect(listed(second, "Files to check")).toEqual([]);
    expect(listed(second, "Tests")).toEqual(["src/middleware/logger/index.test.ts"]);
    for (const widened of ["csrf", "body-limit", "request-id"])
      expect(second).not.toContain(`src/middleware/${widened}/`);
    expect(second).not.toMatch(/your feedback's words lead to it/);
    expect(section(second, "Revision notes")).toMatch(
      /Dropped `src\/middleware\/trailing-slash\/index\.ts`: you asked to drop it\./,
    );
  });

  it("takes 'also W' and 'not Z' exactly: W is added, Z goes, and the feedback's other words pull in nothing", async () => {
    const { port, planner, plan: first } = await planOn(HONO, LOGGER_TASK);
    const before = new Set(allListed(first));
    port.decide(port.pendingWait()!.tool_use_id, {
      kind: "reject",
      feedback:
        "Also change src/middleware/request-id/index.ts so the request id is logged. Do not touch src/utils/color.ts.",
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const second = port.readPlan()!.content;
    const after = allListed(second);
    expect(listed(second, "Files to change")).toContain("src/middleware/request-id/index.ts");
    expect(after).not.toContain("src/utils/color.ts");
    // Nothing else is new: only the file named was added.
    const added = after.filter((p) => !before.has(p));
    expect(added.filter((p) => p !== "src/middleware/request-id/index.ts")).toEqual([]);
  });

  it("keeps the file names of a seeded draft whole and resolves a bare index.test.ts beside the path the draft names", async () => {
    const port = new MemoryPort({
      files: HONO,
      facts: { planner: "offline", prompt: "Refine this plan: logger skip", seeded: true },
    });
    port.writePlan(
      [
        "# Logger skip",
        "",
        "## Steps",
        "1. Add a `skip` option to `logger` in src/middleware/logger/index.ts.",
        "2. Cover it in index.test.ts beside it.",
        "3. Mention it in docs/MIGRATION.md.",
        "",
      ].join("\n"),
    );
    expect(await runUntilStopped(port, { planner: offlinePlanner() })).toEqual({ next: "wait" });
    const plan = port.readPlan()!.content;
    expect(plan).not.toMatch(/`index\.test`/);
    expect(plan).not.toMatch(/not in the repository/);
    expect(listed(plan, "Files to change")[0]).toBe("src/middleware/logger/index.ts");
    expect(lineOf(plan, "src/middleware/logger/index.ts")).toContain("named in your draft");
    expect(listed(plan, "Tests")[0]).toBe("src/middleware/logger/index.test.ts");
    // A test the draft names is a test to extend, never a file that "tests" itself.
    expect(listed(plan, "Files to change")).not.toContain("src/middleware/logger/index.test.ts");
    expect(plan).not.toContain("tests `src/middleware/logger/index.test.ts`");
    expect(allListed(plan)).not.toContain("src/helper/cookie/index.test.ts");
  });

  it("gives the same plan, byte for byte, twice and from a fresh planner", async () => {
    const a = await planOn(HONO, LOGGER_TASK);
    const b = await planOn(HONO, LOGGER_TASK);
    expect(b.plan).toBe(a.plan);
  });
});

describe("the offline planner on the words users write (flask-like, real Flask files)", () => {
  it("keeps the dotted name Config.from_file: config.py first, the method named, tests/test_config.py paired", async () => {
    const { plan } = await planOn(
      FLASK,
      "let `Config.from_file` load .toml files without a load function",
    );
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/config.py");
    expect(plan).toContain("defines `Config.from_file`");
    expect(section(plan, "Steps")).toMatch(
      /`from_file` \(lines \d+–\d+, in `Config`\) — `def from_file\(` — in `src\/flask\/config\.py`/,
    );
    expect(listed(plan, "Tests")[0]).toBe("tests/test_config.py");
    expect(lineOf(plan, "tests/test_config.py")).toContain("tests `src/flask/config.py`");
    expect(section(plan, "Steps")).toMatch(
      /Extend `tests\/test_config\.py` with a case for `from_file`, beside `test_config_from_file/,
    );
    // conftest.py and the fixture apps under tests/test_apps are no tests of anything.
    expect(listed(plan, "Tests")).not.toContain("tests/conftest.py");
    for (const t of listed(plan, "Tests")) expect(t).not.toMatch(/^tests\/test_apps\//);
  });

  it("reads an issue with a traceback: the frame's file and function come first, the reporter's own file does not", async () => {
    const issue = [
      "from_file crashes on a missing file with silent=True",
      "",
      "When I call `app.config.from_file('conf.py', load=json.load, silent=True)` on a folder I get:",
      "",
      "```",
      "Traceback (most recent call last):",
      '  File "/home/me/app/conf.py", line 3, in <module>',
      "    app.config.from_file('settings.json', load=json.load, silent=True)",
      '  File "/usr/lib/python3.12/site-packages/flask/config.py", line 287, in from_file',
      '    with open(filename, "r" if text else "rb") as f:',
      "IsADirectoryError: [Errno 21] Is a directory: 'settings.json'",
      "```",
      "",
      "I expected False, as for a missing file.",
    ].join("\n");
    const { plan } = await planOn(FLASK, issue);
    expect(listed(plan, "Files to change")[0]).toBe("src/flask/config.py");
    expect(plan).not.toMatch(/`conf\.py`.*named in your feedback/);
    expect(listed(plan, "Tests")[0]).toBe("tests/test_config.py");
  });
});
