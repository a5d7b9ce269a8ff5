/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { listedFiles as all, listed } from "../support/plan-lists.ts";
import { runUntilStopped } from "./planner/helpers.ts";

/**
 * Issue 31's new user, through the planner: a plan on `flask-like` (real Flask files), then a
 * rejection with the words a reviewer writes, and what the revision must then list — and
 * say. The feedback reader's own tests are planner-offline-feedback-reader.test.ts.
 */

const FLASK = Object.fromEntries(
  Object.entries(
    import.meta.glob("../fixtures/flask-like/**/*", {
      query: "?raw",
      import: "default",
      eager: true,
    }) as Record<string, string>,
  ).map(([k, v]) => [k.slice("../fixtures/flask-like/".length), v]),
);

const CLIENT_TASK =
  "add a follow_redirects option to FlaskClient.open that records each redirect response";
const CONFIG_TASK = "let `Config.from_file` load .toml files without a load function";

/** The first plan for `task`, then the revision after `feedback`. */
async function revise(task: string, feedback: string) {
  const port = new MemoryPort({ files: FLASK, facts: { planner: "offline", prompt: task } });
  const planner = offlinePlanner();
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  const before = port.readPlan()!.content;
  port.decide(port.pendingWait()!.tool_use_id, { kind: "reject", feedback });
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  return { before, after: port.readPlan()!.content };
}

function section(plan: string, heading: string): string {
  const start = plan.indexOf(`\n## ${heading}\n`);
  if (start === -1) return "";
  const rest = plan.slice(start + 1);
  const end = rest.indexOf("\n## ", 1);
  return end === -1 ? rest : rest.slice(0, end);
}
const SAME = /The file lists are the same as in the previous revision/;

describe("the offline planner follows what the reviewer writes (flask-like)", () => {
  it("'leave the tests out; the change belongs in src/flask/testing.py (FlaskClient), not wrappers.py': testing.py stays first, wrappers.py and the tests go", async () => {
    const { before, after } = await revise(
      CLIENT_TASK,
      "leave the tests out; the change belongs in src/flask/testing.py (FlaskClient), not wrappers.py",
    );
    expect(all(before)).toContain("src/flask/wrappers.py");
    expect(listed(before, "Tests").length).toBeGreaterThan(0);
    expect(listed(after, "Files to change")[0]).toBe("src/flask/testing.py");
    expect(all(after)).not.toContain("src/flask/wrappers.py");
    expect(listed(after, "Tests")).toEqual([]);
    const notes = section(after, "Revision notes");
    expect(notes).not.toMatch(/Dropped `src\/flask\/testing\.py`/);
    expect(notes).toMatch(/Dropped `src\/flask\/wrappers\.py`: you said the change is not there\./);
    expect(notes).toMatch(
      /Dropped the test `tests\/test_testing\.py`: you asked to leave the tests out\./,
    );
    // No step writes a test the reviewer left out.
    expect(section(after, "Steps")).not.toMatch(/tests\/test_testing\.py|Add `tests\//);
    expect(after).toContain("It matched the task's words against the code");
  });

  for (const words of ["leave the tests out", "drop the tests", "no tests needed"])
    it(`'${words}' removes the tests and the steps that write them`, async () => {
      const { before, after } = await revise(CONFIG_TASK, words);
      expect(listed(before, "Tests")).toContain("tests/test_config.py");
      expect(listed(after, "Tests")).toEqual([]);
      expect(section(after, "Steps")).not.toMatch(/test_config\.py/);
      expect(listed(after, "Files to change")[0]).toBe("src/flask/config.py");
      expect(section(after, "Revision notes")).not.toMatch(SAME);
    });

  it("'drop tests/test_config.py' drops that test by name", async () => {
    const { after } = await revise(CONFIG_TASK, "drop tests/test_config.py");
    expect(all(after)).not.toContain("tests/test_config.py");
    expect(section(after, "Revision notes")).toMatch(/Dropped the test `tests\/test_config\.py`/);
  });

  for (const words of ["also update the docs", "also document it"])
    it(`'${words}' adds the docs page of the change, below the source file`, async () => {
      const { before, after } = await revise(CONFIG_TASK, words);
      expect(all(before)).not.toContain("docs/config.rst");
      expect(listed(after, "Files to change")).toEqual(["src/flask/config.py", "docs/config.rst"]);
      expect(section(after, "Revision notes")).toMatch(/Added `docs\/config\.rst`/);
    });

  it("'also docs/config.rst' adds it below the source file, with no filler question about it", async () => {
    const { after } = await revise(CONFIG_TASK, "also docs/config.rst");
    expect(listed(after, "Files to change")).toEqual(["src/flask/config.py", "docs/config.rst"]);
    const questions = section(after, "Open questions");
    expect(questions).not.toMatch(/No test is paired with `docs\//);
    expect(questions).not.toMatch(
      /`docs\/config\.rst` and `src\/flask\/config\.py` rank almost alike/,
    );
  });

  it("a changelog entry asked for is added, never ranked above the source file", async () => {
    const { after } = await revise(CONFIG_TASK, "also add a changelog entry");
    expect(listed(after, "Files to change")).toEqual(["src/flask/config.py", "CHANGES.rst"]);
    expect(after).toMatch(/`CHANGES\.rst` — add an entry for the change/);
  });

  it("'only src/flask/logging.py' makes it the list", async () => {
    const { after } = await revise(CONFIG_TASK, "only src/flask/logging.py");
    expect(listed(after, "Files to change")).toEqual(["src/flask/logging.py"]);
    expect(listed(after, "Files to check")).toEqual([]);
  });

  it("'X only calls Y' restricts nothing: the lists stay, and the revision says it could not act", async () => {
    const { before, after } = await revise(
      CONFIG_TASK,
      "`from_file` only calls the load function it is given",
    );
    expect(all(after).sort()).toEqual(all(before).sort());
    expect(section(after, "Revision notes")).toMatch(
      /I could not act on: "'from_file' only calls the load function it is given" \(a statement about the code, not an instruction\)/,
    );
  });

  it("names quoted as code in passing pull no file in, and the revision says so", async () => {
    const { before, after } = await revise(
      CONFIG_TASK,
      "it should work like `json.loads` and `tomllib.load` do",
    );
    expect(all(after).sort()).toEqual(all(before).sort());
    expect(listed(after, "Files to change")[0]).toBe("src/flask/config.py");
    expect(section(after, "Revision notes")).toMatch(/I could not act on: .*names code in passing/);
  });

  it("says what was already so, instead of the bare 'lists are the same'", async () => {
    const asked = await revise(
      CLIENT_TASK,
      "skip the docs for now, but add a test in tests/test_testing.py",
    );
    expect(section(asked.after, "Revision notes")).toMatch(
      /`tests\/test_testing\.py` was already among the tests; the steps extend it\./,
    );
    expect(section(asked.after, "Revision notes")).toMatch(/The plan listed no docs/);
    const handled = await revise(
      CLIENT_TASK,
      "the redirect handling is already handled in src/flask/helpers.py",
    );
    expect(listed(handled.after, "Files to check")).toContain("src/flask/helpers.py");
    expect(section(handled.after, "Revision notes")).toMatch(
      /`src\/flask\/helpers\.py` was already a file to check, not to change/,
    );
  });

  it("words it cannot act on are answered with 'I could not act on', never with the bare lists", async () => {
    const { after } = await revise(CONFIG_TASK, "Please log once here at Error level");
    const notes = section(after, "Revision notes");
    expect(notes).toMatch(/I could not act on: "Please log once here at Error level"/);
    expect(notes).not.toMatch(/your words asked for no change to them that I could read/);
  });
});
