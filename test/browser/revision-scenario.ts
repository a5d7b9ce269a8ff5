import type { ScriptedTurn } from "../../src/protocol/index.ts";

/**
 * The greeting-module session the README's review screenshots show, for the scripted planner:
 * a plan, the reviewer's feedback, a second revision, then a remote execution that changes one
 * file the plan did not name. review-revisions.test.ts drives it through the page and asserts
 * what it shows; `npm run screenshots` (scripts/screenshots.ts) photographs the same pages.
 */

export const PLAN_1 = `# Greeting module

## Files
- \`src/greeting.ts\` — export the greeting

## Steps
1. Add \`src/greeting.ts\` exporting "hello".
2. Run the tests.
`;

export const PLAN_2 = `# Greeting module

## Files
- \`src/greeting.ts\` — export the greeting
- \`src/farewell.ts\` — export the farewell

## Steps
1. Add \`src/greeting.ts\` exporting "hello there".
2. Add \`src/farewell.ts\` exporting "goodbye".
3. Run the tests.
`;

export const FEEDBACK = "Also export a farewell, from its own module.";

export const GREETING_PROMPT = "Add a greeting module";
export const GREETING_TITLE = "Greeting module";

/** A scripted `Write` of one file. */
export const write = (id: string, file_path: string, content: string): ScriptedTurn => ({
  content: [{ type: "tool_use", id, name: "Write", input: { file_path, content } }],
});

/** A scripted ExitPlanMode: the plan is ready for review. */
export const exitPlanMode = (id: string): ScriptedTurn => ({
  content: [{ type: "tool_use", id, name: "ExitPlanMode", input: {} }],
});

/** Plan 1 → (feedback) → plan 2 → (approve) → greeting, farewell and one unplanned file. */
export function greetingScript(): ScriptedTurn[] {
  return [
    write("toolu_plan_1", "$PLAN_PATH", PLAN_1),
    exitPlanMode("toolu_exit_1"),
    write("toolu_plan_2", "$PLAN_PATH", PLAN_2),
    exitPlanMode("toolu_exit_2"),
    write("toolu_greeting", "src/greeting.ts", 'export const greeting = "hello there";\n'),
    write("toolu_farewell", "src/farewell.ts", 'export const farewell = "goodbye";\n'),
    write("toolu_extra", "src/extra.ts", "export const unplanned = true;\n"),
    { content: [{ type: "text", text: "Done: greeting, farewell, and one extra file." }] },
  ];
}
