/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { draftOutline, draftSection } from "../../src/planner/models/offline/draft/seed.ts";
import { offlinePlanner } from "../../src/planner/models/offline/index.ts";
import { filesNamedByPlan } from "../bench/planner/plan-files.ts";
import { MemoryPort } from "../support/memory-port.ts";
import { recording, runUntilStopped } from "./planner/helpers.ts";

/**
 * The offline planner refining a draft written elsewhere (`seed_plan`): the session starts with
 * the draft as plan revision 1 (as the session object writes it), and the planner's plan keeps
 * the draft's steps as written and in order, and adds the repository's evidence — the files
 * with lines, the tests, the verification commands, and questions where the repository
 * disagrees with the draft. On the notes-app fixture (issue 12's OAuth example).
 */

const fixture = import.meta.glob("../fixtures/notes-app/**/*", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;
const FILES = Object.fromEntries(
  Object.entries(fixture).map(([k, v]) => [k.slice("../fixtures/notes-app/".length), v]),
);

const STEPS = [
  "1. Add a GitHub OAuth callback route next to the login route.",
  "2. Link GitHub identities to users in `src/db/users.js`.",
  "3. Reuse the session store for the signed-in user.",
  "- Put the route behind a flag read in src/config/flags.js.",
  "- Escape names like `(a+)+$` and <script>alert(1)</script> in the callback page.",
];
const DRAFT = [
  "# GitHub sign-in",
  "",
  "Drafted in my editor.",
  "",
  "## Approach",
  STEPS[0],
  STEPS[1],
  STEPS[2],
  "",
  "```js",
  "- not a step: inside a code block",
  "```",
  "",
  "## Rollout",
  STEPS[3],
  STEPS[4],
  "",
].join("\n");

async function seededPlan(draft = DRAFT, prompt = "Refine this plan: GitHub sign-in") {
  const port = new MemoryPort({
    files: FILES,
    facts: { planner: "offline", prompt, seeded: true },
  });
  // As the session object writes it at creation: revision 1, before any model call.
  port.writePlan(draft);
  const planner = recording(offlinePlanner());
  expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
  expect(port.pendingWait()?.kind).toBe("plan");
  return { port, planner, plan: port.readPlan()! };
}

/** The text of one `## ` section of a plan, up to the next `## ` heading. */
function section(plan: string, heading: string): string {
  const start = plan.indexOf(`\n## ${heading}\n`);
  if (start === -1) return "";
  const rest = plan.slice(start + 1);
  const end = rest.indexOf("\n## ", 1);
  return end === -1 ? rest : rest.slice(0, end);
}

describe("the offline planner refining a seeded draft", () => {
  it("starts from the draft in its first request and writes its plan as revision 2", async () => {
    const { port, planner, plan } = await seededPlan();
    expect(planner.requests[0]!.context.seedPlan).toBe(DRAFT);
    expect(plan.revision).toBe(2);
    expect(port.readPlanRevision(1)?.content).toBe(DRAFT);
    expect(port.listEvents()[0]).toMatchObject({ subtype: "init", seed_plan: true });
  });

  it("keeps the draft's steps verbatim, in order, under the draft's own headings", async () => {
    const { plan } = await seededPlan();
    const kept = section(plan.content, "Steps from your draft");
    expect(kept).not.toBe("");
    let at = 0;
    for (const step of STEPS) {
      const found = kept.indexOf(`\n${step}\n`, at);
      expect(found, step).toBeGreaterThan(-1);
      at = found;
    }
    expect(kept.indexOf("### Approach")).toBeLessThan(kept.indexOf(STEPS[0]!));
    expect(kept.indexOf("### Rollout")).toBeGreaterThan(kept.indexOf(STEPS[2]!));
    expect(kept.indexOf("### Rollout")).toBeLessThan(kept.indexOf(STEPS[3]!));
    expect(kept).not.toContain("not a step");
    expect(plan.content).toMatch(/^# Plan: GitHub sign-in\n/);
    expect(plan.content).toContain("Refined from your draft by the **offline planner**");
  });

  it("adds the evidence: files to change with lines, tests, verification and the path the repository lacks", async () => {
    const { plan } = await seededPlan();
    const content = plan.content;
    const changes = section(content, "Files to change");
    expect(changes).toContain("`src/db/users.js`");
    expect(changes).toMatch(/`src\/routes\/login\.js` — .*\(lines? \d+/);
    expect(section(content, "Files to change")).toMatch(/### Tests\n- `test\/login\.test\.js`/);
    expect(section(content, "Verification")).toContain("- `npm test` — package.json script");
    expect(section(content, "Open questions")).toContain(
      "Your draft names `src/config/flags.js`, which is not in the repository",
    );
    // The ranked files still come first: no repository path before the files to change, and
    // the draft's steps come after them.
    const repository = new Set(Object.keys(FILES));
    const before = content.slice(0, content.indexOf("## Files to change"));
    expect(filesNamedByPlan(before, repository)).toEqual([]);
    expect(content.indexOf("## Steps from your draft")).toBeGreaterThan(
      content.indexOf("## Files to change"),
    );
  });

  it("keeps the draft's steps after a rejection, and plans the same way every time", async () => {
    const { port, planner, plan } = await seededPlan();
    port.decide(port.pendingWait()!.tool_use_id, {
      kind: "reject",
      feedback: "Also end the GitHub session on logout.",
      comments: [],
    });
    expect(await runUntilStopped(port, { planner })).toEqual({ next: "wait" });
    const revised = port.readPlan()!;
    expect(revised.revision).toBe(3);
    for (const step of STEPS) expect(revised.content).toContain(`\n${step}\n`);
    expect(revised.content).toContain("Also end the GitHub session on logout.");
    expect((await seededPlan()).plan.content).toBe(plan.content);
  });

  it("keeps a draft without a list as quoted text, and never treats it as a pattern", async () => {
    const hostile = "Make the login fast (((a+)+)+$ [z-a] \\\nand keep `*` globs out";
    const { plan } = await seededPlan(hostile, "Refine this plan");
    const kept = section(plan.content, "Steps from your draft");
    expect(kept).toContain("Your draft has no list of steps");
    expect(kept).toContain("> Make the login fast (((a+)+)+$ [z-a] \\");
    expect(kept).toContain("> and keep `*` globs out");
  });
});

describe("draftOutline", () => {
  it("reads headings, list lines as written (indentation and markers kept) and skips code blocks", () => {
    const outline = draftOutline(
      "Intro\n# Title #\n\n- a\n  - nested\n~~~\n1. code\n~~~\n## C# notes\n3) third\n#nospace\n",
    );
    expect(outline.title).toBe("Title");
    expect(outline.sections).toEqual([
      { heading: "Title", steps: ["- a", "  - nested"] },
      { heading: "C# notes", steps: ["3) third"] },
    ]);
    expect(outline.dropped).toBe(0);
    expect(draftOutline("no heading here\n\nmore").title).toBe("no heading here");
    expect(draftOutline("").sections).toEqual([]);
  });

  it("counts the steps beyond the cap instead of losing them silently", () => {
    const many = Array.from({ length: 205 }, (_, i) => `- step ${i + 1}`).join("\n");
    const outline = draftOutline(many);
    expect(outline.sections[0]!.steps).toHaveLength(200);
    expect(outline.dropped).toBe(5);
    expect(draftSection(outline)).toContain("(5 more steps of your draft are in revision 1");
  });

  it("reads a pathological line only as far as its first 2,000 characters", () => {
    // What bounds the work is counted, not timed: every line is cut to 2,000 characters (and a
    // draft to 200,000) before any pattern reads it.
    const heading = draftOutline(`#${" #".repeat(100_000)}x\n${"- ".repeat(100_000)}\n`);
    expect(heading.title.endsWith("…")).toBe(true);
    expect(heading.digest.length).toBeLessThanOrEqual(2_000);
    const list = draftOutline(`# Steps\n${"- ".repeat(50_000)}x\n`);
    expect(list.sections[0]?.steps).toHaveLength(1);
    expect(list.sections[0]?.steps[0]?.length).toBeLessThanOrEqual(2_000);
    expect(list.sections[0]?.steps[0]?.endsWith("…")).toBe(true);
  });
});
