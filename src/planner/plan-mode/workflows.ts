import { READ_ONLY_TOOLS, TASK_TOOL, type Variant } from "../../protocol/index.ts";

/**
 * The planning workflows, one per variant: the middle of the full plan-mode reminder (custom
 * planning instructions replace it; the read-only preamble and the ExitPlanMode footer stay).
 *
 * - `simple`: read, clarify, decide, write the plan.
 * - `visual`: the same, and the plan carries a mermaid diagram where the change has structure.
 * - `deep`: parallel read-only explorer subagents, a synthesis, the plan, one critique
 *   subagent on it, a revision (after Claude Code's plan mode v2 phases and Ultraplan's
 *   deepest variant).
 */

const READING_TOOLS = `${READ_ONLY_TOOLS.slice(0, -1).join(", ")} and ${READ_ONLY_TOOLS.at(-1)}`;

const CLARIFY = `If a requirement is genuinely ambiguous and the answer changes the plan, ask with AskUserQuestion: 1–4 questions, each with 2–4 distinct options and a header of at most 12 characters. Do not add an "Other" option; the user can always answer in their own words.`;

const PLAN_CONTENTS = `   - Context: why the change is needed and what it must achieve.
   - Files to change: each path with line references, what changes and why; new files marked as new.
   - Existing code to reuse, with paths.
   - Steps, in order.
   - Verification: the commands found in the repository (package scripts, Makefile targets, pytest, go test, cargo test) and what to check by hand.
   - Open questions, if any remain.`;

/** What `visual` adds to the plan's contents. */
export const DIAGRAM_GUIDANCE = `   - A diagram, only where the change has structure: when the files or steps depend on each other in an order that matters, or data flows between components, add one \`\`\`mermaid block (a flowchart of only the nodes that matter — the files, functions or services the change touches — with arrows for dependency order or data flow; about 12 nodes at most). When the change is linear — one file, or steps that simply follow each other — add no diagram.`;

/** The default planning workflow (`simple`). */
export const DEFAULT_WORKFLOW = `## Workflow
1. Understand the request. Read the relevant code with ${READING_TOOLS}; look for existing functions, utilities and patterns to reuse. Start with the manifests (package.json, pyproject.toml, Cargo.toml, go.mod, Makefile) and the README.
2. Clarify only what you cannot find out by reading. ${CLARIFY}
3. Decide on one recommended approach. Do not list alternatives you would not choose.
4. Write the plan to the plan file, and revise it as you learn. It should say:
${PLAN_CONTENTS}
5. Keep the plan concise and reviewable: a reviewer should be able to read all of it.`;

/** The `visual` workflow: the default one with a diagram where the change has structure. */
export const VISUAL_WORKFLOW = DEFAULT_WORKFLOW.replace(
  PLAN_CONTENTS,
  `${PLAN_CONTENTS}\n${DIAGRAM_GUIDANCE}`,
);

/**
 * The `deep` workflow. `planPath` is named in the critique step: the critique subagent sees
 * nothing of this conversation, so its prompt must carry the path.
 *
 * @example
 * deepWorkflow("/plans/bold-eagle.md") // "## Workflow (deep: …)\n1. Explore in parallel. …"
 */
export function deepWorkflow(planPath: string): string {
  return `## Workflow (deep: parallel explorers, a synthesis, a critique)
You have the ${TASK_TOOL} tool: each ${TASK_TOOL} call starts a read-only subagent with a conversation of its own (${READING_TOOLS} only: it cannot write, ask the user or start subagents) and returns its final report as the tool result. Several ${TASK_TOOL} calls in one message run at the same time. A subagent sees nothing of this conversation: its prompt must say everything it needs — the request, the paths and names you already know, and what to report.
1. Explore in parallel. In ONE message, launch three ${TASK_TOOL} calls:
   - "Existing code and architecture": how the parts the request touches work today, and the existing functions, utilities and patterns to reuse (with paths).
   - "Files to change": each file the change touches, with line references, what changes and why, and the new files to add.
   - "Risks, edge cases and tests": what could break, the edge cases, the tests that cover the area and the commands that run them (package scripts, Makefile targets, pytest, go test, cargo test).
   Read a few key files yourself first only if you need them to write good prompts.
2. Synthesise. Reconcile the three reports; read the key files they name to check the claims the plan will rest on. ${CLARIFY}
3. Write the plan to the plan file. It should say:
${PLAN_CONTENTS}
4. Critique. Launch ONE ${TASK_TOOL} whose prompt asks it to read the plan file ${planPath} and the code the plan names, and to report missing steps, risks with their mitigations, and assumptions the plan makes without having verified them.
5. Revise the plan file for every point of the critique you agree with; say in the plan why you set aside any you do not.
6. Keep the plan concise and reviewable: a reviewer should be able to read all of it.`;
}

/**
 * The workflow section of a variant.
 *
 * @example
 * workflowFor("visual", "/plans/bold-eagle.md") === VISUAL_WORKFLOW // true
 */
export function workflowFor(variant: Variant, planPath: string): string {
  switch (variant) {
    case "simple":
      return DEFAULT_WORKFLOW;
    case "visual":
      return VISUAL_WORKFLOW;
    case "deep":
      return deepWorkflow(planPath);
  }
}
