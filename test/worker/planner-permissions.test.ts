import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decidePermission } from "../../src/planner/permissions.ts";
import { DEEP_TOOL_NAMES, type PermissionMode, READ_ONLY_TOOLS } from "../../src/protocol/index.ts";

const PLAN = "/plans/bold-eagle.md";

function decide(mode: PermissionMode, tool: string, input: unknown) {
  return decidePermission({ mode, tool, input, planPath: PLAN });
}
const write = (file_path: unknown) => ({ file_path, content: "x" });
const edit = (file_path: unknown) => ({ file_path, old_string: "a", new_string: "b" });

describe("permissions in plan mode", () => {
  it("allows the read-only tools and the two interaction tools", () => {
    for (const tool of ["Read", "Glob", "Grep", "LS", "AskUserQuestion", "ExitPlanMode"]) {
      expect(decide("plan", tool, {}).behavior).toBe("allow");
    }
  });

  it("allows Write and Edit on exactly this session's plan file", () => {
    expect(decide("plan", "Write", write(PLAN))).toEqual({
      behavior: "allow",
      target: { kind: "plan" },
    });
    expect(decide("plan", "Edit", edit(PLAN))).toEqual({
      behavior: "allow",
      target: { kind: "plan" },
    });
    expect(decide("plan", "Edit", { ...edit(PLAN), replace_all: true }).behavior).toBe("allow");
  });

  const elsewhere = [
    "src/app.ts",
    "/repo/src/app.ts",
    "package.json",
    ".github/workflows/ci.yml",
    "/plans/other-session.md",
    "/plans/bold-eagle.md.bak",
    "/plans/bold-eagle",
    "/plans",
    "/plans/",
    "/etc/passwd",
    "/",
    "",
  ];
  it.each(elsewhere)("denies a write to %j and names the plan file in the reason", (path) => {
    for (const d of [decide("plan", "Write", write(path)), decide("plan", "Edit", edit(path))]) {
      expect(d.behavior).toBe("deny");
      if (d.behavior === "deny") expect(d.reason).toContain(PLAN);
    }
  });

  const oddSpellings = [
    "/plans/./bold-eagle.md",
    "/plans//bold-eagle.md",
    "//plans/bold-eagle.md",
    "/PLANS/bold-eagle.md",
    "/plans/BOLD-EAGLE.md",
    "/plans/bold-eagle.MD",
    "/plans/bold-eagle.md ",
    " /plans/bold-eagle.md",
    "/plans/bold-eagle.md\n",
    "/plans/bold-eagle.md\u0000",
    "/plans/bold-eagle.md\u0000.ts",
    "/plans/bold-eagle.md/../bold-eagle.md",
    "/plans/x/../bold-eagle.md",
    "/repo/../plans/bold-eagle.md",
    "plans/bold-eagle.md",
    "./plans/bold-eagle.md",
    "%2Fplans%2Fbold-eagle.md",
    "/plans/bold%2Deagle.md",
    "/plans%2fbold-eagle.md",
    "\\plans\\bold-eagle.md",
    "/plans\\bold-eagle.md",
    "/рlans/bold-eagle.md", // Cyrillic р
    "/plans/bоld-eagle.md", // Cyrillic о
    "/plans/bold\u2011eagle.md", // non-breaking hyphen
    "/plans/bold-eagle\u200b.md", // zero-width space
    "/plans/\u202ebold-eagle.md", // right-to-left override
    "file:///plans/bold-eagle.md",
    "/plans/bold-eagle.md;rm -rf /",
  ];
  it.each(oddSpellings)("denies the plan path spelled oddly: %j", (path) => {
    expect(decide("plan", "Write", write(path)).behavior).toBe("deny");
    expect(decide("plan", "Edit", edit(path)).behavior).toBe("deny");
  });

  it("denies unknown tools, whatever they are called", () => {
    for (const tool of [
      "Bash",
      "bash",
      "write",
      "WRITE",
      "NotebookEdit",
      "MultiEdit",
      "EnterPlanMode",
      "Task",
      "",
      "Write ",
      "Read\u0000",
    ]) {
      const d = decide("plan", tool, write(PLAN));
      expect(d.behavior).toBe("deny");
    }
  });

  it("denies writes with a missing, mistyped or extra field", () => {
    expect(decide("plan", "Write", { content: "x" }).behavior).toBe("deny");
    expect(decide("plan", "Write", { file_path: 42, content: "x" }).behavior).toBe("deny");
    expect(decide("plan", "Write", { file_path: [PLAN], content: "x" }).behavior).toBe("deny");
    expect(
      decide("plan", "Write", { file_path: { toString: () => PLAN }, content: "x" }).behavior,
    ).toBe("deny");
    expect(decide("plan", "Write", { ...write(PLAN), path: "src/app.ts" }).behavior).toBe("deny");
    expect(decide("plan", "Write", { ...write(PLAN), target: "src/app.ts" }).behavior).toBe("deny");
    expect(decide("plan", "Edit", { ...edit(PLAN), file_paths: ["src/app.ts"] }).behavior).toBe(
      "deny",
    );
    expect(decide("plan", "Write", null).behavior).toBe("deny");
    expect(decide("plan", "Write", [PLAN, "x"]).behavior).toBe("deny");
    expect(decide("plan", "Write", PLAN).behavior).toBe("deny");
    expect(decide("plan", "Read", "src/app.ts").behavior).toBe("deny");
  });

  it("denies prompt-injected writes however the path is dressed up", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.constantFrom("Write", "Edit"), (path, tool) => {
        const d = decide("plan", tool, tool === "Write" ? write(path) : edit(path));
        return path === PLAN ? d.behavior === "allow" : d.behavior === "deny";
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("permissions after approval", () => {
  for (const mode of ["default", "acceptEdits"] as const) {
    it(`allows ${mode} writes to repository paths, relative or under /repo, to the overlay`, () => {
      expect(decide(mode, "Write", write("src/app.ts"))).toEqual({
        behavior: "allow",
        target: { kind: "repo", path: "src/app.ts" },
      });
      expect(decide(mode, "Edit", edit("/repo/src/app.ts"))).toEqual({
        behavior: "allow",
        target: { kind: "repo", path: "src/app.ts" },
      });
      expect(decide(mode, "Write", write("./README.md"))).toEqual({
        behavior: "allow",
        target: { kind: "repo", path: "README.md" },
      });
      expect(decide(mode, "Write", write("docs/ünïcode-名前.md"))).toEqual({
        behavior: "allow",
        target: { kind: "repo", path: "docs/ünïcode-名前.md" },
      });
    });

    it(`denies ${mode} writes that escape the repository or touch the plan or .git`, () => {
      for (const path of [
        "../outside.ts",
        "src/../../outside.ts",
        "src/./app.ts",
        "src//app.ts",
        "/etc/passwd",
        "/repo/../etc/passwd",
        "/repository/src/app.ts",
        "/repo",
        "/repo/",
        "src/",
        PLAN,
        "/plans/other.md",
        "/plans",
        ".git/config",
        "sub/.git/hooks/pre-commit",
        "src\\app.ts",
        "src/app.ts\u0000",
        " src/app.ts",
        "src/\u202eapp.ts",
        "",
      ]) {
        expect(decide(mode, "Write", write(path)).behavior, path).toBe("deny");
      }
    });
  }

  /** Names the user's tools would misread when the diff comes home (issue 10, finding 6). */
  const misread = [
    [":!src/app.ts", "pathspec magic"],
    [":(exclude)src", "pathspec magic"],
    [":/src/app.ts", "pathspec magic"],
    ["-rf", "read as an option"],
    ["--output=x", "read as an option"],
    [".GIT/config", "inside .git"],
    [".Git/hooks/pre-commit", "inside .git"],
    ["sub/.gIt/HEAD", "inside .git"],
    [".git./config", "inside .git"],
    [".git /config", "inside .git"],
    [".git::$INDEX_ALLOCATION/config", "inside .git"],
    ["GIT~1/config", "inside .git"],
    ["vendor/git~1/hooks/post-checkout", "inside .git"],
    ["src/app.ts.", "ending in"],
    ["src/app.ts ", "whitespace"],
    ["src /app.ts", "ending in"],
    [`src/${"n".repeat(256)}.ts`, "longer than 255 bytes"],
    [`src/${"é".repeat(128)}`, "longer than 255 bytes"],
    ["src/\u206aapp.ts", "control or invisible"],
    [".g\u200cit/config", "control or invisible"],
    ["src/a\tb.ts", "control or invisible"],
    ["src\\app.ts", "backslash"],
  ] as const;
  it.each(misread)("denies remote execution a file named %j and says why (%s)", (path, why) => {
    for (const mode of ["default", "acceptEdits"] as const) {
      for (const d of [decide(mode, "Write", write(path)), decide(mode, "Edit", edit(path))]) {
        expect(d.behavior, `${mode} ${path}`).toBe("deny");
        if (d.behavior === "deny") expect(d.reason).toContain(why);
      }
    }
  });

  it("still allows the ordinary names that look a little like those", () => {
    for (const path of [
      ".github/workflows/ci.yml",
      ".gitignore",
      ".gitattributes",
      "docs/.gitkeep",
      "src/a:b.ts",
      "src/-flag.ts",
      "src/.env.example",
      `src/${"n".repeat(252)}.ts`,
    ]) {
      expect(decide("default", "Write", write(path)), path).toEqual({
        behavior: "allow",
        target: { kind: "repo", path },
      });
    }
  });

  it("allows a repository write only to a path no tool on the user's machine misreads", () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom(".git", ".GIT", "git~1", ".git.", "..", ".", "", "a", "src", ":x", "-x"),
    );
    const path = fc
      .tuple(
        fc.constantFrom("", "/repo/", "./", "/"),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
      )
      .map(([prefix, segments]) => `${prefix}${segments.join("/")}`);
    fc.assert(
      fc.property(path, fc.constantFrom("Write", "Edit"), (filePath, tool) => {
        const d = decide("default", tool, tool === "Write" ? write(filePath) : edit(filePath));
        if (d.behavior === "deny") return true;
        if (d.target?.kind !== "repo") return false;
        const written = d.target.path;
        const segments = written.split("/");
        return (
          !/^[:-]/.test(written) &&
          ![...written].some((c) => c.charCodeAt(0) < 0x20 || (c >= "\u007f" && c <= "\u009f")) &&
          !written.includes("\\") &&
          segments.every(
            (s) =>
              s !== "" &&
              s !== "." &&
              s !== ".." &&
              !/[. ]$/.test(s) &&
              !/^(\.git|git~1)[. ]*(:.*)?$/i.test(s),
          )
        );
      }),
      { numRuns: 5_000 },
    );
  });

  it("keeps the read-only tools and unknown-tool denial unchanged", () => {
    expect(decide("default", "Grep", { pattern: "x" }).behavior).toBe("allow");
    expect(decide("default", "Bash", { command: "ls" }).behavior).toBe("deny");
  });
});

const MODES: readonly PermissionMode[] = ["plan", "default", "acceptEdits"];
/** Every tool a session may offer, and names that are not tools. */
const TOOLS = [...DEEP_TOOL_NAMES, "Bash", "task", "TASK", "Task ", "Agent", "MultiEdit", ""];
/** Inputs of every shape, the plan file and repository paths among them. */
const INPUTS: readonly unknown[] = [
  {},
  write(PLAN),
  edit(PLAN),
  write("src/app.ts"),
  edit("/repo/src/app.ts"),
  { description: "Explore", prompt: "Look around." },
  { file_path: PLAN },
  null,
  [],
  "src/app.ts",
  42,
];

describe("permissions of a subagent (the conversation of a Task call)", () => {
  it("allows the read-only tools and nothing else, in every mode, whatever the input", () => {
    for (const mode of MODES)
      for (const tool of TOOLS)
        for (const input of INPUTS)
          for (const offersTask of [true, false]) {
            const d = decidePermission({
              mode,
              tool,
              input,
              planPath: PLAN,
              agent: "subagent",
              offersTask,
            });
            const readOnly = (READ_ONLY_TOOLS as readonly string[]).includes(tool);
            const plainObject =
              typeof input === "object" && input !== null && !Array.isArray(input);
            expect(d.behavior, `${mode} ${tool} ${JSON.stringify(input)}`).toBe(
              readOnly && plainObject ? "allow" : "deny",
            );
            // Nothing a subagent is allowed may write: no target is ever handed out.
            expect("target" in d && d.target !== undefined).toBe(false);
          }
  });

  it("refuses writes (the plan file included), waits and Task, each with its own reason", () => {
    const subagent = (tool: string, input: unknown) =>
      decidePermission({ mode: "plan", tool, input, planPath: PLAN, agent: "subagent" });
    for (const d of [subagent("Write", write(PLAN)), subagent("Edit", edit(PLAN))])
      expect(d).toEqual({
        behavior: "deny",
        reason: expect.stringContaining("not even the plan file"),
      });
    expect(subagent("ExitPlanMode", {})).toEqual({
      behavior: "deny",
      reason: expect.stringContaining("cannot present the plan"),
    });
    expect(subagent("AskUserQuestion", { questions: [] })).toEqual({
      behavior: "deny",
      reason: expect.stringContaining("cannot ask the user"),
    });
    expect(subagent("Task", { description: "x", prompt: "y" })).toEqual({
      behavior: "deny",
      reason: expect.stringContaining("cannot start subagents"),
    });
  });

  it("refuses any write of a subagent, whatever path or fields it tries", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MODES),
        fc.constantFrom("Write", "Edit"),
        fc.oneof(fc.constant(PLAN), fc.string({ maxLength: 60 })),
        fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 3 }),
        (mode, tool, path, extra) => {
          const input = { ...extra, ...(tool === "Write" ? write(path) : edit(path)) };
          const d = decidePermission({ mode, tool, input, planPath: PLAN, agent: "subagent" });
          return d.behavior === "deny";
        },
      ),
      { numRuns: 3_000 },
    );
  });
});

describe("the Task tool of the session's own agent", () => {
  it("is allowed only where the session offers it (deep), and only with an object input", () => {
    for (const mode of MODES) {
      const task = (offersTask: boolean, input: unknown) =>
        decidePermission({ mode, tool: "Task", input, planPath: PLAN, offersTask }).behavior;
      expect(task(true, { description: "x", prompt: "y" })).toBe("allow");
      expect(task(true, "explore")).toBe("deny");
      expect(task(false, { description: "x", prompt: "y" })).toBe("deny");
    }
    const unknown = decidePermission({
      mode: "plan",
      tool: "Shell",
      input: {},
      planPath: PLAN,
      offersTask: true,
    });
    expect(unknown).toEqual({
      behavior: "deny",
      reason: expect.stringContaining("ExitPlanMode, Task"),
    });
  });

  it("leaves every other decision of the session's agent as it was", () => {
    for (const mode of MODES)
      for (const tool of TOOLS.filter((t) => t !== "Task"))
        for (const input of INPUTS)
          expect(
            decidePermission({ mode, tool, input, planPath: PLAN, offersTask: true }).behavior,
          ).toBe(decidePermission({ mode, tool, input, planPath: PLAN }).behavior);
  });
});
