import { describe, expect, it } from "vitest";
import { checkQuestions } from "../../src/planner/tools/ask-user-question.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { runTool, shopFixture } from "./planner/helpers.ts";

const PLAN = "/plans/bold-eagle.md";

const run = runTool;

const shop = () => new MemoryPort({ files: shopFixture() });

describe("Write and Edit", () => {
  it("write the plan file in plan mode and report creation and updates", async () => {
    const port = shop();
    expect(
      (await run(port, "Write", { file_path: PLAN, content: "# A\nstep one\n" })).text,
    ).toContain("has been created");
    expect(
      (await run(port, "Edit", { file_path: PLAN, old_string: "step one", new_string: "step 1" }))
        .text,
    ).toBe(`1 occurrence replaced in ${PLAN}.`);
    expect(port.readPlan()).toMatchObject({ content: "# A\nstep 1\n", revision: 2 });
  });

  it("Edit needs exactly one match unless replace_all", async () => {
    const port = shop();
    port.writePlan("a a a\n");
    const twice = await run(port, "Edit", { file_path: PLAN, old_string: "a", new_string: "b" });
    expect(twice.isError).toBe(true);
    expect(twice.text).toContain("occurs 3 times");
    expect(
      (
        await run(port, "Edit", {
          file_path: PLAN,
          old_string: "a",
          new_string: "b",
          replace_all: true,
        })
      ).text,
    ).toContain("3 occurrences");
    expect(port.readPlan()?.content).toBe("b b b\n");
    expect(
      (await run(port, "Edit", { file_path: PLAN, old_string: "zzz", new_string: "y" })).text,
    ).toContain("was not found");
    expect(
      (await run(port, "Edit", { file_path: PLAN, old_string: "b", new_string: "b" })).text,
    ).toContain("are the same");
  });

  it("Edit refuses a plan file that does not exist yet", async () => {
    expect(
      (await run(shop(), "Edit", { file_path: PLAN, old_string: "x", new_string: "y" })).text,
    ).toContain("does not exist yet");
  });

  it("after approval, Write and Edit change the overlay, never the snapshot", async () => {
    const port = shop();
    expect(
      (
        await run(
          port,
          "Edit",
          { file_path: "src/billing/tax.ts", old_string: "DE: 0.19", new_string: "DE: 0.07" },
          "default",
        )
      ).isError,
    ).toBe(false);
    expect(
      (
        await run(
          port,
          "Write",
          { file_path: "/repo/src/new.ts", content: "export {};\n" },
          "acceptEdits",
        )
      ).text,
    ).toBe("File created successfully at: /repo/src/new.ts");
    expect(port.readOverlay("src/billing/tax.ts")).toContain("DE: 0.07");
    expect(port.readOverlay("src/new.ts")).toBe("export {};\n");
    expect(await port.snapshot.read("src/billing/tax.ts")).toContain("DE: 0.19");
  });

  it("after approval, refuse a file name git would read as pathspec magic, and change nothing", async () => {
    const port = shop();
    for (const file_path of [":!src/billing/tax.ts", ".GIT/config", "src/billing/tax.ts."]) {
      const r = await run(port, "Write", { file_path, content: "pwned\n" }, "default");
      expect(r.isError, file_path).toBe(true);
      expect(r.text).toContain("Nothing was written.");
    }
    const edit = await run(
      port,
      "Edit",
      { file_path: ":!src/billing/tax.ts", old_string: "DE: 0.19", new_string: "DE: 0" },
      "default",
    );
    expect(edit.text).toContain('starts with ":", which git reads as pathspec magic');
    expect(port.listOverlay()).toEqual([]);
  });
});

describe("AskUserQuestion", () => {
  const q = (over: Record<string, unknown> = {}) => ({
    question: "Which provider?",
    header: "Provider",
    options: [{ label: "GitHub" }, { label: "Google" }],
    ...over,
  });

  it("opens a question wait for valid input", async () => {
    const r = await run(shop(), "AskUserQuestion", { questions: [q()] });
    expect(r.outcome).toMatchObject({
      kind: "wait",
      wait: { kind: "question", input: { questions: [q()] } },
    });
  });

  it.each([
    ["no questions", { questions: [] }, "between 1 and 4"],
    [
      "five questions",
      { questions: [1, 2, 3, 4, 5].map((i) => q({ question: `Q${i}?` })) },
      "between 1 and 4",
    ],
    ["a single option", { questions: [q({ options: [{ label: "GitHub" }] })] }, "never saw"],
    ["no options", { questions: [q({ options: [] })] }, "never saw"],
    [
      "five options",
      { questions: [q({ options: ["a", "b", "c", "d", "e"].map((label) => ({ label })) })] },
      "at most 4",
    ],
    ["a long header", { questions: [q({ header: "Authentication" })] }, "1–12 characters"],
    ["duplicate questions", { questions: [q(), q()] }, "asked twice"],
    [
      "duplicate labels",
      { questions: [q({ options: [{ label: "GitHub" }, { label: "github" }] })] },
      "twice",
    ],
    [
      "an Other option",
      { questions: [q({ options: [{ label: "GitHub" }, { label: "Other (please specify)" }] })] },
      "Remove the option",
    ],
    ["an extra field", { questions: [q()], approve: true }, "InputValidationError"],
    [
      "a missing header",
      { questions: [{ question: "Q?", options: [{ label: "a" }, { label: "b" }] }] },
      "header",
    ],
  ])("refuses %s", (_name, input, message) => {
    const checked = checkQuestions(input);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error).toContain(message);
  });
});
