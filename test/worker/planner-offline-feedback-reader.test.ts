import { describe, expect, it } from "vitest";
import {
  type Instruction,
  readFeedback,
} from "../../src/planner/models/offline/feedback/reader.ts";
import type { Target } from "../../src/planner/models/offline/feedback/targets.ts";

/**
 * The feedback reader on its own (pure, no repository): each construction reviewers write,
 * read into the instructions the next revision follows. Paths and kinds are compared as the
 * reviewer wrote them; instructions.ts ties them to files.
 */

const name = (t: Target) => (t.type === "kind" ? `kind:${t.kind}` : t.text);
/** verb → the targets it names (and → its destination), in reading order. */
function read(text: string): string[] {
  return readFeedback(text).instructions.map((i: Instruction) => {
    const to = i.to.length > 0 ? ` → ${i.to.map(name).join(", ")}` : "";
    return `${i.verb} ${i.targets.map(name).join(", ")}${to}`.replace(/ {2,}/g, " ").trim();
  });
}
const unread = (text: string) => readFeedback(text).unread.map((u) => u.why);

describe("the feedback reader: scope of negation", () => {
  it("reads 'X, not Y' and 'belongs in X not Y': X is asked for, only Y is ruled out", () => {
    const r = read(
      "leave the tests out; the change belongs in src/flask/testing.py (FlaskClient), not wrappers.py",
    );
    expect(r).toEqual(["drop kind:tests", "also src/flask/testing.py", "drop wrappers.py"]);
    const instr = readFeedback("the change belongs in src/a.py, not src/b.py").instructions;
    const drop = instr.find((i) => i.verb === "drop")!;
    expect(drop.targets.map(name)).toEqual(["src/b.py"]);
    expect(drop.how).toBe("elsewhere");
    // The name after the path says where in it: the same target, never a second one.
    const testing = readFeedback("the change belongs in src/flask/testing.py (FlaskClient)")
      .instructions[0]!.targets[0]!;
    expect(testing).toEqual({ type: "path", text: "src/flask/testing.py", symbol: "FlaskClient" });
  });

  it("reads don't touch / leave alone / leave out / keep out as drops, with how they were said", () => {
    expect(read("don't touch src/flask/wrappers.py")).toEqual(["drop src/flask/wrappers.py"]);
    expect(readFeedback("don't touch src/flask/wrappers.py").instructions[0]!.how).toBe("alone");
    expect(read("leave wrappers.py alone")).toEqual(["drop wrappers.py"]);
    expect(read("leave the tests out")).toEqual(["drop kind:tests"]);
    expect(read("leave out the docs")).toEqual(["drop kind:docs"]);
    expect(read("keep src/a.py out of it")).toEqual(["drop src/a.py"]);
    expect(read("drop the tests")).toEqual(["drop kind:tests"]);
    expect(read("drop tests/test_config.py")).toEqual(["drop tests/test_config.py"]);
  });

  it("splits 'leave X alone but change Y': X is ruled out, Y is asked for", () => {
    expect(read("leave src/flask/wrappers.py alone but change src/flask/testing.py")).toEqual([
      "drop src/flask/wrappers.py",
      "also src/flask/testing.py",
    ]);
    // Without the split, "don't touch X" would read to the end of the sentence and find no X.
    expect(read("don't touch src/flask/wrappers.py but update src/flask/testing.py")).toEqual([
      "drop src/flask/wrappers.py",
      "also src/flask/testing.py",
    ]);
    expect(read("leave the tests alone, but update the docs")).toEqual([
      "drop kind:tests",
      "also kind:docs",
    ]);
  });

  it("reads 'no tests', 'no tests needed' and 'skip the docs for now' as kinds left out", () => {
    expect(read("no tests")).toEqual(["drop kind:tests"]);
    expect(read("no tests needed")).toEqual(["drop kind:tests"]);
    expect(read("skip the docs for now")).toEqual(["drop kind:docs"]);
    expect(read("no changelog entry")).toEqual(["drop kind:changelog"]);
    // "There is no test file in this PR" states a fact: it leaves nothing out.
    expect(read("there is no test file in this pull request, please provide one")).toEqual([]);
    expect(read("it has no docs yet")).toEqual([]);
  });
});

describe("the feedback reader: kinds, paths, names", () => {
  it("knows the kinds of files reviewers speak of", () => {
    expect(read("also update the docs")).toEqual(["also kind:docs"]);
    expect(read("add a changelog entry")).toEqual(["also kind:changelog"]);
    expect(read("update the configuration")).toEqual(["also kind:config"]);
    expect(read("update the type definitions")).toEqual(["also kind:types"]);
    expect(read("add unit tests")).toEqual(["also kind:tests"]);
    // A test noun that qualifies something else is no test.
    expect(read("the test client should follow redirects")).not.toContain("also kind:tests");
  });

  it("reads also / and / plus, and 'document it' / 'test it'", () => {
    expect(read("also docs/config.rst")).toEqual(["also docs/config.rst"]);
    expect(read("also update src/a.py and src/b.py")).toEqual(["also src/a.py, src/b.py"]);
    expect(read("plus the changelog")).toEqual(["also kind:changelog"]);
    expect(read("also document it")).toEqual(["also kind:docs"]);
    expect(read("please test it")).toEqual(["also kind:tests"]);
    // Said of the past, "documenting" asks for nothing.
    expect(read("I realize we are documenting this as a TECHDEBT")).toEqual([]);
  });

  it("reads only / just, and knows 'X only calls Y' for a statement that restricts nothing", () => {
    expect(read("only src/flask/logging.py")).toEqual(["only src/flask/logging.py"]);
    expect(read("just src/a.py")).toEqual(["only src/a.py"]);
    expect(read("src/flask/logging.py only")).toEqual(["only src/flask/logging.py"]);
    expect(read("`from_file` only calls the load function it is given")).toEqual([]);
    expect(unread("`from_file` only calls the load function it is given")).toEqual([
      "a statement about the code, not an instruction",
    ]);
    expect(read("in cases where only a documentation change is made, skip CI")).not.toContain(
      "only kind:docs",
    );
  });

  it("guards 'not only X': X is added, the lists are not restricted to it", () => {
    expect(read("not only src/a.py but also src/b.py")).toEqual(["also src/a.py", "also src/b.py"]);
    expect(read("not just the tests, the docs too")).not.toContainEqual(
      expect.stringMatching(/^only/),
    );
  });

  it("guards 'forget': 'don't forget X' asks for X, 'forget X' leaves it out", () => {
    expect(read("don't forget the changelog")).toEqual(["also kind:changelog"]);
    expect(read("don't forget to update the docs")).toEqual(["also kind:docs"]);
    expect(read("forget the docs")).toEqual(["drop kind:docs"]);
  });

  it("reads instead of X use Y, X is already handled in Y, move X to Y, add a test in F", () => {
    expect(read("instead of src/a.py, use src/b.py")).toEqual(["use src/a.py → src/b.py"]);
    expect(read("use src/b.py instead of src/a.py")).toEqual(["use src/a.py → src/b.py"]);
    expect(read("the redirect is already handled in src/flask/helpers.py")).toEqual([
      "handled → src/flask/helpers.py",
    ]);
    expect(read("move `parse_args` to src/cli.py")).toEqual(["move parse_args → src/cli.py"]);
    expect(read("add a test in tests/test_testing.py")).toEqual([
      "test-in → tests/test_testing.py",
    ]);
  });
});

describe("the feedback reader: what it does not act on", () => {
  it("never reads a question that wonders as an instruction; a question that asks is one", () => {
    expect(read("Is/should this documented anywhere?")).toEqual([]);
    expect(read("Do you have opinions about modifying changelog history generally?")).toEqual([]);
    expect(read("Why do we need src/a.py?")).toEqual([]);
    expect(unread("Why do we need src/a.py?")).toHaveLength(1);
    expect(read("Can you add a test for this?")).toEqual(["also kind:tests"]);
    expect(read("Should we also update the docs?")).toEqual(["also kind:docs"]);
  });

  it("takes back what 'nvm' retracts, and reads a report of what was done as no instruction", () => {
    expect(read("Can you document the use of `x` somewhere? Nvm: it is in the README")).toEqual([]);
    expect(unread("Can you document the use of `x` somewhere? Nvm")).toContain("you took it back");
    expect(read("In rpc you updated the actual RPC handler logic not tests.")).toEqual([]);
    // A doubt is not a wish to keep: "I don't think this test is necessary" keeps nothing.
    expect(read("so i don't think this test is necessary")).toEqual([]);
    expect(read("the tests are necessary")).toEqual(["keep kind:tests"]);
  });

  it("keeps a file 'remove' names (deleting code there is no reason to drop it), and says so", () => {
    const r = readFeedback("remove the deprecated flag in src/flask/config.py");
    expect(r.instructions.map((i) => i.verb)).toEqual(["keep"]);
    expect(r.unread[0]!.why).toMatch(/“remove” may mean deleting code there/);
  });

  it("marks names said in passing (instructions.ts pulls no file in for them); links are no names", () => {
    expect(readFeedback("it should work like `json.loads` does").instructions).toEqual([
      expect.objectContaining({ verb: "also", passing: true }),
    ]);
    expect(readFeedback("also `json.loads`").instructions[0]!.passing).toBeUndefined();
    expect(read("see https://github.com/pallets/flask/blob/main/src/flask/app.py")).toEqual([]);
  });

  it("says what it could not read, and nothing for courtesy", () => {
    expect(unread("Please log once here at Error level")).toEqual([
      "no file, kind of file or instruction I can act on",
    ]);
    expect(unread("thanks!")).toEqual([]);
  });
});
